"""One contract per MT registry: every registered variant goes through the same behavioural checks, so a new
attribution method, head type, prompt kind, steering mode or experiment is tested by being registered."""
import dataclasses
import random

import numpy as np
import pytest
import torch

from backend.__main__ import main
from backend.errors import UserError
from backend.models import load
from backend.models.hooks import HeadEdit, Hooks, capture
from backend.mt.attribution import ATTRIBUTIONS, attribute
from backend.mt.conditions import ConditionConfig, label
from backend.mt.data import builtin
from backend.mt.examples import build_example
from backend.mt.experiments import EXPERIMENTS, ExperimentConfig, plan
from backend.mt.prompt_kinds import PROMPT_KINDS
from backend.mt.prompts import HEAD_TYPES, prompt_pair
from backend.mt.steering import STEER_MODES


@pytest.fixture(scope="module")
def handle():
    return load("tiny-llama")


def _lines(prompt: str, prefix: str) -> list[str]:
    return [line[len(prefix):] for line in prompt.split("\n") if line.startswith(prefix)]


@pytest.mark.parametrize("name", ATTRIBUTIONS.names())
def test_attribution_gives_a_finite_head_map(name, handle, tiny_data):
    ex = build_example(handle, prompt_pair(tiny_data, 0, "en", "fr", "language", 2, random.Random(0), "de"), 4)
    delta = ex.clean_heads - ex.corrupt_heads + 0.1
    attr = attribute(handle.model, ex.corrupt_prefix, ex.target, delta, name, steps=32)
    info = handle.info
    assert attr.shape == (info.n_layers, info.n_heads)
    assert np.isfinite(attr).all() and np.abs(attr).max() > 0
    if ATTRIBUTIONS.get(name).complete:  # completeness: the map sums to moving every head at once
        edits = [HeadEdit(layer, tuple(range(info.n_heads)), "add", delta[layer], position=-1)
                 for layer in range(info.n_layers)]
        out = capture(handle.model, torch.tensor([list(ex.corrupt_prefix)]), head_edits=edits)
        joint = float(torch.log_softmax(out.logits[0, -1], -1)[ex.target]) - ex.corrupt_logp
        assert attr.sum() == pytest.approx(joint, abs=0.02 + 0.02 * abs(joint))


@pytest.mark.parametrize("name", HEAD_TYPES.names())
def test_head_type_corrupts_only_the_demonstration_targets(name):
    data = builtin()
    keeps = HEAD_TYPES.get(name).keeps
    assert keeps in ("language", "meaning"), "a head type declares what its corruption keeps"
    for seed, row in ((0, 10), (1, 3), (2, 40)):
        pair = prompt_pair(data, row, "en", "fr", name, 5, random.Random(seed), "de")
        clean_targets, corrupt_targets = _lines(pair.clean, "A: "), _lines(pair.corrupt, "A: ")
        # the same demonstration sources and query, the same answer, the same layout
        assert _lines(pair.corrupt, "Q: ") == _lines(pair.clean, "Q: ")
        query = f"Q: {data.text('en', row)}\nA:"
        assert pair.clean.endswith(query) and pair.corrupt.endswith(query)
        assert pair.answer == " " + data.text("fr", row)
        assert len(corrupt_targets) == len(clean_targets) == 5
        assert [line for line in pair.corrupt.split("\n") if not line.startswith("A: ")] == \
               [line for line in pair.clean.split("\n") if not line.startswith("A: ")]
        # every target changed, and never to the query's answer
        assert all(c != k for c, k in zip(clean_targets, corrupt_targets))
        assert data.text("fr", row) not in corrupt_targets
        for source, target in zip(_lines(pair.corrupt, "Q: ")[:-1], corrupt_targets):
            demo = data.columns["en"].index(source)
            if keeps == "meaning":  # the demonstration's own sentence in another language
                assert target == data.text("de", demo)
            else:  # another target-language sentence
                assert target in data.columns["fr"] and target != data.text("fr", demo)


@pytest.mark.parametrize("name", PROMPT_KINDS.names())
def test_prompt_kind_holds_the_source_and_never_the_answer(name, handle, tiny_data):
    kind = PROMPT_KINDS.get(name)
    config = ConditionConfig(prompt=name, k_shots=max(kind.min_shots, 2))
    row = tiny_data.rows("evaluate")[0]
    ids = kind.run(handle, config, tiny_data, row)
    assert ids and all(isinstance(i, int) for i in ids)
    assert ids == kind.run(handle, config, tiny_data, row)  # deterministic
    text = handle.tokenizer.decode(ids)
    assert tiny_data.text("en", row) in text and tiny_data.text("fr", row) not in text
    if kind.min_shots:
        with pytest.raises(UserError, match="demonstration"):
            ConditionConfig(prompt=name, k_shots=kind.min_shots - 1)
    else:
        assert kind.run(handle, ConditionConfig(prompt=name, k_shots=0), tiny_data, row)


@pytest.mark.parametrize("name", STEER_MODES.names())
def test_steering_mode_moves_the_last_position_only(name, handle):
    model, info = handle.model, handle.info
    mode = STEER_MODES.get(name)
    mean = np.random.default_rng(0).normal(size=(info.n_layers, info.n_heads, info.head_dim)).astype(np.float32)
    chosen = ((0, 1), (1, 2))
    part, heads = mode.run(model, mean, chosen, ())
    assert heads and set(heads) <= set(chosen)
    _, again = mode.run(model, mean, chosen, heads)  # heads an earlier head map took
    assert set(again) <= set(chosen)
    ids = torch.tensor([list(range(70, 90))])
    plain = capture(model, ids).logits[0]

    def steered(strength: float) -> torch.Tensor:
        intervention = dataclasses.replace(part, strength=strength)
        with torch.no_grad(), Hooks(model, head_edits=intervention.head_edits(),
                                    output_adds=intervention.output_adds()):
            return model(input_ids=ids).logits[0]

    moved = steered(3.0)
    torch.testing.assert_close(moved[:-1], plain[:-1], rtol=0, atol=1e-6)
    assert (moved[-1] - plain[-1]).abs().max() > 1e-3
    if mode.uses_strength:  # the strength scales it: none at 0, more at 6
        torch.testing.assert_close(steered(0.0), plain, rtol=0, atol=1e-6)
        assert (steered(6.0)[-1] - moved[-1]).abs().max() > 1e-3
    else:
        torch.testing.assert_close(steered(6.0), moved, rtol=0, atol=0)


@pytest.mark.parametrize("name", EXPERIMENTS.names())
def test_experiment_plans_distinct_conditions_and_has_a_cli_command(name, capsys):
    config = ExperimentConfig(src="en", tgt="de", n_sentences=3, n_random=2)
    conditions = plan(config, name)
    assert conditions and all(isinstance(c, ConditionConfig) for c in conditions)
    assert all((c.src, c.tgt, c.n_sentences) == ("en", "de", 3) for c in conditions)
    labels = [label(c) for c in conditions]
    assert len(set(labels)) == len(labels), labels
    assert EXPERIMENTS.get(name).config is ExperimentConfig
    with pytest.raises(SystemExit) as done:
        main(["mt", name, "--help"])
    assert done.value.code == 0 and "--steer-mode" in capsys.readouterr().out
