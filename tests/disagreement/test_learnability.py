"""The learnability view on a tiny pair: categories from the rollouts, a symmetric similarity matrix with its mean to
the rest, per-example caching (a larger set reuses the examples already computed), the projection's faithfulness,
the group test, and the CLI's refusals (exit 2, the field named)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.__main__ import main
from backend.disagreement.learnability import LearnabilityConfig, learnability
from backend.disagreement.learnability_stats import cosine_matrix, group_test, mean_to_rest, sketch
from backend.disagreement.pair import load_pair
from backend.errors import UserError

SMALL = dict(max_new_tokens=8, sketch_dim=0, layers=(1,))  # exact gradients of the tiny model's last layer


@pytest.fixture(scope="module")
def pair():
    return load_pair("tiny-llama", "tiny-qwen2")


def test_similarities_categories_and_per_example_caching(pair):
    messages: list[str] = []
    first = learnability(pair, LearnabilityConfig(n=3, **SMALL), lambda f, m: messages.append(m)).value
    assert len(first.records) == 3 and first.similarity.shape == (3, 3)
    assert np.allclose(first.similarity, first.similarity.T, atol=1e-6)
    assert np.allclose(np.diag(first.similarity), 1.0, atol=1e-5)
    assert np.allclose(first.mean_similarity, (first.similarity.sum(1) - 1) / 2, atol=1e-5)
    assert sorted(first.order) == [0, 1, 2]
    for r in first.records:  # the tiny random models solve nothing
        assert r.category == ("easy" if r.base_correct else "learned" if r.reasoning_correct else "unlearnable")
        assert r.loss > 0 and r.gradient_norm > 0 and r.sketch.size == 0  # the sketches stay in the examples' artifacts
    assert "weights of layers 1" in first.gradient_of
    bigger = learnability(pair, LearnabilityConfig(n=4, **SMALL)).value
    assert np.allclose(bigger.similarity[:3, :3], first.similarity, atol=1e-6)  # the first three, from the store


def test_examples_decoded_side_by_side_equal_one_at_a_time(pair, fresh_store, monkeypatch):
    """The rollouts of a chunk run as left-padded rows; one example per chunk gives the same records."""
    import sys

    module = sys.modules["backend.disagreement.learnability"]  # the package exports a function of that name
    config = LearnabilityConfig(n=4, **SMALL)
    together = learnability(pair, config).value
    monkeypatch.setattr(module, "BATCH", 1)
    monkeypatch.setenv("DASH_STORE", str(fresh_store.with_name("alone.duckdb")))
    alone = learnability(pair, config).value
    assert [(r.base_answer, r.reasoning_answer, r.category) for r in together.records] == \
        [(r.base_answer, r.reasoning_answer, r.category) for r in alone.records]
    assert np.allclose(together.similarity, alone.similarity, atol=1e-5)


def test_the_projection_keeps_cosines_and_the_group_test_reads_the_direction():
    torch.manual_seed(0)
    a = torch.randn(200_000)
    b = 0.6 * a + 0.8 * torch.randn(200_000)  # cosine about 0.6
    exact = float(a @ b / (a.norm() * b.norm()))
    projected = cosine_matrix(np.stack([sketch(a, 4096, 0), sketch(b, 4096, 0)]))[0, 1]
    assert projected == pytest.approx(exact, abs=0.05)
    assert np.array_equal(sketch(a, 0, 0), a.numpy())
    assert np.isnan(mean_to_rest(np.ones((1, 1)))).all()
    low, high = np.array([0.01, 0.02, 0.03]), np.array([0.05, 0.06, 0.07, 0.08])
    test = group_test(low, high)
    assert test.auroc == 1.0 and test.p_value < 0.1 and (test.n_unlearnable, test.n_learned) == (3, 4)
    assert group_test(high, low).auroc == 0.0
    assert np.isnan(group_test(low, np.array([])).auroc)


def test_bad_settings_are_refused_naming_the_field(capsys):
    with pytest.raises(UserError, match="n must be"):
        LearnabilityConfig(n=0)
    with pytest.raises(UserError, match="layers"):
        LearnabilityConfig.parse_layers("28,x")
    assert main(["disagree", "learnability", "--n", "0"]) == 2
    assert "n must be in [1, 2000], got 0" in capsys.readouterr().err
    assert main(["disagreement", "learnability", "--layers", "last"]) == 2  # the feature name works too
    assert "layers" in capsys.readouterr().err


def test_the_shipped_first_view_is_the_pages_default_on_the_embedded_pair():
    """data/reference/learnability_first_view.jsonl.gz: the result the Learnability view opens on (its default
    settings, the page's 96 new tokens), keyed as the page asks for it."""
    from backend.disagreement import TraceConfig
    from backend.disagreement.learnability import learnability as verb
    from backend.params import default_of
    from backend.store.artifacts import artifact_key
    from backend.store.codec import canonical_params, loads
    from backend.store.reference_files import REFERENCE_DIR, read_reference

    (row,) = read_reference(REFERENCE_DIR / "learnability_first_view.jsonl.gz")
    config = LearnabilityConfig(max_new_tokens=default_of(TraceConfig, "max_new_tokens"))
    assert row["key"] == artifact_key(verb.feature, verb.name, row["fingerprint"], canonical_params(config),
                                      verb.code_version)
    result = loads(row["payload"])
    assert len(result.records) == config.n and result.similarity.shape == (config.n, config.n)
    assert "LoRA factors" in result.gradient_of


def test_similarity_beyond_the_loss_is_found_when_it_carries_signal_and_not_otherwise():
    from backend.disagreement.learnability_stats import beyond_loss

    rng = np.random.default_rng(0)
    n = 400
    loss, similarity = np.exp(rng.normal(size=n)), rng.normal(size=n)
    z = 1.5 * np.log(loss) - 1.5 * similarity  # both matter: less similar, more often unlearnable
    unlearnable = rng.random(n) < 1 / (1 + np.exp(-z))
    found = beyond_loss(similarity, loss, unlearnable)
    assert found.p_value < 1e-6 and found.similarity_coefficient < 0 and found.n == n
    only_loss = rng.random(n) < 1 / (1 + np.exp(-1.5 * np.log(loss)))  # similarity carries nothing
    assert beyond_loss(similarity, loss, only_loss).p_value > 0.01
    assert np.isnan(beyond_loss(similarity[:6], loss[:6], np.array([1, 1, 0, 0, 0, 0], bool)).p_value)


def test_the_page_sentence_reads_the_test_from_a_result():
    from dataclasses import replace as swap

    from app.figures.learnability import beyond_loss_line
    from backend.disagreement.learnability import ExampleRecord, summarise

    rng = np.random.default_rng(1)

    def record(i: int, unlearnable: bool) -> ExampleRecord:
        return ExampleRecord(problem_id=str(i), question="q", difficulty=1, answer=1, base_answer=None,
                             reasoning_answer=None if unlearnable else 1, base_correct=False,
                             reasoning_correct=not unlearnable, loss=float(np.exp(rng.normal())), gradient_norm=1.0,
                             sketch=rng.normal(size=16).astype(np.float16))

    result = summarise([record(i, i % 3 == 0) for i in range(30)], "data", "grads")
    line = beyond_loss_line(result)
    assert "likelihood-ratio p = " in line and "(30 examples)" in line
    losses = {kind: np.median([r.loss for r in result.records if r.category == kind])
              for kind in ("unlearnable", "learned")}  # the medians it states are the data's, not a claim
    assert f"unlearnable {losses['unlearnable']:.3f} vs learned {losses['learned']:.3f} nats/token" in line
    few = swap(result, records=result.records[:6], mean_similarity=result.mean_similarity[:6])
    assert "too few" in beyond_loss_line(few)
