"""p-values of the best of K keys: corrected ones are (conservatively) uniform under H0, raw ones are not.

Under H0 the keyed bits are fair coins independent across keys (HMAC outputs), so random bit vectors
stand in for human text; the retrieval test runs the real search over random signatures and a
registry of 2 x 60 identities."""
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.watermark.retrieval import flat, hierarchical
from backend.watermark.signatures import Signature
from backend.watermark.stats import best_of, bonferroni, level_score, sidak

LEVELS = (0.01, 0.05, 0.2, 0.5)
REPEATS = 400


def rejection_rates(p_values) -> dict[float, float]:
    p = np.asarray(p_values)
    return {t: float(np.mean(p <= t)) for t in LEVELS}


def at_most_nominal(rates: dict[float, float], n: int) -> bool:
    """Every P(p <= t) within 4 standard errors above t (valid, possibly conservative)."""
    return all(rate <= t + 4 * np.sqrt(t * (1 - t) / n) + 1e-9 for t, rate in rates.items())


def best_raw_p(rng: np.random.Generator, k: int, n_sem: int, n_syn: int, w: float, repeats: int) -> np.ndarray:
    """`repeats` times, the smallest one-key p over k keys, each scoring fresh fair bits on the same sentences.

    level_score reads a key's bits through their sums (its score is the weighted count of 1-bits), so each key's p
    is level_score's own p for its counts, drawn as fair coins' counts are (binomial): one level_score call per
    possible pair of counts instead of one per key and repeat (up to 60,000 for an example)."""
    p_of_counts = np.array([[level_score("model", n_sem, [1] * a + [0] * (n_sem - a), [1] * b + [0] * (n_syn - b),
                                         w, 1 - w).p_value for b in range(n_syn + 1)] for a in range(n_sem + 1)])
    sem, syn = rng.binomial(n_sem, 0.5, (repeats, k)), rng.binomial(n_syn, 0.5, (repeats, k))
    return p_of_counts[sem, syn].min(axis=1)


@settings(max_examples=12, deadline=None)
@given(k=st.integers(2, 150), n_sem=st.integers(3, 30), n_syn=st.integers(0, 30),
       w=st.sampled_from([0.5, 0.3, 0.8]), seed=st.integers(0, 2**31 - 1))
def test_sidak_over_k_keys_is_a_valid_p_value(k, n_sem, n_syn, w, seed):
    rng = np.random.default_rng(seed)
    raw = best_raw_p(rng, k, n_sem, n_syn, w, REPEATS)
    assert at_most_nominal(rejection_rates([sidak(p, k) for p in raw]), REPEATS)
    assert at_most_nominal(rejection_rates([bonferroni(p, k) for p in raw]), REPEATS)


def test_the_raw_best_of_100_is_not_a_p_value():
    """The check above can fail: uncorrected, the best of 100 keys is 'significant' most of the time."""
    rng = np.random.default_rng(0)
    raw = best_raw_p(rng, 100, 12, 12, 0.5, 200)
    assert rejection_rates(raw)[0.05] > 0.5
    corrected = rejection_rates([sidak(p, 100) for p in raw])
    assert corrected[0.05] <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / 200)
    assert corrected[0.5] >= 0.25  # roughly uniform, not collapsed to 1


def test_best_of_labels_the_score_and_keeps_the_raw_p():
    score = level_score("total", 6, [1] * 6, [1] * 6, 0.5, 0.5)
    one, many = best_of(score, 1), best_of(score, 120, "bonferroni")
    assert one.compared == 1 and one.p_corrected is None and one.p_family == score.p_value
    assert many.compared == 120 and many.p_value == score.p_value and many.p_family == min(1.0, 120 * score.p_value)


def random_signatures(rng: random.Random, n: int) -> list[Signature]:
    """Sentences with random semantic regions (6 bits) and random skeletons: text nobody watermarked."""
    sigs = []
    for i in range(n):
        semantic = "".join(rng.choice("01") for _ in range(6))
        syntactic = " ".join(rng.choice(["the", "of", "and", "to", "in", "a", "is", "X"]) for _ in range(8))
        sigs.append(Signature(f"s{i}", i, i + 1, True, semantic, syntactic, 0.1))
    return sigs


def test_search_over_120_identities_reports_corrected_p_values_that_are_uniform_under_h0(private_secret, monkeypatch):
    from backend.watermark import keys

    # a fixed test key: with a fresh random key per run, "no false positive at alpha 1e-3 in 300 searches"
    # failed by chance in a few percent of runs
    monkeypatch.setenv(keys.ENV_SECRET, "test-only-key-not-a-secret")
    rng = random.Random(1)
    registry = {1: list(range(1, 61)), 2: list(range(1, 61))}
    found = {"hierarchical": [], "flat": []}
    for _ in range(150):
        sigs = random_signatures(rng, rng.randint(6, 30))
        for name, search in (("hierarchical", hierarchical), ("flat", flat)):
            found[name].append(search(sigs, registry, 0.5, 0.5, 1e-3).best)
    for name, matches in found.items():
        n = len(matches)
        # the model level over the 2 models; the user level over the 60 users of the model (hierarchical) or
        # over all 120 users the flat scan picked from
        users = 60 if name == "hierarchical" else 120
        assert all(m.model.compared == 2 and m.user.compared == users for m in matches)
        # alpha = 1e-3 over 150 texts: 0.15 false positives expected; more than 2 has probability < 1e-3
        assert sum(m.model_significant for m in matches) <= 2, name
        assert all(m.p_decision == m.model.p_family for m in matches)  # the verdict's p is the model level's
        assert at_most_nominal(rejection_rates([m.model.p_family for m in matches]), n), name
        assert at_most_nominal(rejection_rates([m.user.p_family for m in matches]), n), name
        assert rejection_rates([m.user.p_value for m in matches])[0.05] > 0.3  # the raw best would mislead
