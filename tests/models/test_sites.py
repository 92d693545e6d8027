"""Intervention sites: a row patch changes only its rows, the hooks are gone after the block (the next forward is
bit-identical to a plain one), reads see the edited values, and an add with scale 0 changes nothing."""
import torch

from backend.models.architecture import arch_info
from backend.models.sites import Ablation, RowPatch, SiteAdd, intervened

IDS = torch.tensor([[5, 9, 12, 7, 3, 40]])


def _logits(model, ids=IDS):
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_row_patch_changes_only_its_rows_and_leaves_no_hook(tiny_handle):
    model = tiny_handle.model
    plain = _logits(model)
    batch = IDS.expand(3, -1)
    hidden = arch_info(model).hidden_size
    patch = RowPatch("resid_pre", 1, rows=torch.tensor([1]), values=torch.full((1, hidden), 3.0),
                     positions=torch.tensor([2]))
    with intervened(model, [patch], reads=[("resid_pre", 1)]) as seen:
        patched = _logits(model, batch)
    assert torch.allclose(patched[0], plain[0], atol=1e-5) and torch.allclose(patched[2], plain[0], atol=1e-5)
    assert not torch.allclose(patched[1, 2:], plain[0, 2:], atol=1e-3)
    assert torch.allclose(patched[1, :2], plain[0, :2], atol=1e-5), "causal: earlier positions untouched"
    assert torch.equal(seen[("resid_pre", 1)][0][1, 2], torch.full((hidden,), 3.0))
    assert torch.equal(_logits(model), plain)


def test_zero_scale_add_and_empty_ablation_change_nothing(tiny_handle):
    model = tiny_handle.model
    plain = _logits(model)
    hidden = arch_info(model).hidden_size
    edits = [SiteAdd("resid_pre", 0, torch.randn(hidden), torch.zeros(1)), Ablation("head", 1, units=()),
             Ablation("neuron", 0, units=())]
    with intervened(model, edits):
        assert torch.allclose(_logits(model), plain, atol=1e-6)
    with intervened(model, [Ablation("mlp_out", 1)]):
        assert not torch.allclose(_logits(model), plain, atol=1e-4)
