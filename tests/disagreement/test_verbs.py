"""The cached verbs on tiny models: trace, batch analysis, intervene, sweep, EOPD, and the CLI."""
import json

import numpy as np
import pytest

from backend.__main__ import main
from backend.disagreement.analysis import AnalysisConfig, TraceConfig, analyze, trace
from backend.disagreement.calibration import CalibrationConfig
from backend.disagreement.eopd import EOPD_SIGNALS, EopdConfig, eopd
from backend.disagreement.guided import InterveneConfig, intervene
from backend.disagreement.pair import load_pair
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.calibration import GateConfig
from backend.disagreement.sweep import SweepConfig, sweep
from tests.support.verb_versions import assert_listed_by_the_cli, verbs_of

QUESTION = "Ava has 3 apples and gets 4 more. How many now?"
SMALL = ProblemSet(n=3, split="heldout", seed=0, difficulty=1)
CAL = CalibrationConfig(ProblemSet(n=3, split="train", seed=1, difficulty=1), max_new_tokens=12)


@pytest.fixture(scope="module")
def pair():
    return load_pair("tiny-llama", "tiny-qwen2")


def test_trace_scores_both_rollouts_and_caches(pair):
    config = TraceConfig(QUESTION, 7, max_new_tokens=12)
    first = trace(pair, config)
    again = trace(pair, config)
    assert not first.cached and again.cached
    t = again.value
    for r in (t.base, t.reasoning):
        assert r.length == len(r.tokens) == 12 and r.correct is False
        assert all(v.shape == (12,) for v in r.signals.values())
        assert (r.signals["ce"] >= r.signals["entropy_base"] - 1e-4).all()  # CE = H + KL
    assert set(t.eopd) == set(EOPD_SIGNALS) and all(v.shape == (12,) for v in t.eopd.values())
    assert trace(pair, TraceConfig(QUESTION, None, max_new_tokens=4)).value.base.correct is None


def test_batch_analysis(pair):
    result = analyze(pair, AnalysisConfig(SMALL, max_new_tokens=12)).value
    base = result.source("base")
    c = base.concentration
    assert c.n_tokens == 36 and 0 <= c.gini <= 1 and 0 < c.share_tokens_50 <= c.share_tokens_80 <= 1
    assert c.lorenz_y[0] == 0 and c.lorenz_y[-1] == pytest.approx(1)
    assert np.isclose(c.position_hist.sum(), 1) and sum(n for _, n in c.categories.values()) == 36
    assert base.accuracy == 0.0 and base.failure is None  # random models: all wrong, no AUROC


def test_intervene_and_sweep(pair):
    guided = intervene(pair, InterveneConfig(QUESTION, 7, "guided", 0.3, calibration=CAL, max_new_tokens=12)).value
    early = intervene(pair, InterveneConfig(QUESTION, 7, "early", 0.3, calibration=CAL, max_new_tokens=12)).value
    assert guided.threshold is not None and np.isfinite(guided.signal).all()
    assert early.intervened.sum() == guided.intervened.sum()  # matched count, at the earliest positions
    assert early.intervened[: int(early.intervened.sum())].all()
    result = sweep(pair, SweepConfig(SMALL, (0.0, 0.3), calibration=CAL, max_new_tokens=12)).value
    assert result.n_problems == 3 and len(result.points) == 8
    zero = [p for p in result.points if p.budget == 0.0]
    assert all(p.rate == 0.0 for p in zero)  # budget 0: nobody takes over
    assert 0.0 < result.reasoning_differs <= 1.0  # the tiny pair's greedy tokens differ on the reasoning path
    decisive = sweep(pair, SweepConfig(SMALL, (0.3,), gate=GateConfig(window=0, decisive=True), calibration=CAL,
                                       max_new_tokens=12)).value
    at = {(r.policy, r.problem_id): r for r in decisive.records}
    for (policy, pid), r in at.items():  # decisive controls change as many tokens as guided (within the output)
        if policy in ("random", "early"):
            assert r.n_interventions == min(at["guided", pid].n_interventions, r.length)
    by = {(r.policy, r.budget, r.problem_id): r for r in result.records}
    for (policy, budget, pid), r in by.items():
        if policy in ("random", "early"):
            assert r.n_interventions <= by[("guided", budget, pid)].n_interventions
    cheap = intervene(pair, InterveneConfig(QUESTION, 7, "entropy", 0.3, calibration=CAL, max_new_tokens=12)).value
    assert cheap.reasoning_passes <= cheap.intervened.sum()  # queried only when gated


