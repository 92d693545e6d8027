"""A feature's verbs as this process declares them and the CLI lists them, and every verb's code version as another
interpreter derives it: its own imports, another hash seed. A version that differed between processes with no code
edited would make every stored result a miss in the next process.

The other interpreter runs once per test run (a start costs seconds of imports): its versions are written to the
run's shared folder (tests/support/shared.py) and read by every xdist worker that asks after it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from backend.__main__ import main
from backend.verbs import Verb, all_verbs
from tests.support.shared import built_once

ROOT = Path(__file__).resolve().parents[2]
_SCRIPT = ("import json; from backend.verbs import all_verbs; "
           "print(json.dumps({f'{v.feature} {v.name}': v.code_version for v in all_verbs()}))")


def _derive_in_a_new_interpreter(folder: Path) -> Path:
    env = {**os.environ, "PYTHONHASHSEED": "1"}  # fixed; the test process's own seed is random
    out = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    folder.mkdir(parents=True)
    (folder / "versions.json").write_text(out.stdout.splitlines()[-1])
    return folder


@cache
def _fresh_versions() -> dict[str, str]:
    folder = built_once("verb-versions-in-a-fresh-process", _derive_in_a_new_interpreter)
    return json.loads((folder / "versions.json").read_text())


def versions_in_a_fresh_process(feature: str) -> dict[str, str]:
    """{verb name: code version} of `feature`'s verbs, derived in a new interpreter."""
    prefix = f"{feature} "
    return {name[len(prefix):]: version for name, version in _fresh_versions().items() if name.startswith(prefix)}


def verbs_of(feature: str) -> dict[str, Verb]:
    """{verb name: verb} of `feature`'s registered verbs, as this process declares them."""
    return {v.name: v for v in all_verbs() if v.feature == feature}


def assert_listed_by_the_cli(feature: str, names: set[str], capsys) -> None:
    """`feature` declares exactly the verbs `names`, and `python -m backend verbs --json` lists each of them with
    its config type and derived code version."""
    declared = verbs_of(feature)
    assert set(declared) == names
    assert main(["verbs", "--feature", feature, "--json"]) == 0
    listed = {row["verb"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(listed) == names
    for name, verb in declared.items():
        assert listed[name]["config"] == verb.config.__name__ and listed[name]["feature"] == feature
        assert listed[name]["code_version"] == verb.code_version and len(verb.code_version) == 12
