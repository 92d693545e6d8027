"""The contracts of NAG's two registries, run on every registered variant (a new one is tested by registering it).

- impacts (`IMPACTS`): `[B, L, I]` finite and non-negative, and a document's impact does not depend on its
  batch mates or on the pad token (right padding);
- scorers (`SCORERS`): `[M, n]` finite similarities and `[n]` token counts for a slice, the same numbers on a
  second run from an empty store (deterministic), and a document's score does not depend on how the pool is
  sliced (the pool is streamed).
"""
import numpy as np
import pytest
import torch

from backend.models import load
from backend.nag import samples
from backend.nag.extract import ExtractConfig, pad_batch, pad_id
from backend.nag.impact import IMPACTS
from backend.nag.scorers import SCORERS
from backend.nag.targets import TargetSet
from backend.progress import silent

TEXTS = ["short one", "a somewhat longer document about enzymes and heat", "mid length text here"]


def _impact_cases():
    """Every impact on a Llama-like model and GPT-2 (the two module layouts); the default one on every
    architecture (the captum methods share one code path across the Llama-like ones)."""
    default = ExtractConfig().impact
    return [(arch, name) for name in IMPACTS.names() for arch in ("gpt2", "llama", "qwen2", "qwen3")
            if name == default or arch in ("gpt2", "llama")]


@pytest.mark.parametrize("arch,name", _impact_cases())
def test_every_impact_is_non_negative_and_padding_invariant(arch, name):
    handle = load(f"tiny-{arch}")
    run = IMPACTS.get(name).run
    encoded = [handle.tokenizer(t, add_special_tokens=False)["input_ids"] for t in TEXTS]
    ids, mask = pad_batch(encoded, pad_id(handle), "cpu")
    together = run(handle.model, ids, mask)
    assert together.shape == (len(TEXTS), handle.info.n_layers, handle.info.intermediate_size)
    assert torch.isfinite(together).all() and (together >= 0).all() and together.amax() > 0
    for row, tokens in enumerate(encoded):
        alone = run(handle.model, torch.tensor([tokens]), torch.ones(1, len(tokens), dtype=torch.long))
        torch.testing.assert_close(together[row], alone[0], atol=1e-5, rtol=1e-4)
    other_pad = pad_batch(encoded, 7, "cpu")[0]  # the pad token's value is irrelevant
    torch.testing.assert_close(run(handle.model, other_pad, mask), together, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", SCORERS.names())
def test_every_scorer_scores_a_streamed_pool_deterministically(name, tmp_path, monkeypatch):
    handle = load("tiny-llama")
    scorer = SCORERS.get(name)
    extract = ExtractConfig(top_k=8, max_length=32)
    targets = [TargetSet(d, tuple(samples.sample_targets(d)[:2])) for d in ("science", "code")]
    pool = samples.load_small(samples.pool_path())[:6]

    def score(store: str, parts: list) -> list:
        monkeypatch.setenv("DASH_STORE", str(tmp_path / store))  # nothing cached from the other run
        state = scorer.prepare(handle, targets, extract, silent)
        return [scorer.run(state, handle, part, extract, 0, silent) for part in parts]

    (whole,) = score("first.duckdb", [pool])
    assert whole.sim.shape == (len(targets), len(pool)) and np.isfinite(whole.sim).all()
    assert whole.n_tokens.shape == (len(pool),) and (whole.n_tokens > 0).all()
    assert np.ptp(whole.sim) > 0, "a scorer that ranks nothing"
    sliced = score("second.duckdb", [pool[:2], pool[2:5], pool[5:]])
    np.testing.assert_allclose(np.concatenate([s.sim for s in sliced], axis=1), whole.sim, atol=1e-5)
    np.testing.assert_array_equal(np.concatenate([s.n_tokens for s in sliced]), whole.n_tokens)