def test_eopd_batch(pair):
    result = eopd(pair, EopdConfig(SMALL, max_new_tokens=8, temperature=1.0)).value
    assert len(result.signals) == 3 and result.summary.n_tokens == 24
    assert 0 <= result.summary.gated_share <= 1


def test_cli_actions(capsys):
    common = ["--base", "tiny-llama", "--reasoning", "tiny-qwen2", "--max-new-tokens", "6"]
    assert main(["disagree", "analyze", "--question", QUESTION, "--answer", "7", *common, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["base"]["per_token"]) == 6 and "ce" in out["base"]["per_token"][0]
    assert main(["disagree", "analyze", "--n", "2", "--difficulty", "1", *common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sources"][0]["tokens"] == 12
    assert main(["disagree", "eopd", "--n", "2", "--difficulty", "1", *common, "--json"]) == 0
    assert "gated_share" in json.loads(capsys.readouterr().out)
    assert main(["disagree", "intervene", "--question", QUESTION, "--budget", "20", "--cal-n", "2",
                 "--difficulty", "1", *common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens"] == 6
    assert main(["disagree", "sweep", "--n", "2", "--rates", "10", "--policies", "guided,early", "--cal-n", "2",
                 "--difficulty", "1", *common, "--json"]) == 0
    assert [p["policy"] for p in json.loads(capsys.readouterr().out)["points"]] == ["guided", "early"]
    assert main(["disagree", "analyze", "--question", " ", *common]) == 2
    assert "empty" in capsys.readouterr().err


DISAGREEMENT_VERBS = {"rollout", "rollouts", "trace", "analyze", "eopd", "intervene", "sweep-problem", "sweep",
                      "position-topk", "position", "gate-at", "learnability", "learnability_example"}


def test_every_cached_computation_is_a_registered_verb_listed_by_the_cli(capsys):
    assert_listed_by_the_cli("disagreement", DISAGREEMENT_VERBS, capsys)


def test_the_verbs_are_keyed_on_the_pair_and_a_rollout_on_its_rollout_key(pair, fresh_store):
    """A pair's identity is both models' fingerprints; a batch's rollouts are stored one by one under RolloutKey
    (the key they had before the verbs), so an interrupted batch resumes from them."""
    from backend.disagreement.scoring import RolloutConfig, RolloutKey, one_rollout, rollouts
    from backend.store.artifacts import artifact_key, lookup
    from backend.store.codec import canonical_params

    assert all(v.ref(pair) == pair.ref for v in verbs_of("disagreement").values())
    config = RolloutConfig(ProblemSet(n=2, split="heldout", seed=5, difficulty=1), "base", max_new_tokens=4)
    batch = rollouts(pair, config).value
    for i, problem in enumerate(config.problems.problems()):
        key = artifact_key("disagreement", "rollout", pair.ref.fingerprint,
                           canonical_params(RolloutKey.of(problem, config, i)), one_rollout.code_version)
        stored = lookup(key)
        assert stored is not None and stored[0].token_ids == batch.rollouts[i].token_ids


def test_the_sweep_hands_its_curve_so_far_to_a_watcher_problem_by_problem(pair, fresh_store):
    from tests.support.partials import PartialsSeen

    seen = PartialsSeen()
    done = sweep(pair, SweepConfig(SMALL, (0.3,), policies=("guided",), calibration=CAL, max_new_tokens=8), seen)
    assert not done.cached and seen.done() == [1, 2, 3] and {p.total for p in seen.partials} == {3}
    assert [p.value.n_problems for p in seen.partials] == [1, 2, 3]
    assert [len(p.value.records) for p in seen.partials] == [1, 2, 3]  # one guided cell per problem
    assert seen.partials[-1].value.points == done.value.points  # the last one is the whole sweep
