"""Deleting runs removes only the computed artifacts no remaining run uses: never shipped reference artifacts,
never imported ones, never another session's results."""
import gzip
import json

import duckdb
import pytest

from backend.store import count_runs, delete_runs, list_runs, preview_delete, reopen, RunFilter
from backend.store.artifacts import artifact_key
from backend.store.origin import COMPUTED, IMPORTED, REFERENCE
from backend.store.reference import export_reference, import_artifacts, read_reference, reference_dir
from tests.store.lifecycle import MODEL, THEIRS, Config, build, counts, in_scope, keys_by_origin, nag_style


def test_deleting_one_run_keeps_the_reference_set_and_the_other_sessions_results(fresh_store):
    shipped = {row["key"] for path in reference_dir().glob("*.jsonl.gz") for row in read_reference(path)}
    scene = build("me")
    before, keys = counts(), keys_by_origin()
    assert keys[REFERENCE] == shipped and before[REFERENCE] == len(shipped) > 200
    assert before[COMPUTED] == 1 + 1 + 5 + 1  # their run, their NAG-style rank and its 5 documents, mine

    plan = preview_delete([scene.mine], session="me")
    assert counts() == before  # a preview deletes nothing
    done = delete_runs([scene.mine], session="me")
    assert done == plan
    assert done.runs == (scene.mine,) and done.artifacts == (scene.mine_key,) and done.by_feature == {"lifecycle": 1}

    after = keys_by_origin()
    assert after[REFERENCE] == shipped  # every shipped artifact kept
    assert after[COMPUTED] == keys[COMPUTED] - {scene.mine_key}  # only my own result went
    assert counts() == {**before, COMPUTED: before[COMPUTED] - 1}
    for run_id in (*scene.theirs, scene.shared, *scene.on_reference):
        reopen(run_id)  # every remaining run still opens its result


def test_a_result_another_run_uses_stays_until_its_last_run_goes(fresh_store):
    scene = build("me")
    their_run, _ = scene.theirs
    shared_key = list_runs().set_index("run_id").loc[scene.shared, "artifact_key"]
    assert delete_runs([their_run]).artifacts == ()  # my cache hit still uses it
    assert shared_key in keys_by_origin()[COMPUTED]
    assert delete_runs([scene.shared]).artifacts == (shared_key,)


def test_deleting_hits_on_shipped_artifacts_removes_no_artifact(fresh_store):
    scene = build("me")
    before = counts()
    done = delete_runs(list(scene.on_reference))
    assert len(done.runs) == 3 and done.artifacts == () and done.kept == 3
    assert counts() == before


def test_imported_artifacts_are_never_removed(fresh_store, tmp_path, monkeypatch):
    own = tmp_path / "own.duckdb"
    monkeypatch.setenv("DASH_STORE", str(own))
    in_scope("elsewhere", lambda: [nag_style(1, start=50)])
    export_reference([MODEL.fingerprint], tmp_path / "mine" / "results.jsonl.gz")
    monkeypatch.setenv("DASH_STORE", str(fresh_store))
    assert import_artifacts(tmp_path / "mine").imported == 2
    imported = keys_by_origin()[IMPORTED]
    served = nag_style(1, start=50)  # served from the imported artifact: a run that uses it
    assert served.cached and served.key in imported
    assert delete_runs([served.run_id]).artifacts == ()
    assert keys_by_origin()[IMPORTED] == imported


def test_one_computation_reading_many_artifacts_is_one_run(fresh_store):
    first = nag_style(40)
    assert count_runs() == 1 and len(list_runs()) == 1
    assert counts()[COMPUTED] == 41
    second = nag_style(30, start=20)  # reads 20 documents of the first, computes 10 new ones
    assert count_runs() == 2
    done = delete_runs([first.run_id])
    assert len(done.artifacts) == 1 + 20  # its rank and the documents only it used
    assert set(done.artifacts).isdisjoint(_uses(second.run_id))
    assert delete_runs([second.run_id]).by_feature == {"lifecycle": 1 + 30}
    assert counts()[COMPUTED] == 0


def test_nested_cached_calls_are_one_run_and_the_outer_run_keeps_them(fresh_store):
    from backend.store import cached

    def outer():
        return [cached("lifecycle", "part", MODEL, Config(i), lambda i=i: i).value for i in range(4)]

    done = cached("lifecycle", "whole", MODEL, Config(0), outer)
    assert done.run_id and count_runs() == 1 and counts()[COMPUTED] == 5
    assert len(delete_runs([done.run_id]).artifacts) == 5


def test_unknown_or_other_sessions_runs_are_reported_missing(fresh_store):
    scene = build("me")
    plan = preview_delete([scene.theirs[0], "nope"], session="me")
    assert plan.runs == () and plan.missing == (scene.theirs[0], "nope")
    assert delete_runs([scene.theirs[0]], session="me").runs == ()
    assert count_runs(RunFilter(session=THEIRS)) == 2


def test_a_store_from_before_origins_is_migrated(tmp_path, monkeypatch):
    """Old rows whose key is in the reference set become reference; every other old row computed."""
    ref_row = {"feature": "x", "action": "y", "fingerprint": "f", "params": "{}", "code_version": "1",
               "payload": "1", "compute_seconds": 1.0}
    ref_row["key"] = artifact_key("x", "y", "f", "{}", "1")
    (tmp_path / "ref").mkdir()
    with gzip.open(tmp_path / "ref" / "r.jsonl.gz", "wt") as f:
        f.write(json.dumps(ref_row) + "\n")
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))  # the artifacts table as the previous version wrote it
    con.execute("CREATE TABLE artifacts (key VARCHAR PRIMARY KEY, feature VARCHAR NOT NULL, action VARCHAR NOT NULL,"
                " fingerprint VARCHAR NOT NULL, params VARCHAR NOT NULL, code_version VARCHAR NOT NULL,"
                " payload VARCHAR NOT NULL, compute_seconds DOUBLE NOT NULL,"
                " created TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    for key in (ref_row["key"], "computed-here"):
        con.execute("INSERT INTO artifacts VALUES (?, 'x', 'y', 'f', '{}', '1', '1', 1.0, DEFAULT)", [key])
    con.close()
    monkeypatch.setenv("DASH_REFERENCE_DIR", str(tmp_path / "ref"))
    monkeypatch.setenv("DASH_STORE", str(path))
    assert keys_by_origin() == {REFERENCE: {ref_row["key"]}, COMPUTED: {"computed-here"}}


@pytest.fixture(autouse=True)
def _real_reference_dir(monkeypatch):
    monkeypatch.delenv("DASH_REFERENCE_DIR", raising=False)


def _uses(run_id: str) -> set[str]:
    from backend.store.db import connect

    with connect() as con:
        rows = con.execute("SELECT artifact_key FROM runs WHERE run_id = ? UNION "
                           "SELECT artifact_key FROM run_artifacts WHERE run_id = ?", [run_id, run_id]).fetchall()
    return {key for (key,) in rows}
