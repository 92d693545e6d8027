"""Issue 46 §4 #8: a store that cannot be written (a full disk) loses nothing and takes nothing down: the computed
result is still printed, with one line saying it was not cached (exit 0); a bulk write rolls back whole.

The writes fail for real, in DuckDB: the CLI runs in a child process whose file-size limit (RLIMIT_FSIZE) lets no
file grow past 512 bytes, so the commit's WAL write fails as it does on a full disk ("Failed to commit: Could not write
file ... .wal"). No mount, no root. Both commands run in one child (each process start costs seconds of imports),
through the entry point's `main`, each with its own output."""
import json
import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 512  # smaller than any commit's WAL


def _limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


# the commands one after another in the limited child, each one's exit status and output as `python -m backend` gives
CHILD = """
import contextlib, io, json, sys
from backend.__main__ import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    results.append({"returncode": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(results))
"""


@dataclass(frozen=True)
class Command:
    returncode: int
    stdout: str
    stderr: str


def _cli(store: Path, *commands: list[str]) -> list[Command]:
    env = dict(os.environ, DASH_STORE=str(store), HF_HUB_OFFLINE="1")
    child = subprocess.run([sys.executable, "-c", CHILD, json.dumps(commands)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300, preexec_fn=_limited)
    # an exception main let through would end the child here, a traceback printed anywhere shows in its stderr
    assert child.returncode == 0 and "Traceback" not in child.stderr, child.stderr[-2000:]
    return [Command(**result) for result in json.loads(child.stdout)]


def test_a_result_is_printed_and_a_bulk_write_rolls_back_when_the_store_cannot_grow(tmp_path, monkeypatch):
    from backend.store.db import release
    from backend.watermark import identities

    store = tmp_path / "store.duckdb"
    monkeypatch.setenv("DASH_STORE", str(store))
    identities.add_model("m")
    release()  # the child process opens the file
    bounds, bulk = _cli(store, ["fp8", "bounds", "--model", "tiny-llama", "--texts", "1", "--max-tokens", "8",
                                "--json"], ["watermark", "identity", "bulk-users", "--model", "1", "--count", "20000"])
    assert bounds.returncode == 0 and "Traceback" not in bounds.stderr, bounds.stderr[-2000:]
    assert '"layers"' in bounds.stdout and "not cached" in bounds.stdout
    warnings = [line for line in bounds.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "not cached" in warnings[0]
    assert bulk.returncode == 2 and "Traceback" not in bulk.stderr
    assert [line for line in bulk.stderr.splitlines() if line.startswith("error:")][0].count("nothing of that write")
    assert identities.summary_frame()["users"].tolist() == [0]  # all 20,000 rolled back, not a part of them
