"""The race against transformers.generate (bench/speed_vs_generate.py): its rows, and the report section they feed;
the sampling race's speculative row (with its acceptance rate) runs where the model allows it, and a sliding-window
model leaves it out instead of failing."""
import json

import pytest

from backend.models import load
from bench import report
from bench.speed_vs_generate import first_divergence, greedy_batch1, sampling_x8

SPECULATIVE = "kernel speculative (int8 draft)"


def test_first_divergence_is_where_two_runs_part():
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 4], [1, 2, 3]) == 2
    assert first_divergence([1, 2], [1, 2, 3]) == 2  # one stopped early: the rest of the other is not its text
    assert first_divergence([], [7]) == 0


def test_greedy_rows_race_transformers_peers_and_render(tmp_path, monkeypatch):
    from backend.models import speculative

    monkeypatch.setattr(speculative, "MIN_NEW_TOKENS", 1)  # the tiny model's runs are short
    handle = load("tiny-llama")
    prompts = [handle.tokenizer(p, return_tensors="pt")["input_ids"] for p in ("Once upon a time", "The cat")]
    greedy = greedy_batch1(handle, prompts, [0], tokens=12, reps=2)
    rows = greedy["contestants"]
    assert {"generate prompt lookup", "generate assisted by int8", "kernel checked chunks"} <= set(rows)
    for name in ("generate prompt lookup", "generate assisted by int8", "kernel", "kernel checked chunks"):
        assert rows[name]["prompts_identical_to_generate"] == 2, name  # fp32 rows write generate's tokens
        assert rows[name]["first_divergence"] == [None, None]
    chunks = rows["kernel checked chunks"]
    kept = sum(s["kept"] for s in chunks["by_source"].values())
    assert chunks["acceptance"] == kept / sum(s["guessed"] for s in chunks["by_source"].values())
    assert len(chunks["tokens_per_s_reps"]) == 2 and greedy["best_peer"] in rows
    assert rows["kernel int8"]["bandwidth_bound_tokens_per_s"] > rows["kernel"]["bandwidth_bound_tokens_per_s"]

    result = {"model": "tiny", "dtype": "torch.float32", "tokens": 12, "reps": 2, "machine": {"cores": 2},
              "load_average_start": [3.5, 0, 0], "load_average_end": [4.5, 0, 0],
              "command": ".venv/bin/python bench/kernel.py --against generate --model tiny",
              "by_threads": {"1": {"greedy_batch1": greedy, "load_average": [4.0, 0, 0], "sampling_x8": {
                  "rows": 8, "new_tokens_per_row": 12, "contestants": {
                      n: {"tokens_per_s": 10.0, "tokens_per_s_reps": [8.0, 12.0], "speed_vs_generate": 1.0}
                      for n in ("generate", "kernel", "kernel int8")}}}},
              "drift": {"prompts": 2, "new_tokens": 12, "torch_threads": 1, "checked_chunks_identical_prompts": 2,
                        **{p: {"teacher_forced_top1_agreement": 1.0, "max_abs_logit_diff": 0.1,
                               "prompts_fully_identical": 2, "median_identical_prefix_tokens": 12}
                           for p in ("int8", "bf16")}}}
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "speed_vs_generate_tiny.json").write_text(json.dumps(result))
    text = report.render(tmp_path)
    assert "| generate prompt lookup |" in text and "of guesses kept" in text
    assert "8.0–12.0" in text  # reps 50 % apart: a range, not one figure
    assert "Load average 3.5 at the start, 4.5 at the end" in text and "of its bandwidth bound" in text


@pytest.mark.parametrize("arch, speculates", [("llama", True), ("gemma3", False)])
def test_the_sampling_race_has_the_speculative_row_where_the_model_allows(arch, speculates):
    handle = load(f"tiny-{arch}")
    prompt = handle.tokenizer("Once upon a time", return_tensors="pt")["input_ids"]
    out = sampling_x8(handle, prompt, tokens=6, reps=1, rows=3)
    rows = out["contestants"]
    assert {"generate", "kernel", "kernel int8"} <= set(rows) and rows["generate"]["speed_vs_generate"] == 1.0
    assert (SPECULATIVE in rows) == speculates
    if speculates:
        assert 0.0 <= rows[SPECULATIVE]["acceptance_rate"] <= 1.0 and rows[SPECULATIVE]["tokens_per_s"] > 0
