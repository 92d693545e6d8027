"""The FP8 head drill-down: its numbers are the bounds result's numbers at that head."""
import json

import numpy as np
import pytest

from backend.__main__ import main
from backend.errors import UserError
from backend.fp8 import BoundsConfig, bounds
from backend.fp8.head import HeadConfig, head
from backend.models import load

SMALL = BoundsConfig(n_texts=2, max_tokens=16)


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-gpt2"])
def test_head_matches_parent_bounds(model, fresh_store):
    handle = load(model)
    parent = bounds(handle, SMALL).value
    for layer, h in ((0, 0), (1, 3)):
        first = head(handle, HeadConfig(layer=layer, head=h, bounds=SMALL, bins=20))
        r = first.value
        assert r.bound == pytest.approx(float(parent.bound[layer, h]))
        assert r.sigma == pytest.approx(float(parent.sigma[layer, h]))
        assert r.layer_bound == pytest.approx(float(parent.layer_bound[layer]))
        # the histogram's largest |S| is the observed max the heatmap shows
        assert r.observed_max == pytest.approx(float(parent.observed[layer, h]), rel=1e-6)
        assert max(abs(r.edges[0]), abs(r.edges[-1])) == pytest.approx(r.observed_max, rel=1e-6)
        assert r.counts.sum() == r.n_logits > 0 and len(r.edges) == 21
        assert r.observed_max <= r.bound
    again = head(handle, HeadConfig(layer=1, head=3, bounds=SMALL, bins=20))
    assert again.cached and not first.cached


def test_head_out_of_range(fresh_store):
    handle = load("tiny-llama")
    with pytest.raises(UserError, match="Layer 2 is out of range"):
        head(handle, HeadConfig(layer=2, head=0, bounds=SMALL))
    with pytest.raises(UserError, match="Head 4 is out of range"):
        head(handle, HeadConfig(layer=0, head=4, bounds=SMALL))


def test_head_cli(capsys, fresh_store):
    assert main(["fp8", "head", "--model", "tiny-llama", "--layer", "1", "--head", "2", "--texts", "1",
                 "--max-tokens", "16", "--bins", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["layer"] == 1 and out["head"] == 2 and sum(out["histogram"]["counts"]) == out["n_logits"] == 136
    assert 0 < out["utilisation"] <= 1
    assert main(["fp8", "head", "--model", "tiny-llama", "--layer", "1", "--head", "9", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Head 9 is out of range") and err.count("\n") == 1


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-gpt2"])
def test_every_head_of_a_batch_is_the_single_heads_result_and_is_stored(model, fresh_store):
    from backend.fp8.head import compute_head, compute_heads, store_heads
    from backend.store.codec import to_jsonable

    handle = load(model)
    configs = [HeadConfig(layer=1, head=3, bounds=SMALL, bins=20), HeadConfig(layer=0, head=0, bounds=SMALL),
               HeadConfig(layer=1, head=0, bounds=SMALL), HeadConfig(layer=0, head=2, bounds=BoundsConfig(n_texts=1,
                                                                                                      max_tokens=8))]
    batch = compute_heads(handle, configs)
    for config, result in zip(configs, batch):
        assert to_jsonable(result) == to_jsonable(compute_head(handle, config)), config  # bit for bit
    assert len(batch[0].edges) == 21 and batch[3].n_logits < batch[1].n_logits
    done = store_heads(handle, configs)
    assert (done.hits, done.computed) == (0, len(configs))
    assert all(head(handle, config).cached for config in configs), "a stored head's click computes nothing"
    with pytest.raises(UserError, match="Head 9 is out of range"):
        store_heads(handle, [HeadConfig(layer=0, head=9, bounds=SMALL)])
