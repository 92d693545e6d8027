"""Steering designs and the translation-quality headline: steered positions, layers allowed, degeneration and the
share of the chrF++ gap recovered."""
import numpy as np
import pytest
import torch

from backend.mt import metrics
from backend.mt.conditions import ConditionConfig, ConditionResult
from backend.mt.experiments import Experiment, ExperimentConfig
from backend.mt.heads import HeadsConfig
from backend.mt.selection import top_heads, top_heads_in
from backend.mt.steering import STEER_LAYERS, STEER_POSITIONS, Intervention, generate_line

PROMPT = list(range(70, 90))


def _forward_logits(handle, intervention: Intervention, steps: int = 3) -> list[torch.Tensor]:
    """Last-position logits of every forward call `generate_line` makes."""
    seen = []
    hook = handle.model.register_forward_hook(lambda m, a, out: seen.append(out.logits[0, -1].detach().clone()))
    try:
        generate_line(handle.model, handle.tokenizer, PROMPT, steps, intervention, max_leading_blank=steps + 1)
    finally:
        hook.remove()
    return seen


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_prompt_once_steers_the_prompt_only_and_every_step_steers_each_step(arch):
    from backend.models import load

    handle = load(f"tiny-{arch}")
    vector = {0: torch.randn(handle.info.hidden_size, generator=torch.Generator().manual_seed(0))}
    every = STEER_POSITIONS.get("every-step").run(Intervention(vectors=(vector,), strength=4.0))
    once = STEER_POSITIONS.get("prompt-once").run(every)
    plain, a, b = (_forward_logits(handle, i) for i in (Intervention(), every, once))
    assert len(a) >= 2 and len(b) >= 2
    torch.testing.assert_close(a[0], b[0])  # both steer the prompt's last position
    assert not torch.allclose(a[0], plain[0])
    if torch.equal(a[0].argmax(), b[0].argmax()):  # same first token: the next step differs only by its steering
        assert not torch.allclose(a[1], b[1])
    assert not torch.allclose(b[1], plain[1])  # the steered prompt position still acts through the cache


def test_layers_allowed_restrict_the_selection_but_not_its_size():
    scores = np.arange(200, dtype=float).reshape(20, 10)  # the best heads are in the last layers
    assert top_heads(scores, 5)[0] == (19, 9)
    first = top_heads_in(scores, 5, STEER_LAYERS.get("first-half").run(20))
    assert len(first) == len(top_heads(scores, 5)) == 10 and all(layer < 10 for layer, _ in first)
    assert first[0] == (9, 9)
    assert set(STEER_LAYERS.get("second-half").run(6)) == {3, 4, 5}
    assert len(top_heads_in(scores, 5, [0])) == 10  # a layer has exactly k heads: all of them
    assert len(top_heads_in(scores, 5, [])) == 0


def test_degeneration_counts_repeated_bigrams():
    assert metrics.repeated_ngram_share("Le chat dort sur le canapé.") == 0.0
    assert metrics.repeated_ngram_share("Le Joue Le Joue") == pytest.approx(1 / 3)
    assert metrics.repeated_ngram_share("Leur Leur Leur Leur") == pytest.approx(2 / 3)
    assert metrics.degeneration(["a b a b", "x y"]) == pytest.approx(1 / 6)


def test_gap_recovered_is_the_share_between_floor_and_ceiling():
    assert metrics.gap_recovered(5.95, 4.69, 16.44) == pytest.approx(0.107, abs=1e-3)  # the SmolLM2 figure
    assert metrics.gap_recovered(16.44, 4.69, 16.44) == 1.0
    assert np.isnan(metrics.gap_recovered(10.0, 5.0, 5.0))


def _result(label, chrf, rate, outputs, **config):
    cfg = ConditionConfig(**config)
    n = len(outputs)
    return ConditionResult(label, cfg, tuple(range(n)), ("s",) * n, ("r",) * n, tuple(outputs), ("fr",) * n,
                           np.zeros(n), chrf, rate, ())


def test_headline_reports_gap_recovered_against_few_shot_and_gap_lost_by_ablation():
    heads = HeadsConfig()
    conditions = (
        _result("instruction-free", 10.0, 0.0, ["the cat"], prompt="instruction-free"),
        _result("steered", 25.0, 0.9, ["le chat le chat"], prompt="instruction-free", steer=(heads,)),
        _result("few-shot", 40.0, 1.0, ["le chat"]),
        _result("instruction", 30.0, 1.0, ["le chat"], prompt="instruction"),
        _result("few-shot − language heads", 16.0, 0.2, ["the cat"], ablate=heads),
        _result("few-shot − random heads #0", 37.0, 0.9, ["le chat"], ablate=heads, random_draw=0),
    )
    head = Experiment("m", "evaluate", ExperimentConfig(), conditions).headline()
    assert head["reference"] == "few-shot"
    assert head["steering"]["gap_recovered"] == pytest.approx(0.5)
    assert head["steering"]["degeneration"] > head["steering"]["reference_degeneration"] == 0.0
    assert head["ablation_selected"]["gap_lost"] == pytest.approx(0.8)
    assert head["ablation_random"]["gap_lost"] == pytest.approx(0.1)
    assert head["ablation_selected"]["rate_drop"] == pytest.approx(0.8)
