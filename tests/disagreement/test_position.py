"""The Disagreement position drill-down: its numbers are the trace's numbers at that position, and the gate's
verdict is the guided policy's gate replayed along the rollout."""
import json

import numpy as np
import pytest

from backend.__main__ import main
from backend.disagreement.analysis import TraceConfig, trace
from backend.disagreement.calibration import CalibrationConfig, GateConfig, calibration
from backend.disagreement.divergences import SIGNALS
from backend.disagreement.gate import gate
from backend.disagreement.pair import load_pair
from backend.disagreement.position import GateAtConfig, PositionConfig, gate_at, position
from backend.disagreement.rollout import ProblemSet
from backend.errors import UserError

QUESTION = "Ava has 3 apples and gets 4 more. How many now?"
TRACE = TraceConfig(QUESTION, 7, max_new_tokens=10)
CAL = CalibrationConfig(ProblemSet(n=3, split="train", seed=1, difficulty=1), max_new_tokens=10)


@pytest.fixture(scope="module")
def pair():
    return load_pair("tiny-llama", "tiny-qwen2")


@pytest.mark.parametrize("source", ["base", "reasoning"])
def test_position_equals_the_trace_there(pair, source):
    traced = trace(pair, TRACE).value
    rollout = traced.base if source == "base" else traced.reasoning
    for i in (0, 4, rollout.length - 1):
        done = position(pair, PositionConfig(TRACE, i, source, top_k=10))
        r = done.value
        assert r.token == rollout.tokens[i] and r.token_id == rollout.token_ids[i] and r.length == rollout.length
        for name in SIGNALS.names():
            assert r.signals[name] == pytest.approx(float(rollout.signals[name][i]), rel=1e-5, abs=1e-6), name
        assert r.logp_base == pytest.approx(float(rollout.signals["logp_base"][i]), abs=1e-5)
        assert r.logp_reason == pytest.approx(float(rollout.signals["logp_reason"][i]), abs=1e-5)
        assert r.differs == bool(rollout.signals["differs"][i])
        for top in (r.base_top, r.reasoning_top):
            probs = [t.prob for t in top]
            assert len(top) == 10 and probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
        # the entropy shown is the listed distribution's: its top token's probability cannot exceed exp(-0)
        assert r.base_top[0].logprob <= 0
    assert position(pair, PositionConfig(TRACE, 4, source)).cached


def test_position_out_of_range(pair):
    length = trace(pair, TRACE).value.base.length
    with pytest.raises(UserError, match=f"Position {length} is out of range: the base rollout has {length} tokens"):
        position(pair, PositionConfig(TRACE, length))
    with pytest.raises(UserError):
        PositionConfig(TRACE, -1)


@pytest.mark.parametrize("gate_config", [GateConfig("ce", 3), GateConfig("js", 0, decisive=True),
                                         GateConfig("kl_base_reason", 2, early="never", capped=True)])
def test_gate_at_replays_the_guided_gate(pair, gate_config):
    rollout = trace(pair, TRACE).value.base
    threshold = calibration(pair, CAL).threshold(gate_config.signal, 0.3, gate_config.decisive)
    values = rollout.signals[gate_config.signal].astype(np.float64)
    for i in range(rollout.length):
        check = gate_at(pair, GateAtConfig(TRACE, i, "base", gate_config, 0.3, CAL)).value
        assert check.value == pytest.approx(values[i]) and check.tau == pytest.approx(threshold.tau)
        assert check.lam == pytest.approx(threshold.lam)
        plain = gate(values[i], list(values[:i]), threshold, gate_config.window, gate_config.early)
        if gate_config.decisive:
            plain = plain and bool(rollout.signals["differs"][i])
        if not gate_config.capped:
            assert check.fired == plain, (i, check.reason)
        else:
            assert check.fired <= plain and (check.cap_allows is not None)
        assert check.reason.startswith("fires" if check.fired else "does not fire")
        if gate_config.window and i >= gate_config.window:
            assert check.local_mean == pytest.approx(np.mean(values[i - gate_config.window:i]))
            assert check.spike == (values[i] > threshold.lam * check.local_mean)


def test_position_cli(capsys, pair):
    args = ["disagree", "position", "--base", "tiny-llama", "--reasoning", "tiny-qwen2", "--question", QUESTION,
            "--answer", "7", "--max-new-tokens", "10", "--position", "2", "--cal-n", "3", "--difficulty", "1",
            "--budget", "30", "--window", "3", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    rollout = trace(pair, TRACE).value.base
    assert out["token"] == rollout.tokens[2] and len(out["base_top"]) == 10
    assert out["divergences"]["js"] == pytest.approx(float(rollout.signals["js"][2]), rel=1e-5, abs=1e-6)
    assert out["gate"]["signal"] == "ce" and isinstance(out["gate"]["fired"], bool) and out["gate"]["budget"] == 0.3
    assert main([*args[:-1], "--position", "99", "--no-gate", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Position 99 is out of range") and err.count("\n") == 1


def test_every_position_of_a_batch_is_the_single_positions_result_and_is_stored(pair, fresh_store):
    from backend.disagreement.position import compute_position, compute_positions, store_positions

    traced = trace(pair, TRACE).value
    configs = [PositionConfig(TRACE, i, source, top_k=k) for source, k in (("base", 10), ("reasoning", 10), ("base", 3))
               for i in (0, 4, (traced.base if source == "base" else traced.reasoning).length - 1)]
    batch = compute_positions(pair, configs)
    for config, result in zip(configs, batch):
        assert result == compute_position(pair, config), config
    assert len(batch[-1].base_top) == 3 and batch[3].source == "reasoning"
    done = store_positions(pair, configs)
    assert (done.hits, done.computed) == (0, len(configs))
    assert all(position(pair, config).cached for config in configs), "a stored position's click computes nothing"
    with pytest.raises(UserError, match="out of range"):
        compute_positions(pair, [configs[0], PositionConfig(TRACE, 999, "base")])
