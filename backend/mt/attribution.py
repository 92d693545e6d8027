"""Gradient-based approximations of the patching map, computed with captum.

Each head gets a gate g[l, h]; the corrupted run's head output at the last position becomes
z_corrupt + g * (mean_clean - z_corrupt) (a HeadEdit "add"), so g = 0 is the corrupted run and
g = 1 is that head patched. The score of a head is then an attribution to its gate:
- attribution-patching: dF/dg at g = 0, i.e. grad · (clean - corrupt) (one forward + backward);
  computed as captum InputXGradient at gate value 1 of the shifted gate s = g + 1;
- integrated-gradients: captum IntegratedGradients on g from 0 to 1 (all heads move together
  along the path, so the attributions sum to the effect of patching every head at once).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.models.hooks import HeadEdit, Hooks
from backend.models.rules import forward_logits
from backend.variants import Registry, Variant


def _gated_forward(model, prefix: tuple[int, ...], target: int, delta: torch.Tensor, offset: float):
    """F(gates `[batch, layers, heads]`) -> log p(target) `[batch]` with heads moved by (gate - offset) * delta."""
    device = next(model.parameters()).device
    ids = torch.tensor([list(prefix)], device=device)
    delta = delta.to(device)
    n_layers, n_heads, _ = delta.shape

    def forward(gates: torch.Tensor) -> torch.Tensor:
        b = gates.shape[0]
        edits = [HeadEdit(layer, tuple(range(n_heads)), "add",
                          ((gates[:, layer] - offset)[..., None] * delta[layer]).unsqueeze(1), position=-1)
                 for layer in range(n_layers)]
        with Hooks(model, head_edits=edits):
            # logits_to_keep=1: only the last position is scored (Gemma: 262k vocab x every position otherwise)
            logits = forward_logits(model, ids.expand(b, -1), logits_to_keep=1)[:, -1]
        return torch.log_softmax(logits, dim=-1)[:, target]

    return forward


def _attribution_patching(model, prefix, target, delta, steps: int) -> np.ndarray:
    from captum.attr import InputXGradient  # imported when used: half a second off the app's first page

    forward = _gated_forward(model, prefix, target, delta, offset=1.0)
    gates = torch.ones(1, *delta.shape[:2], device=next(model.parameters()).device, requires_grad=True)
    return InputXGradient(forward).attribute(gates)[0].detach().cpu().double().numpy()


def _integrated_gradients(model, prefix, target, delta, steps: int) -> np.ndarray:
    from captum.attr import IntegratedGradients

    forward = _gated_forward(model, prefix, target, delta, offset=0.0)
    gates = torch.ones(1, *delta.shape[:2], device=next(model.parameters()).device, requires_grad=True)
    ig = IntegratedGradients(forward)
    attr = ig.attribute(gates, baselines=torch.zeros_like(gates), n_steps=steps, internal_batch_size=steps)
    return attr[0].detach().cpu().double().numpy()


@dataclass(frozen=True)
class AttributionMethod(Variant):
    """`run(model, prefix, target, delta, steps) -> [layers, heads]`. `complete`: the attributions sum to the
    effect of patching every head at once (the completeness axiom of integrated gradients)."""

    complete: bool = False


ATTRIBUTIONS: Registry[AttributionMethod] = Registry("mt-attribution", "attribution method")
ATTRIBUTIONS.register(AttributionMethod(
    "attribution-patching", "Attribution patching",
    "grad · (clean - corrupt) at the corrupted run: one backward pass", _attribution_patching))
ATTRIBUTIONS.register(AttributionMethod(
    "integrated-gradients", "Integrated gradients",
    "captum IntegratedGradients along corrupted -> clean, all heads together", _integrated_gradients, complete=True))


def attribute(model, prefix: tuple[int, ...], target: int, delta: torch.Tensor, method: str,
              steps: int = 8) -> np.ndarray:
    """`[layers, heads]` attribution of log p(target) to each head's move towards its mean clean value."""
    run = ATTRIBUTIONS.get(method).run
    with torch.enable_grad():
        return run(model, prefix, target, delta, steps)


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman correlation of two head maps (NaN when either is constant)."""
    x, y = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    from scipy.stats import spearmanr  # here: scipy.stats costs every process that loads the features ~0.5 s

    return float(spearmanr(x, y).statistic)
