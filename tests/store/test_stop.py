"""A stopped computation (Ctrl-C, the Stop button, a closed tab) stores nothing partial and leaves one run row
marked stopped; a failure leaves no row; complete inner results it used stay, recorded as its uses."""
from dataclasses import dataclass

import duckdb
import pytest

from backend.errors import UserError
from backend.progress import Stopped
from backend.store import ModelRef, cached, count_runs, list_runs, reopen
from backend.store.db import release
from backend.store.runs import RunFilter

MODEL = ModelRef("tiny", "f00d")


@dataclass(frozen=True)
class Config:
    n: int


def _artifacts(store) -> list[tuple[str, str]]:
    release()  # this process's open connection: the file is read as another process would
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("SELECT feature, action FROM artifacts ORDER BY action").fetchall()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, Stopped])
def test_a_stopped_computation_stores_nothing_and_is_listed_as_stopped(fresh_store, stop):
    def compute():
        raise stop()

    with pytest.raises(stop):
        cached("demo", "long", MODEL, Config(1), compute)
    assert _artifacts(fresh_store) == []
    runs = list_runs()
    assert len(runs) == 1 and runs.loc[0, "status"] == "stopped" and runs.loc[0, "artifact_key"] == ""
    assert count_runs() == 1 and count_runs(RunFilter(status="done")) == 0
    with pytest.raises(UserError, match="stopped by its user"):
        reopen(runs.loc[0, "run_id"])
    # the same request afterwards computes and stores as usual
    done = cached("demo", "long", MODEL, Config(1), lambda: 7)
    assert done.value == 7 and not done.cached and count_runs(RunFilter(status="done")) == 1


def test_a_failure_is_not_a_stop(fresh_store):
    def compute():
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        cached("demo", "long", MODEL, Config(2), compute)
    assert _artifacts(fresh_store) == [] and count_runs() == 0


def test_complete_inner_results_stay_as_the_stopped_runs_uses(fresh_store):
    def outer():
        cached("demo", "inner", MODEL, Config(3), lambda: [1, 2, 3])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cached("demo", "outer", MODEL, Config(3), outer)
    assert _artifacts(fresh_store) == [("demo", "inner")], "the finished inner result is whole; the outer is absent"
    runs = list_runs()
    assert list(runs["status"]) == ["stopped"]
    release()
    with duckdb.connect(str(fresh_store), read_only=True) as con:
        uses = con.execute("SELECT count(*) FROM run_artifacts WHERE run_id = ?", [runs.loc[0, "run_id"]]).fetchone()
    assert uses[0] == 1
