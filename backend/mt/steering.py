"""Steering vectors from selected heads, and greedy generation under steering or ablation.

Steering modes (the STEER_MODES registry):
- add (the paper's): per layer l, v_l = o_proj_l(z_l) - o_proj_l(0), where z_l is the mean clean head
  output `[heads, head_dim]` with the non-selected heads zeroed (subtracting o_proj(0) keeps an o_proj
  bias, as in GPT-2, out of the vector); v_l times a strength is added to the attention output at the
  last position on every decoding step;
- patch: the selected heads' outputs at the last position are replaced by their mean clean outputs on
  every decoding step (activation patching used as steering; no strength).
Ablation zeroes the chosen heads at every position.

Positions (STEER_POSITIONS): `every-step` (the paper's) steers the last position of the prompt and of every
decoding step; `prompt-once` steers only the prompt's last position, once: later tokens see the steered
position through its keys and values in the cache.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from backend.models.architecture import attention_out_proj
from backend.models.kernel import decode, greedy_policy, start
from backend.models.locks import model_lock
from backend.models.rules import check_room, model_stop_ids
from backend.models.hooks import HeadEdit, Hooks, OutputAdd
from backend.mt.selection import Head
from backend.variants import Registry, Variant


@torch.no_grad()
def steering_vectors(model, mean_clean: np.ndarray, heads: tuple[Head, ...]) -> dict[int, torch.Tensor]:
    """layer -> `[hidden]` vector from `mean_clean [layers, heads, head_dim]` restricted to `heads`."""
    device = next(model.parameters()).device
    vectors: dict[int, torch.Tensor] = {}
    for layer in sorted({layer for layer, _ in heads}):
        z = torch.zeros(mean_clean.shape[1:], dtype=torch.float32)
        for h in (h for lay, h in heads if lay == layer):
            z[h] = torch.from_numpy(np.asarray(mean_clean[layer, h], dtype=np.float32))
        proj = attention_out_proj(model, layer)
        dtype = next(proj.parameters()).dtype
        flat = z.reshape(1, -1).to(device=device, dtype=dtype)
        with model_lock(model):  # the model's own o_proj runs here
            vectors[layer] = (proj(flat) - proj(torch.zeros_like(flat)))[0].float()
    return vectors


def head_patches(mean_clean: np.ndarray, heads: tuple[Head, ...]) -> tuple[tuple[int, int, torch.Tensor], ...]:
    """(layer, head, `[head_dim]` mean clean output) for the `patch` steering mode."""
    return tuple((layer, head, torch.from_numpy(np.asarray(mean_clean[layer, head], dtype=np.float32)))
                 for layer, head in heads)


@dataclass(frozen=True)
class Intervention:
    """What to do while generating: steering vectors (layer -> `[hidden]`, times strength), head outputs
    replaced at the last position (layer, head, value), and/or heads zeroed everywhere."""

    vectors: tuple[dict[int, torch.Tensor], ...] = ()
    strength: float = 3.0
    ablate: tuple[Head, ...] = ()
    patches: tuple[tuple[int, int, torch.Tensor], ...] = ()
    once: bool = False  # steer (vectors, patches) the prompt's last position only; ablation stays everywhere

    def output_adds(self) -> list[OutputAdd]:
        return [OutputAdd(layer, vec, position=-1, scale=self.strength)
                for vectors in self.vectors for layer, vec in vectors.items()]

    def ablations(self) -> list[HeadEdit]:
        by_layer: dict[int, list[int]] = {}
        for layer, head in self.ablate:
            by_layer.setdefault(layer, []).append(head)
        return [HeadEdit(layer, tuple(sorted(h)), "zero") for layer, h in sorted(by_layer.items())]

    def patch_edits(self) -> list[HeadEdit]:
        return [HeadEdit(layer, (head,), "replace", value, position=-1) for layer, head, value in self.patches]

    def head_edits(self) -> list[HeadEdit]:
        return self.ablations() + self.patch_edits()


NONE = Intervention()


@dataclass(frozen=True)
class SteerMode(Variant):
    """`run(model, mean_clean, chosen, used) -> (Intervention, heads)`: what steering from one head map's
    `chosen` heads adds (`used`: heads earlier head maps already took), and the heads it steers with.
    `uses_strength`: whether the strength scales it (the page disables the slider otherwise)."""

    uses_strength: bool = True


STEER_MODES: Registry[SteerMode] = Registry("mt-steer-mode", "steering mode")


def _add(model, mean_clean: np.ndarray, chosen: tuple[Head, ...], used: tuple[Head, ...]):
    # Language and translation vectors are summed, as in the paper (a head may contribute to both).
    return Intervention(vectors=(steering_vectors(model, mean_clean, chosen),)), chosen


def _patch(model, mean_clean: np.ndarray, chosen: tuple[Head, ...], used: tuple[Head, ...]):
    # A head can be replaced only once: the first head map that selects it gives its value.
    chosen = tuple(h for h in chosen if h not in used)
    return Intervention(patches=head_patches(mean_clean, chosen)), chosen


# `run(intervention) -> intervention` applies the choice of steered positions.
STEER_POSITIONS: Registry[Variant] = Registry("mt-steer-positions", "steered positions")
STEER_POSITIONS.register(Variant("every-step", "Every step", "the last position of the prompt and of every decoding "
                                 "step (paper)", lambda i: dataclasses.replace(i, once=False)))
STEER_POSITIONS.register(Variant("prompt-once", "Prompt, once", "the prompt's last position only, once; later "
                                 "tokens attend to it through the cache", lambda i: dataclasses.replace(i, once=True)))

# `run(n_layers) -> range` of the layers whose heads may be selected to steer.
STEER_LAYERS: Registry[Variant] = Registry("mt-steer-layers", "layers allowed")
STEER_LAYERS.register(Variant("all", "All layers", "heads of any layer", lambda n: range(n)))
STEER_LAYERS.register(Variant("first-half", "First half", "heads of the first half of the layers",
                              lambda n: range((n + 1) // 2)))
STEER_LAYERS.register(Variant("second-half", "Second half", "heads of the second half of the layers",
                              lambda n: range((n + 1) // 2, n)))

STEER_MODES.register(SteerMode(
    "add", "Add vectors",
    "add strength × o_proj(mean clean output of the selected heads) to the attention output (paper)", _add))
STEER_MODES.register(SteerMode(
    "patch", "Patch heads", "replace the selected heads' outputs by their mean clean outputs (strength unused)",
    _patch, uses_strength=False))


@torch.no_grad()
def generate_line(model, tokenizer, prompt_ids: list[int], max_new_tokens: int,
                  intervention: Intervention = NONE, max_leading_blank: int = 3) -> str:
    """Greedy continuation under the intervention, stopped at EOS or at the first newline after some text
    (a few leading blank tokens are allowed); returns that line, stripped."""
    device = next(model.parameters()).device
    check_room(model, len(prompt_ids), max_new_tokens)
    stops = tuple(sorted(model_stop_ids(model, tokenizer)))

    def line_ended(generated: torch.Tensor) -> torch.Tensor:
        new = generated[0].tolist()
        text = tokenizer.decode(new, skip_special_tokens=True)
        ended = (text.strip() and "\n" in text.lstrip()) or (not text.strip() and len(new) >= max_leading_blank)
        return torch.tensor([bool(ended)])

    patches, adds = intervention.patch_edits(), intervention.output_adds()
    always = (intervention.ablations(), []) if intervention.once else (intervention.ablations() + patches, adds)
    with Hooks(model, head_edits=always[0], output_adds=always[1]):
        prompt = torch.tensor([prompt_ids], device=device)
        if intervention.once:
            with Hooks(model, head_edits=patches, output_adds=adds):
                decoder = start(model, prompt, max_new_tokens=max_new_tokens)
        else:
            decoder = start(model, prompt, max_new_tokens=max_new_tokens)
        out = decode(decoder, greedy_policy, max_new_tokens, stops, criteria=(line_ended,))
    new = out.row(0, keep_stop=False)
    line = tokenizer.decode(new, skip_special_tokens=True).strip().split("\n", 1)[0].strip()
    return line.strip('"').strip()  # chat models tend to quote their translation
