"""Ctrl-C in `python -m backend`: exit 130, a one-line message, nothing partial stored, the run listed as stopped,
and the model usable by the next command (its lock released)."""
import duckdb

from backend.__main__ import main
from backend.models import incremental


def test_ctrl_c_mid_decoding_exits_130_and_stores_nothing(fresh_store, monkeypatch, capsys):
    real_step = incremental.IncrementalDecoder.step
    calls = []

    def interrupted_step(self, next_tokens):
        calls.append(1)
        if len(calls) == 2:  # the user presses Ctrl-C in the middle of the token loop
            raise KeyboardInterrupt
        return real_step(self, next_tokens)

    monkeypatch.setattr(incremental.IncrementalDecoder, "step", interrupted_step)
    argv = ["decode", "run", "--model", "tiny-llama", "--strategy", "greedy", "--prompt", "Hi",
            "--max-new-tokens", "4", "--json"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("stopped: nothing partial was stored") and "Traceback" not in err
    with duckdb.connect(str(fresh_store), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM artifacts WHERE feature = 'decoding'").fetchone()[0] == 0
        assert con.execute("SELECT status FROM runs").fetchall() == [("stopped",)]
    assert main(argv) == 0, "the model is usable again: the stopped loop released its lock"
    with duckdb.connect(str(fresh_store), read_only=True) as con:
        assert sorted(con.execute("SELECT status FROM runs").fetchall()) == [("done",), ("stopped",)]
