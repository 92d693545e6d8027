"""No dead code (issue 56 §6): vulture, at its default confidence, finds nothing unused in the product, the benches,
the scripts or the training code, beside vulture_allowlist.py (names used where it cannot see, each with why). The
tests are not scanned: a function only tests call is dead code, unless a user calls it."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("backend", "app", "pages", "bench", "scripts", "training")


def test_vulture_finds_no_dead_code():
    pytest.importorskip("vulture", reason="vulture is not installed (requirements.txt lists it: make install)")
    found = subprocess.run([sys.executable, "-m", "vulture", *SCANNED, "vulture_allowlist.py"], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, ("delete the dead code, or list a name used where vulture cannot see in "
                                   f"vulture_allowlist.py, saying why:\n{found.stdout}{found.stderr}")
