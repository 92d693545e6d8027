"""`python -m backend runs delete` and `store stats --json` on a store with the shipped set and another session's
results."""
import json

from backend.__main__ import main as cli
from backend.store.origin import COMPUTED, IMPORTED, REFERENCE
from tests.store.lifecycle import build


def _json(capsys, *argv) -> dict:
    assert cli(["--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_runs_delete_keeps_reference_and_other_sessions_artifacts(fresh_store, capsys):
    scene = build("me")
    before = _json(capsys, "store", "stats")
    assert before["by_origin"][REFERENCE] > 200 and before["by_origin"][IMPORTED] == 0
    assert before["runs"] == 2 + 1 + 1 + 3  # theirs, my computed one, my hit on theirs, my hits on shipped ones

    preview = _json(capsys, "runs", "delete", "--run-id", scene.mine, "--dry-run")
    assert _json(capsys, "store", "stats") == before
    done = _json(capsys, "runs", "delete", "--run-id", scene.mine)
    assert done == preview == {"runs_deleted": [scene.mine], "missing": [], "artifacts_removed": 1,
                               "artifacts_removed_by_feature": {"lifecycle": 1}, "artifacts_kept": 0}

    after = _json(capsys, "store", "stats")
    assert after["by_origin"] == {**before["by_origin"], COMPUTED: before["by_origin"][COMPUTED] - 1}
    assert after["runs"] == before["runs"] - 1
    assert {f: n for f, n in after["by_feature"].items() if f != "lifecycle"} == \
        {f: n for f, n in before["by_feature"].items() if f != "lifecycle"}


def test_several_run_ids_and_an_unknown_one(fresh_store, capsys):
    scene = build("me")
    before = _json(capsys, "store", "stats")
    assert cli(["runs", "delete", "--run-id", scene.mine, "--run-id", "no-such-run"]) == 2
    assert "no-such-run" in capsys.readouterr().err
    assert _json(capsys, "store", "stats") == before  # nothing deleted
    done = _json(capsys, "runs", "delete", "--run-id", scene.mine, "--run-id", scene.shared,
                 "--run-id", *scene.on_reference[:1])
    assert len(done["runs_deleted"]) == 3 and done["artifacts_removed"] == 1  # only my own computed result
    assert _json(capsys, "store", "stats")["by_origin"][REFERENCE] == before["by_origin"][REFERENCE]


def test_store_import_marks_a_users_files_imported_and_runs_delete_keeps_them(fresh_store, tmp_path, monkeypatch,
                                                                              capsys):
    from backend.store.reference import export_reference
    from tests.store.lifecycle import MODEL, in_scope, nag_style

    monkeypatch.setenv("DASH_STORE", str(tmp_path / "elsewhere.duckdb"))
    in_scope("elsewhere", lambda: nag_style(3))
    export_reference([MODEL.fingerprint], tmp_path / "mine" / "results.jsonl.gz")
    monkeypatch.setenv("DASH_STORE", str(fresh_store))
    assert _json(capsys, "store", "import", "--directory", str(tmp_path / "mine"))["imported"] == 4
    served = nag_style(3)
    assert served.cached
    assert _json(capsys, "runs", "delete", "--run-id", served.run_id)["artifacts_removed"] == 0
    assert _json(capsys, "store", "stats")["by_origin"] == {REFERENCE: 0, COMPUTED: 0, IMPORTED: 4}
    assert cli(["store", "import", "--directory", str(tmp_path / "missing")]) == 2
