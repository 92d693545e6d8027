"""The hooks API every feature uses to look inside a model or intervene on it.

Per-head attention outputs are the input of the attention output projection (o_proj / c_proj)
split by head: `[batch, seq, heads, head_dim]`. They can be read, zeroed, replaced or added to.
Steering vectors are added to the attention block output (after o_proj). MLP up-projection
activations are `[batch, seq, intermediate]`. Residual stream and attention probabilities come
from the model's own outputs (`capture`). Read-only hooks return nothing, so a forward with them
is bit-identical to a plain forward.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import nn

from backend.models.architecture import arch_info, attention_module, attention_out_proj, mlp_up_proj
from backend.models.locks import model_lock
from backend.models.rules import check_room


@dataclass(frozen=True)
class HeadEdit:
    """Change the outputs of some heads of one layer before o_proj.

    value broadcasts to `[batch, seq, len(heads), head_dim]` (a `[len(heads), head_dim]` mean is typical).
    position: None = every position of each forward call, -1 = its last position (every decoding step).
    """

    layer: int
    heads: tuple[int, ...]
    mode: Literal["zero", "replace", "add"]
    value: torch.Tensor | None = None
    position: int | None = None


@dataclass(frozen=True)
class OutputAdd:
    """Add a `[hidden]` vector to the attention block output of a layer (steering)."""

    layer: int
    vector: torch.Tensor
    position: int | None = -1
    scale: float = 1.0


def _select(position: int | None) -> slice:
    return slice(None) if position is None else slice(position, position + 1 if position != -1 else None)


@dataclass
class Hooks:
    """Context manager that installs reads and edits, and collects what it read.

    Reads accumulate across forward calls along the sequence axis, so incremental decoding
    yields the whole trajectory.
    """

    model: nn.Module
    read_heads: Iterable[int] = ()
    read_mlp_up: Iterable[int] = ()
    head_edits: Iterable[HeadEdit] = ()
    output_adds: Iterable[OutputAdd] = ()
    _handles: list = field(default_factory=list, repr=False)
    _heads: dict[int, list[torch.Tensor]] = field(default_factory=dict, repr=False)
    _mlp: dict[int, list[torch.Tensor]] = field(default_factory=dict, repr=False)

    @property
    def head_outputs(self) -> dict[int, torch.Tensor]:
        """layer -> `[batch, seq, heads, head_dim]` as it entered o_proj (after any edits)."""
        return {layer: torch.cat(chunks, dim=1) for layer, chunks in self._heads.items()}

    @property
    def mlp_up(self) -> dict[int, torch.Tensor]:
        """layer -> `[batch, seq, intermediate]` output of the MLP up projection."""
        return {layer: torch.cat(chunks, dim=1) for layer, chunks in self._mlp.items()}

    def __enter__(self) -> Hooks:
        model_lock(self.model).acquire()  # released in __exit__; see backend/models/locks.py
        try:
            self._install()
        except BaseException:
            # __exit__ does not run when __enter__ raises: undo here, or the lock stays held and the
            # hooks already registered would edit every later forward of this shared model.
            self._remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._remove()

    def _install(self) -> None:
        info = arch_info(self.model)
        edits: dict[int, list[HeadEdit]] = {}
        for edit in self.head_edits:
            edits.setdefault(edit.layer, []).append(edit)
        for layer in sorted(set(self.read_heads) | set(edits)):
            hook = self._head_hook(layer, edits.get(layer, []), layer in set(self.read_heads), info.n_heads)
            self._handles.append(attention_out_proj(self.model, layer).register_forward_pre_hook(hook))
        for add in self.output_adds:
            self._handles.append(attention_out_proj(self.model, add.layer).register_forward_hook(self._add_hook(add)))
        for layer in self.read_mlp_up:
            self._handles.append(mlp_up_proj(self.model, layer).register_forward_hook(self._mlp_hook(layer)))

    def _remove(self) -> None:
        try:
            for handle in self._handles:
                handle.remove()
            self._handles.clear()
        finally:
            model_lock(self.model).release()

    def _head_hook(self, layer: int, edits: list[HeadEdit], read: bool, n_heads: int):
        def hook(module, args):
            x = args[0]
            if edits:
                heads = x.reshape(*x.shape[:-1], n_heads, -1).clone()
                for edit in edits:
                    idx = list(edit.heads)
                    view = heads[:, _select(edit.position)]
                    if edit.mode == "zero":
                        view[:, :, idx] = 0.0
                    elif edit.mode == "replace":
                        view[:, :, idx] = edit.value.to(x.dtype).expand_as(view[:, :, idx])
                    else:
                        view[:, :, idx] += edit.value.to(x.dtype)
                x = heads.reshape(x.shape)
            if read:
                self._heads.setdefault(layer, []).append(x.detach().reshape(*x.shape[:-1], n_heads, -1))
            return (x, *args[1:]) if edits else None

        return hook

    def _add_hook(self, add: OutputAdd):
        def hook(module, args, output):
            output = output.clone()
            output[:, _select(add.position)] += add.scale * add.vector.to(output.dtype)
            return output

        return hook

    def _mlp_hook(self, layer: int):
        def hook(module, args, output):
            self._mlp.setdefault(layer, []).append(output.detach())

        return hook


@contextmanager
def eager_attention(model: nn.Module) -> Iterator[None]:
    """Temporarily switch to eager attention, the only implementation that returns probabilities."""
    with model_lock(model):
        previous = model.config._attn_implementation
        if previous != "eager":
            model.set_attn_implementation("eager")
        try:
            yield
        finally:
            if previous != "eager":
                model.set_attn_implementation(previous)


@dataclass(frozen=True)
class Capture:
    """Everything one forward pass exposes. Shapes: logits `[batch, seq, vocab]`, residual: tuple of
    `[batch, seq, hidden]` (embeddings, then after each layer), attentions: tuple of `[batch, heads, seq, seq]`,
    patterns: layer -> `[batch, heads, seq, seq]` for the layers asked for by `pattern_layers` only."""

    logits: torch.Tensor
    residual: tuple[torch.Tensor, ...]
    attentions: tuple[torch.Tensor, ...] | None
    head_outputs: dict[int, torch.Tensor]
    mlp_up: dict[int, torch.Tensor]
    patterns: dict[int, torch.Tensor] = field(default_factory=dict)


@contextmanager
def _keep_patterns(model: nn.Module, layers: Iterable[int]) -> Iterator[dict[int, torch.Tensor]]:
    """Keep the attention probabilities of `layers` only: every other layer's `[heads, T, T]` is freed as soon as
    its attention is done (`output_attentions` keeps all of them, L times the memory of one)."""
    kept: dict[int, torch.Tensor] = {}

    def keeper(layer: int):
        def hook(module, args, output):
            kept[layer] = output[1].detach()  # eager attention returns (output, probabilities)
        return hook

    handles = [attention_module(model, layer).register_forward_hook(keeper(layer)) for layer in set(layers)]
    try:
        yield kept
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def capture(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *,
            heads: Iterable[int] = (), mlp_up: Iterable[int] = (), attentions: bool = False,
            head_edits: Iterable[HeadEdit] = (), pattern_layers: Iterable[int] = ()) -> Capture:
    """One forward pass returning logits, residual stream and whichever internals were asked for: `attentions`
    keeps every layer's probabilities, `pattern_layers` those of the layers listed (one layer's memory, not L).
    Refuses an input over the model's context (the context rule, backend/models/rules.py) before any forward."""
    check_room(model, input_ids.shape[1], 0, "The input")
    pattern_layers = tuple(pattern_layers)
    with Hooks(model, read_heads=heads, read_mlp_up=mlp_up, head_edits=head_edits) as hooks:
        if attentions or pattern_layers:
            with eager_attention(model), _keep_patterns(model, pattern_layers) as patterns:
                out = model(input_ids=input_ids, attention_mask=attention_mask,
                            output_hidden_states=True, output_attentions=attentions)
        else:
            patterns = {}
            out = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    return Capture(logits=out.logits, residual=tuple(out.hidden_states),
                   attentions=out.attentions if attentions else None, head_outputs=hooks.head_outputs,
                   mlp_up=hooks.mlp_up, patterns=patterns)
