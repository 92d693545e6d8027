"""Every Inspect verb estimates its memory before any forward and refuses with the number over DASH_INSPECT_MAX_MB;
the estimate grows with the prompt and keeps one layer's `[H, T, T]` per kept pattern, not every layer's."""
import pytest

from backend.config import settings
from backend.errors import UserError
from backend.internals.attention import compute_attention, compute_head
from backend.internals.budget import check_budget, check_prompt, estimate
from backend.internals.config import AttentionConfig, DlaConfig, HeadConfig, LensConfig
from backend.internals.dla import compute_dla
from backend.internals.lens import compute_lens

PROMPT = "The cat sat on the mat"
VERBS = [(compute_lens, LensConfig), (compute_dla, DlaConfig), (compute_attention, AttentionConfig),
         (compute_head, HeadConfig)]


@pytest.mark.parametrize("compute, config_cls", VERBS)
def test_over_budget_is_refused_with_the_number_before_any_forward(tiny_handle, monkeypatch, compute, config_cls):
    model = tiny_handle.model
    monkeypatch.setenv("DASH_INSPECT_MAX_MB", "0.001")
    forwards = []
    handle = model.register_forward_pre_hook(lambda *args: forwards.append(1))
    try:
        with pytest.raises(UserError, match=r"needs about [\d.]+ MB for \d+ tokens, over the 0.001 MB") as err:
            compute(model, tiny_handle.tokenizer, config_cls(prompt=PROMPT))
    finally:
        handle.remove()
    assert forwards == [] and "\n" not in str(err.value)
    monkeypatch.setenv("DASH_INSPECT_MAX_MB", "4096")
    compute(model, tiny_handle.tokenizer, config_cls(prompt=PROMPT))  # the same call fits a larger budget


def test_one_kept_pattern_costs_one_layer_and_grows_quadratically(tiny_handle):
    model, info = tiny_handle.model, tiny_handle.info
    plain, one = estimate(model, 1000).bytes, estimate(model, 1000, pattern_layers=1).bytes
    # the kept [H, T, T] plus the eager scores beside it (2 more), the mask already counted
    assert one - plain == 3 * info.n_heads * 1000 ** 2 * 4
    assert estimate(model, 2000, 1).bytes - estimate(model, 2000).bytes == 4 * (one - plain)


def test_budget_setting(monkeypatch, tiny_handle):
    monkeypatch.setenv("DASH_INSPECT_MAX_MB", "lots")
    with pytest.raises(UserError, match="DASH_INSPECT_MAX_MB must be a number"):
        settings()
    monkeypatch.delenv("DASH_INSPECT_MAX_MB")
    assert settings().inspect_max_bytes > 0
    monkeypatch.setenv("DASH_INSPECT_MAX_MB", "600")
    assert check_budget(tiny_handle.model, 4).fits
    with pytest.raises(UserError, match="about 1,536 MB"):  # a verb's own terms count
        check_budget(tiny_handle.model, 4, extra_bytes=2**30)
    monkeypatch.setenv("DASH_INSPECT_MAX_MB", "0.001")
    with pytest.raises(UserError, match="budget"):
        check_prompt(tiny_handle, PROMPT)
