"""`python -m backend decode list|run|compare --json` on a tiny model."""
import json

from backend.__main__ import main


def test_list_names_every_strategy(capsys):
    assert main(["decode", "list", "--json"]) == 0
    names = {row["name"] for row in json.loads(capsys.readouterr().out)}
    assert {"greedy", "sampling", "low_temp", "best_of_n", "mh", "asmc"} <= names


def test_run_on_a_problem_and_on_a_prompt(capsys):
    assert main(["decode", "run", "--model", "tiny-llama", "--strategy", "asmc", "--n", "3", "--max-new-tokens", "4",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == "asmc" and out["expected"] is not None and len(out["ess"]) == 1
    assert main(["decode", "run", "--model", "tiny-llama", "--strategy", "greedy", "--prompt", "Hi",
                 "--max-new-tokens", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["correct"] is None


def test_run_on_a_prompt_with_an_expected_answer_is_judged(capsys):
    base = ["decode", "run", "--model", "tiny-llama", "--strategy", "greedy", "--prompt", "What is 5 + 7?",
            "--max-new-tokens", "3", "--json"]
    assert main(base) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    expected = 12 if answer != 12 else 13
    assert main([*base, "--expected", str(expected)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["expected"] == expected and out["correct"] is False and out["answer"] == answer
    assert main(["decode", "run", "--model", "tiny-llama", "--expected", "3"]) == 2
    assert "--expected goes with --prompt" in capsys.readouterr().err


def test_compare_with_budgets_and_an_uploaded_file(tmp_path, capsys):
    upload = tmp_path / "p.jsonl"
    upload.write_text('{"question": "What is 2 + 3?", "answer": 5}\n{"prompt": "What is 4 * 2?", "answer": 8}\n')
    assert main(["decode", "compare", "--model", "tiny-llama", "--strategies", "greedy,best_of_n",
                 "--budgets", "2,3", "--jsonl", str(upload), "--max-new-tokens", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["label"] for s in out["summary"]] == ["Greedy", "Best-of-n x2", "Best-of-n x3"]
    assert len(out["rows"]) == 6 and all(s["p95_latency_s"] >= 0 and "accuracy" in s for s in out["summary"])


def test_bad_input_exits_2_with_a_message(tmp_path, capsys):
    assert main(["decode", "run", "--model", "tiny-llama", "--strategy", "asmc", "--n", "1"]) == 2
    assert "n must be in [2, 128]" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["decode", "compare", "--model", "tiny-llama", "--jsonl", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err
    assert main(["decode", "run", "--model", "tiny-llama", "--alpha", "0"]) == 2
    assert "alpha" in capsys.readouterr().err
