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
    assert found.commands == (".venv/bin/python bench/decoding_accuracy.py",), "no command stored: the script's"


def test_a_merged_result_names_every_run_that_made_it(tmp_path):
    path = tmp_path / "decoding_accuracy.json"
    path.write_text(json.dumps({"fingerprint": "abc", "command": "second", "commands": ["first", "second"],
                                "summary": [{"label": "Greedy"}]}))
    assert stored_benchmark("abc", path).commands == ("first", "second")


def test_a_missing_or_broken_file_is_no_benchmark(tmp_path):
    assert stored_benchmark("abc", tmp_path / "absent.json") is None
    (tmp_path / "broken.json").write_text("{not json")
    assert stored_benchmark("abc", tmp_path / "broken.json") is None
    (tmp_path / "list.json").write_text("[1, 2]")
    assert stored_benchmark("abc", tmp_path / "list.json") is None


def test_a_folder_of_results_gives_each_model_its_own(tmp_path):
    for name, fingerprint in (("decoding_accuracy.json", "abc"), ("decoding_accuracy_other.json", "def")):
        (tmp_path / name).write_text(json.dumps({"model": name, "fingerprint": fingerprint,
                                                 "summary": [{"label": "Greedy"}]}))
    (tmp_path / "decoding.json").write_text(json.dumps({"fingerprint": "ghi", "summary": [{"label": "Greedy"}]}))
    assert stored_benchmark("abc", tmp_path).model == "decoding_accuracy.json"
    assert stored_benchmark("def", tmp_path).model == "decoding_accuracy_other.json"
    assert stored_benchmark("ghi", tmp_path) is None, "only decoding_accuracy*.json files are benchmarks"


def test_the_shipped_results_are_found_by_their_fingerprint():
    from backend.results import results_dir

    shipped = [json.loads(p.read_text()) for p in sorted(results_dir().glob("decoding_accuracy*.json"))]
    assert shipped, "the reasoning model's benchmark is committed"
    for data in shipped:
        assert stored_benchmark(data["fingerprint"]).fingerprint == data["fingerprint"]


def _bench_module():
    """bench/decoding_accuracy.py, loaded from its path (bench/ is scripts, not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "decoding_accuracy.py"
    spec = importlib.util.spec_from_file_location("decoding_accuracy_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(rows, comparisons, **extra):
    return {"model_id": "m", "fingerprint": "f", "sets": {"heldout": 2}, "heldout_family": "broad",
            "max_new_tokens": 96, "alpha": 4.0, "budgets": [2], "mh_budgets": [2], "command": "first",
            "provenance": "computed", "wall_seconds": 1.0, "settings": {r["label"]: {} for r in rows},
            "summary": rows, "comparisons": comparisons, **extra}


def test_merging_adds_a_setting_and_replaces_the_rerun_ones():
    bench = _bench_module()
    row = lambda label, strategy, budget, acc: {"label": label, "strategy": strategy, "budget": budget,
                                                "accuracy": acc}
    versus = lambda label, against: {"label": label, "against": against, "mcnemar_p": 0.5}
    earlier = _result([row("Greedy", "greedy", 1, 0.4), row("MH power sampling x2", "mh", 2, 0.3),
                       row("ASMC x2", "asmc", 2, 0.45)],
                      [versus("MH power sampling x2", "Greedy"), versus("ASMC x2", "Greedy")])
    added = _result([row("Greedy", "greedy", 1, 0.4), row("MH power sampling x16", "mh", 16, 0.5)],
                    [versus("MH power sampling x16", "Greedy")], command="second", mh_budgets=[16])
    out = bench.merged(earlier, added)
    assert [r["label"] for r in out["summary"]] == ["Greedy", "MH power sampling x2", "MH power sampling x16",
                                                    "ASMC x2"]
    assert [c["label"] for c in out["comparisons"]] == ["MH power sampling x2", "MH power sampling x16", "ASMC x2"]
    assert out["mh_budgets"] == [2, 16] and out["commands"] == ["first", "second"]
    import pytest

    with pytest.raises(SystemExit, match="fingerprint"):
        bench.merged(earlier, {**added, "fingerprint": "other"})


def test_a_run_without_the_baselines_compares_nothing():
    """A shard of MH alone has no greedy or sampling rows to pair with: no comparison, not an empty one."""
    from types import SimpleNamespace

    bench = _bench_module()
    runs = [SimpleNamespace(label=label, problem_id=p, correct=ok) for label, p, ok in
            [("MH power sampling x8", "a", True), ("MH power sampling x8", "b", False),
             ("Greedy", "a", False), ("Greedy", "b", False)]]
    mh = {"label": "MH power sampling x8", "strategy": "mh"}
    assert bench.comparisons(runs[:2], [mh]) == []
    [versus_greedy] = bench.comparisons(runs, [mh, {"label": "Greedy", "strategy": "greedy"}])
    assert versus_greedy["against"] == "Greedy" and versus_greedy["only_label_right"] == 1
    assert versus_greedy["accuracy_difference"] == 0.5
