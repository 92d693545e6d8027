"""The context rule in NAG (tiny-llama, 256 positions): the deactivation check reads each held-out document up to
max_length within the model's context (a max_length past it is not a refusal of the whole check, nor a silent cut)
and counts the documents it cut, in its result and its summary (what the page and CLI show)."""
import numpy as np

from backend.models import load
from backend.nag import DeactivationConfig, TargetSet, deactivation_check, samples
from backend.nag.extract import read_length


def test_deactivation_reads_within_the_context_and_counts_what_it_cut(fresh_store):
    handle = load("tiny-llama")
    assert read_length(handle.model, 1000) == 256 and read_length(handle.model, 120) == 120
    targets = [TargetSet("code", tuple(samples.sample_targets("code")[:2]))]
    heldout = [d for d in samples.heldout() if d.domain][::4]
    lengths = [len(ids) for ids in handle.tokenizer([d.text for d in heldout], add_special_tokens=False)["input_ids"]]
    assert max(lengths) > 256 and min(lengths) <= 256  # some documents are cut, some are read whole
    result = deactivation_check(handle, targets, heldout,
                                config=DeactivationConfig(share=0.02, n_random=1, max_length=1000)).value
    assert result.read_tokens == 256 and result.truncated == sum(n > 256 for n in lengths)
    assert np.isfinite(result.base).all()
    summary = result.summary()
    assert summary["tokens_read_per_document"] == 256 and summary["documents_truncated"] == result.truncated
