"""Every verb's code version as another interpreter derives it: its own imports, another hash seed. A version that
differed between processes with no code edited would make every stored result a miss in the next process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SCRIPT = ("import json; from backend.verbs import all_verbs; "
           "print(json.dumps({f'{v.feature} {v.name}': v.code_version for v in all_verbs()}))")


@cache
def _fresh_versions() -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "1"}  # fixed; the test process's own seed is random
    out = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.splitlines()[-1])


def versions_in_a_fresh_process(feature: str) -> dict[str, str]:
    """{verb name: code version} of `feature`'s verbs, derived in a new interpreter."""
    prefix = f"{feature} "
    return {name[len(prefix):]: version for name, version in _fresh_versions().items() if name.startswith(prefix)}
