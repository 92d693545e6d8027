"""The stored decoding benchmark is shown only for the model it was measured on."""
import json

from backend.decoding.benchmark import stored_benchmark


def test_only_the_measured_model_gets_the_stored_benchmark(tmp_path):
    path = tmp_path / "decoding_accuracy.json"
    row = {"label": "ASMC x4", "strategy": "asmc", "budget": 4, "accuracy": 0.5, "mean_tokens": 120.0}
    path.write_text(json.dumps({"model": "M", "fingerprint": "abc", "sets": {"handwritten": 60}, "budgets": [2, 4],
                                "max_new_tokens": 96, "summary": [row]}))
    found = stored_benchmark("abc", path)
    assert found is not None and found.summary == (row,) and found.budgets == (2, 4) and found.sets == {"handwritten": 60}
    assert found.mh_budgets == (2, 4), "MH shares the budgets unless the run says otherwise"
    assert stored_benchmark("other", path) is None


def test_mh_budgets_of_a_run_that_left_its_costliest_budget_out(tmp_path):
    path = tmp_path / "decoding_accuracy.json"
    path.write_text(json.dumps({"fingerprint": "abc", "budgets": [2, 4, 8, 16], "mh_budgets": [2, 4, 8],
                                "summary": [{"label": "Greedy"}]}))
    found = stored_benchmark("abc", path)
    assert found.budgets == (2, 4, 8, 16) and found.mh_budgets == (2, 4, 8)


def test_a_missing_or_broken_file_is_no_benchmark(tmp_path):
    assert stored_benchmark("abc", tmp_path / "absent.json") is None
    (tmp_path / "broken.json").write_text("{not json")
    assert stored_benchmark("abc", tmp_path / "broken.json") is None
    (tmp_path / "list.json").write_text("[1, 2]")
    assert stored_benchmark("abc", tmp_path / "list.json") is None
