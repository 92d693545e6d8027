"""Input attribution methods, computed with captum and registered by name: each splits f, the target token's
probability (or logit) after the input, into one score per input token.

- `saliency`: gradient × input on the token embeddings (captum `InputXGradient`), summed over the embedding
  dimensions: signed, a first-order share of f (not captum's `Saliency`, which is |gradient| and has no sign).
- `integrated_gradients`: captum `LayerIntegratedGradients` on the embedding layer, from the baseline's embeddings
  to the input's, summed over the embedding dimensions; the scores sum to f(input) − f(baseline) up to the
  reported convergence delta.
- `ablation`: captum `FeatureAblation`, one token at a time replaced by the baseline token: f(input) − f(ablated).

The baseline replaces every token by the tokenizer's unk token (its pad or eos when it has none), as inseq's
does, but keeps special tokens (a BOS stays a BOS; inseq keeps only eos), so a BOS scores 0 here. Every forward and backward runs under the model's lock, only the last position is read out.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from backend.models.locks import model_lock
from backend.variants import Registry, Variant

FUNCTIONS = ("probability", "logit")
CHUNK = 16  # rows per forward for the batched methods: bounded activation memory on long prompts

Score = Callable[[torch.Tensor], torch.Tensor]  # next-token logits [B, V] -> f [B]


@dataclass(frozen=True)
class Scores:
    scores: np.ndarray  # [T] float64, one per input token
    delta: float | None  # integrated gradients: sum(scores) − (f(input) − f(baseline)); None for the others


def score_of(target: int, function: str) -> Score:
    if function == "probability":
        return lambda logits: torch.softmax(logits.float(), dim=-1)[:, target]
    return lambda logits: logits.float()[:, target]


def from_ids(model: nn.Module, score: Score) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda ids: score(model(input_ids=ids, logits_to_keep=1).logits[:, -1])


def from_embeds(model: nn.Module, score: Score) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda embeds: score(model(inputs_embeds=embeds, logits_to_keep=1).logits[:, -1])


def gradient_x_input(model: nn.Module, ids: torch.Tensor, baseline: torch.Tensor, score: Score,
                     steps: int) -> Scores:
    from captum.attr import InputXGradient  # imported when used: captum costs the app's first page

    embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    attr = InputXGradient(from_embeds(model, score)).attribute(embeds)
    return Scores(attr[0].detach().double().sum(-1).cpu().numpy(), None)


def integrated_gradients(model: nn.Module, ids: torch.Tensor, baseline: torch.Tensor, score: Score,
                         steps: int) -> Scores:
    from captum.attr import LayerIntegratedGradients

    lig = LayerIntegratedGradients(from_ids(model, score), model.get_input_embeddings())
    attr, delta = lig.attribute(ids, baselines=baseline, n_steps=steps, internal_batch_size=min(steps, CHUNK),
                                return_convergence_delta=True)
    return Scores(attr[0].detach().double().sum(-1).cpu().numpy(), float(delta.reshape(-1)[0]))


def ablation(model: nn.Module, ids: torch.Tensor, baseline: torch.Tensor, score: Score, steps: int) -> Scores:
    from captum.attr import FeatureAblation

    mask = torch.arange(ids.shape[1], device=ids.device)[None]  # each token its own feature
    attr = FeatureAblation(from_ids(model, score)).attribute(ids, baselines=baseline, feature_mask=mask,
                                                             perturbations_per_eval=min(ids.shape[1], CHUNK))
    return Scores(attr[0].detach().double().cpu().numpy(), None)


@dataclass(frozen=True)
class AttributionMethod(Variant):
    """`run(model, ids [1, T], baseline [1, T], score, steps) -> Scores`. complete: the scores sum to
    f(input) − f(baseline) up to `Scores.delta` (integrated gradients' completeness)."""

    complete: bool = False


ATTRIBUTIONS: Registry[AttributionMethod] = Registry("inspect-attribution", "attribution method")
ATTRIBUTIONS.register(AttributionMethod(
    "saliency", "Gradient × input", "gradient of f with respect to each token's embedding times that embedding "
    "(captum InputXGradient), summed over the embedding: one backward pass", gradient_x_input))
ATTRIBUTIONS.register(AttributionMethod(
    "integrated_gradients", "Integrated gradients", "captum LayerIntegratedGradients on the embeddings, baseline "
    "to input; sums to f(input) − f(baseline) up to the convergence delta shown", integrated_gradients,
    complete=True))
ATTRIBUTIONS.register(AttributionMethod(
    "ablation", "Token ablation", "f(input) − f(input with the token replaced by the baseline token), one token at "
    "a time (captum FeatureAblation)", ablation))


def attribute(model: nn.Module, method: str, ids: torch.Tensor, baseline: torch.Tensor, target: int,
              function: str, steps: int) -> tuple[Scores, float, float]:
    """(scores, f(input), f(baseline)) for one target token after `ids` `[1, T]`, under the model's lock."""
    score = score_of(target, function)
    with model_lock(model):
        with torch.no_grad():
            ends = from_ids(model, score)(torch.cat([ids, baseline]))
        with torch.enable_grad():
            found = ATTRIBUTIONS.get(method).run(model, ids, baseline, score, steps)
    return found, float(ends[0]), float(ends[1])


def baseline_ids(tokenizer, ids: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The baseline `[1, T]` and its token id: unk (or pad, or eos) everywhere but on special tokens."""
    fill = next(i for i in (tokenizer.unk_token_id, tokenizer.pad_token_id, tokenizer.eos_token_id, 0)
                if i is not None)
    special = torch.tensor(sorted(set(tokenizer.all_special_ids) - {fill}) or [-1], device=ids.device)
    return torch.where(torch.isin(ids, special), ids, torch.full_like(ids, fill)), int(fill)
