"""Issue 46 §4 #8: a store that cannot be written (a full disk) loses nothing and takes nothing down: the computed
result is still printed, with one line saying it was not cached (exit 0); a bulk write rolls back whole.

The writes fail for real, in DuckDB: the CLI runs in a child process whose file-size limit (RLIMIT_FSIZE) lets no
file grow past 512 bytes, so the commit's WAL write fails as it does on a full disk ("Failed to commit: Could not write
file ... .wal"). No mount, no root."""
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 512  # smaller than any commit's WAL


def _limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _cli(store: Path, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DASH_STORE=str(store), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "backend", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=_limited)


def test_a_result_is_printed_and_a_bulk_write_rolls_back_when_the_store_cannot_grow(tmp_path, monkeypatch):
    from backend.store.db import release
    from backend.watermark import identities

    store = tmp_path / "store.duckdb"
    monkeypatch.setenv("DASH_STORE", str(store))
    identities.add_model("m")
    release()  # the child processes open the file
    bulk = _cli(store, "watermark", "identity", "bulk-users", "--model", "1", "--count", "20000")
    assert bulk.returncode == 2 and "Traceback" not in bulk.stderr
    assert [line for line in bulk.stderr.splitlines() if line.startswith("error:")][0].count("nothing of that write")
    assert identities.summary_frame()["users"].tolist() == [0]  # all 20,000 rolled back, not a part of them
    release()
    bounds = _cli(store, "fp8", "bounds", "--model", "tiny-llama", "--texts", "1", "--max-tokens", "8", "--json")
    assert bounds.returncode == 0 and "Traceback" not in bounds.stderr, bounds.stderr[-2000:]
    assert '"layers"' in bounds.stdout and "not cached" in bounds.stdout
    warnings = [line for line in bounds.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "not cached" in warnings[0]
