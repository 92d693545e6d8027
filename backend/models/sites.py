"""Activation sites for causal interventions: read them, patch them row by row, ablate them, add to them.

A site is where TransformerLens names a hook (module locations come from backend.models.architecture):
- resid_pre: the residual stream entering a decoder layer (the layer's input), `[batch, seq, hidden]`;
- attn_out: the attention block's output after o_proj, `[batch, seq, hidden]` (Gemma's post-attention norm acts
  on each position alone, so a position replaced here is replaced after that norm too);
- mlp_out: the MLP's output (its down projection), `[batch, seq, hidden]`, likewise before Gemma's post-norm;
- head: each head's output as it enters o_proj, `[batch, seq, heads, head_dim]`;
- neuron: the MLP up projection's output, `[batch, seq, intermediate]` (the neuron ids NAG shows).

`RowPatch` replaces a site in chosen rows of a batch, so many differently patched copies of one prompt run in one
forward; `Ablation` zeroes or replaces units of a site in every row; `SiteAdd` adds a per-row multiple of a vector.
`intervened` installs any mix of them (and `recorded` reads sites) under the model's lock.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

from backend.models.architecture import arch_info, attention_out_proj, decoder_layers, mlp_down_proj, mlp_up_proj
from backend.models.locks import model_lock


def site_module(model: nn.Module, site: str, layer: int) -> tuple[nn.Module, bool]:
    """(module, whether the site is its input) for one site of one layer."""
    if site == "resid_pre":
        return decoder_layers(model)[layer], True
    if site == "head":
        return attention_out_proj(model, layer), True
    if site == "attn_out":
        return attention_out_proj(model, layer), False
    if site == "mlp_out":
        return mlp_down_proj(model, layer), False
    if site == "neuron":
        return mlp_up_proj(model, layer), False
    raise ValueError(f"unknown site {site!r}")


def _units(x: torch.Tensor, site: str, n_heads: int) -> torch.Tensor:
    """A view whose last-but-one axis is the head for the head site (`[batch, seq, heads, head_dim]`), else `x`."""
    return x.view(*x.shape[:-1], n_heads, -1) if site == "head" else x


@dataclass(frozen=True)
class RowPatch:
    """In rows `rows` `[n]`, replace the site at `positions` `[n]` (positions within the forward's input; None: every
    position) by `values`: `[n, width]` at one position, `[n, seq, width]` at all. For the head site `heads` `[n]`
    picks each row's head and width is head_dim; for the others width is the site's whole width."""

    site: str
    layer: int
    rows: torch.Tensor
    values: torch.Tensor
    positions: torch.Tensor | None = None
    heads: torch.Tensor | None = None

    def apply(self, units: torch.Tensor) -> None:
        values = self.values.to(units.dtype)
        if self.heads is None:
            index = (self.rows,) if self.positions is None else (self.rows, self.positions)
            units[index] = values
        elif self.positions is None:
            units[self.rows, :, self.heads] = values
        else:
            units[self.rows, self.positions, self.heads] = values


@dataclass(frozen=True)
class Ablation:
    """Zero (value None) or replace by `value` the given units of a site at every row and position: heads of the
    head site (`value` `[len(units), head_dim]`), neurons of the neuron site (`[len(units)]`), or the whole width
    (units None; `value` `[width]`)."""

    site: str
    layer: int
    units: tuple[int, ...] | None = None
    value: torch.Tensor | None = None

    def apply(self, units: torch.Tensor) -> None:
        index = (Ellipsis,) if self.units is None else ((Ellipsis, list(self.units), slice(None)) if units.dim() == 4
                                                         else (Ellipsis, list(self.units)))
        if self.value is None:
            units[index] = 0.0
        else:
            units[index] = self.value.to(units.dtype).expand_as(units[index])


@dataclass(frozen=True)
class SiteAdd:
    """Add `scales[row] * vector` (`[rows]`, `[width]`) to the site at every position of every forward."""

    site: str
    layer: int
    vector: torch.Tensor
    scales: torch.Tensor

    def apply(self, units: torch.Tensor) -> None:
        units += self.scales.to(units.dtype).view(-1, *([1] * (units.dim() - 1))) * self.vector.to(units.dtype)


Edit = RowPatch | Ablation | SiteAdd


def _edit_hook(site: str, edits: Sequence[Edit], is_input: bool, n_heads: int):
    def edit(x: torch.Tensor) -> torch.Tensor:
        x = x.clone()
        for change in edits:
            change.apply(_units(x, site, n_heads))
        return x

    if is_input:
        def pre_hook(module, args, kwargs):
            return (edit(args[0]), *args[1:]), kwargs
        return pre_hook

    def hook(module, args, output):
        return (edit(output[0]), *output[1:]) if isinstance(output, tuple) else edit(output)
    return hook


def _read_hook(store: list, is_input: bool):
    if is_input:
        def pre_hook(module, args, kwargs):
            store.append(args[0].detach())
        return pre_hook

    def hook(module, args, output):
        store.append((output[0] if isinstance(output, tuple) else output).detach())
    return hook


@contextmanager
def intervened(model: nn.Module, edits: Iterable[Edit] = (),
               reads: Iterable[tuple[str, int]] = ()) -> Iterator[dict[tuple[str, int], list[torch.Tensor]]]:
    """Install `edits` and read `reads` ((site, layer) pairs; what every forward inside saw, after the edits, as a
    list of tensors per forward) for the forwards inside, under the model's lock; removed on exit."""
    n_heads = arch_info(model).n_heads
    grouped: dict[tuple[str, int], list[Edit]] = {}
    for change in edits:
        grouped.setdefault((change.site, change.layer), []).append(change)
    seen: dict[tuple[str, int], list[torch.Tensor]] = {key: [] for key in reads}
    handles = []
    with model_lock(model):
        try:
            for (site, layer), changes in grouped.items():
                module, is_input = site_module(model, site, layer)
                handles.append(module.register_forward_pre_hook(_edit_hook(site, changes, True, n_heads),
                                                                with_kwargs=True) if is_input
                               else module.register_forward_hook(_edit_hook(site, changes, False, n_heads)))
            for (site, layer), store in seen.items():  # installed after the edits: reads see the edited values
                module, is_input = site_module(model, site, layer)
                handles.append(module.register_forward_pre_hook(_read_hook(store, True), with_kwargs=True)
                               if is_input else module.register_forward_hook(_read_hook(store, False)))
            yield seen
        finally:
            for handle in handles:
                handle.remove()
