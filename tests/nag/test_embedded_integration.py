"""Integration (embedded SmolLM2-135M): batched, right-padded features equal one-document-at-a-time ones."""
import pytest

from backend.models import embedded, load
from backend.nag.extract import ExtractConfig, extract_batched, extract_naive

pytestmark = pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                                reason="run `python -m backend models prepare` first (make test does)")


def test_padding_invariant_features_on_the_embedded_model():
    handle = load("smollm2-135m-instruct")
    texts = ["def add(a, b):\n    return a + b", "The council voted on Tuesday to approve a new tram line for the city."]
    config = ExtractConfig(max_length=32)
    batched, naive = extract_batched(handle, texts, config), extract_naive(handle, texts, config)
    assert batched[0].top.shape == (30, 32)
    for a, b in zip(batched, naive):
        same = [set(a.top[layer, :20]) == set(b.top[layer, :20]) for layer in range(30)]
        assert sum(same) >= 29  # float summation order may swap a near-tie at the K boundary
