import json
from dataclasses import dataclass

import pandas as pd
import pytest

from backend.errors import UserError
from backend.store import ModelRef, RunFilter, cached, delete_runs, export_result, export_runs, list_runs, reopen


@dataclass(frozen=True)
class Cfg:
    k: int


def _populate():
    for k in range(3):
        cached("alpha", "run", ModelRef("m1", "aa"), Cfg(k), lambda k=k: {"k": k})
    cached("beta", "run", ModelRef("m2", "bb"), Cfg(0), lambda: [1, 2])
    cached("beta", "run", ModelRef("m2", "bb"), Cfg(0), lambda: [1, 2])  # a cache hit is a run too


def test_list_and_filter(fresh_store):
    _populate()
    assert len(list_runs()) == 5
    assert len(list_runs(RunFilter(feature="alpha"))) == 3
    assert len(list_runs(RunFilter(model_id="m2", cached=True))) == 1


def test_reopen_and_delete(fresh_store):
    _populate()
    run_id = list_runs(RunFilter(feature="alpha")).iloc[0]["run_id"]
    record, value = reopen(run_id)
    assert record["feature"] == "alpha" and set(value) == {"k"}
    assert delete_runs([run_id]).runs == (run_id,)
    with pytest.raises(UserError):
        reopen(run_id)
    assert len(list_runs()) == 4


def test_exports_round_trip(fresh_store, tmp_path):
    _populate()
    frame = list_runs()
    csv = export_runs(frame, "csv")
    assert len(pd.read_csv(__import__("io").BytesIO(csv))) == 5
    parquet = tmp_path / "runs.parquet"
    parquet.write_bytes(export_runs(frame, "parquet"))
    assert len(pd.read_parquet(parquet)) == 5
    assert len(json.loads(export_runs(frame, "json"))) == 5
    with pytest.raises(UserError):
        export_runs(frame, "xlsx")
    detail = json.loads(export_result(frame.iloc[0]["run_id"]))
    assert set(detail) == {"run", "result"}
