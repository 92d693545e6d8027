"""bench/speed_vs_generate.py's sampling race on the tiny models: the speculative row (with its acceptance rate)
runs where the model allows it, and a sliding-window model leaves it out instead of failing."""
import pytest

from backend.models import load
from bench.speed_vs_generate import sampling_x8

SPECULATIVE = "kernel speculative (int8 draft)"


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
