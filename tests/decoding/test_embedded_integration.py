"""INTEGRATION (embedded SmolLM2-135M, a few seconds on CPU): cache coherence of ASMC resampling on the real
model, and the stop token of its chat template ends a sequence."""
import pytest
import torch

from backend.decoding.algorithms.smc import smc_round
from backend.models import embedded, load
from backend.models.generate import encode_prompt
from backend.models.rules import stop_ids

pytestmark = pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                                reason="run `python -m backend models prepare` first (make test does)")


def test_resampled_caches_match_recomputation_on_the_embedded_model():
    handle = load("smollm2-135m-instruct")
    assert handle.tokenizer.convert_ids_to_tokens(list(stop_ids(handle))) == ["<|im_end|>"]
    ids = encode_prompt(handle, "What is 2 + 3?")
    r = smc_round(handle.model, ids, 3, 4.0, 4, tuple(sorted(stop_ids(handle))), torch.Generator().manual_seed(0),
                  ess_threshold=1.0, stop_at_eos=False, keep_decoder=True)
    assert r.trace.resampled.any()
    dec = r.decoder
    with torch.no_grad():
        full = handle.model(input_ids=dec.tokens).logits[:, -1].float()
    torch.testing.assert_close(torch.log_softmax(dec.logits, -1), torch.log_softmax(full, -1), atol=1e-4, rtol=1e-4)
