"""Spectral norms of per-head query-key interactions M_h = A_h^T B_g, never forming the d x d matrix.

Factors are grouped for grouped-query attention: queries `a [..., kv, group, r, d]`, keys `b [..., kv, r, d]`;
every query head of a group uses its group's key factor by broadcasting (no key expansion). Leading
dimensions (layers) are batched. Three interchangeable methods, registered by name in `SIGMA_METHODS`, each
`run(a, b, settings) -> SigmaOut` (tests/fp8/test_contracts.py holds every one to the exact SVD):

- "power": implicit (block) power iteration on M^T M v = B^T (A A^T (B v)), O(r d) per vector and step
  (the r x r query Gram A A^T is formed once; M itself never is);
- "exact": thin QR of A^T and B^T, then the singular values of the small r x r product R_A R_B^T;
- "dense": forms M (d x d) and takes its full SVD; the reference the benchmark compares against.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from backend.errors import UserError
from backend.params import Config, param
from backend.variants import Registry, Variant


_NOISE = 16 * torch.finfo(torch.float32).eps  # relative rounding level of a Ritz value in fp32


@dataclass(frozen=True)
class PowerSettings(Config):
    max_iter: int = param(500, "most power iterations", ge=1)
    tol: float = param(1e-6, "stop when the estimated remaining relative error of sigma^2 is below this", gt=0)
    seed: int = param(0, "seed of the power iteration's start vectors")
    block: int = param(8, "vectors iterated together (block power method; 1: a single vector)", ge=1)


@dataclass(frozen=True)
class SigmaOut:
    """sigma `[..., kv, group]` (fp32) and the iterations used (0 for direct methods)."""

    sigma: torch.Tensor
    iterations: int


def _power(gram: Callable[[torch.Tensor], torch.Tensor], shape: tuple[int, ...], settings: PowerSettings
           ) -> SigmaOut:
    """sqrt of the largest eigenvalue of a PSD operator per batch entry, by block power iteration.

    `gram` maps `[..., d, p]` to `[..., d, p]`; `shape` is `(..., d)`. Each step applies the operator to
    an orthonormal block V and takes the top Ritz value of V^T G V (a lower bound rising to lambda_max;
    with p vectors the error shrinks like (lambda_(p+1) / lambda_1)^k instead of (lambda_2 / lambda_1)^k).
    The stopping rule extrapolates the remaining error from the ratio of successive changes, so slowly
    converging heads keep the loop going until they are accurate too.
    """
    p = min(settings.block, shape[-1])
    gen = torch.Generator().manual_seed(settings.seed)
    v = torch.linalg.qr(torch.randn((*shape, p), generator=gen, dtype=torch.float32)).Q
    lam = torch.zeros(shape[:-1])
    prev_change = None
    for step in range(1, settings.max_iter + 1):
        u = gram(v)
        new = torch.linalg.eigvalsh(v.transpose(-1, -2) @ u)[..., -1]  # top Ritz value
        v = torch.linalg.qr(u).Q if p > 1 else u / u.norm(dim=-2, keepdim=True).clamp_min(1e-30)
        change = (new - lam).abs()
        lam = new
        scale = lam.abs().clamp_min(torch.finfo(torch.float32).tiny)
        if prev_change is not None:
            ratio = (change / prev_change.clamp_min(1e-30)).clamp(0.0, 0.999)
            remaining = change * ratio / (1 - ratio)
            done = (remaining <= settings.tol * scale) & (change <= 10 * settings.tol * scale)
            if bool((done | (change <= _NOISE * scale)).all()):  # fp32 rounding: nothing left to gain
                break
        prev_change = change
    return SigmaOut(sigma=lam.clamp_min(0).sqrt(), iterations=step)


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dim() < 4 or b.dim() != a.dim() - 1 or a.shape[-2:] != b.shape[-2:] or a.shape[:-3] != b.shape[:-2] \
            or a.shape[-4] != b.shape[-3]:
        raise UserError(f"Factor shapes do not match: queries {tuple(a.shape)}, keys {tuple(b.shape)} "
                        "(expected [..., kv, group, r, d] and [..., kv, r, d]).")


def _shared(b: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """b `[..., kv, m, n]` applied to every head of its group, x `[..., kv, g, n, p]` -> `[..., kv, g, m, p]`.
    The group's heads become extra columns of one product: the key factor is never expanded."""
    *lead, kv, g, n, p = x.shape
    cols = x.permute(*range(len(lead)), -4, -2, -3, -1).reshape(*lead, kv, n, g * p)
    out = b @ cols
    return out.reshape(*lead, kv, out.shape[-2], g, p).permute(*range(len(lead)), -4, -2, -3, -1)


def interaction_power(a: torch.Tensor, b: torch.Tensor, settings: PowerSettings = PowerSettings()) -> SigmaOut:
    _check(a, b)
    gram_q = a @ a.transpose(-1, -2)  # A A^T, r x r per head: A (A^T y) in one small product per step
    b_t = b.transpose(-1, -2).contiguous()

    def gram(v):  # v [..., kv, g, d, p] -> M^T M v = B^T (A A^T (B v)), via r-dimensional intermediates
        return _shared(b_t, gram_q @ _shared(b, v))

    return _power(gram, (*a.shape[:-2], a.shape[-1]), settings)


def interaction_exact(a: torch.Tensor, b: torch.Tensor, settings: PowerSettings = PowerSettings()) -> SigmaOut:
    _check(a, b)
    r_a = torch.linalg.qr(a.transpose(-1, -2), mode="r").R  # [..., kv, g, r, r]
    r_b = torch.linalg.qr(b.transpose(-1, -2), mode="r").R  # [..., kv, r, r]
    small = r_a @ r_b.transpose(-1, -2).unsqueeze(-3)
    return SigmaOut(sigma=torch.linalg.svdvals(small)[..., 0], iterations=0)


def interaction_dense(a: torch.Tensor, b: torch.Tensor, settings: PowerSettings = PowerSettings()) -> SigmaOut:
    _check(a, b)
    formed = a.transpose(-1, -2) @ b.unsqueeze(-3)  # [..., kv, g, d, d]
    return SigmaOut(sigma=torch.linalg.svdvals(formed)[..., 0], iterations=0)


SIGMA_METHODS: Registry[Variant] = Registry("fp8-sigma-methods", "sigma method")
SIGMA_METHODS.register(Variant(name="power", label="power iteration", help="implicit power iteration, O(r d) per step",
                               run=interaction_power))
SIGMA_METHODS.register(Variant(name="exact", label="QR + small SVD",
                               help="thin QR of both factors, then the SVD of an r x r product", run=interaction_exact))
SIGMA_METHODS.register(Variant(name="dense", label="dense SVD (reference)", help="SVD of the formed d x d matrix (slow "
                               "reference)", run=interaction_dense))


def factor_norm(x: torch.Tensor) -> torch.Tensor:
    """Spectral norm of each `[r, d]` factor in `x [..., r, d]`: sqrt of the top eigenvalue of the r x r Gram."""
    return torch.linalg.eigvalsh(x @ x.transpose(-1, -2))[..., -1].clamp_min(0).sqrt()


def interaction_sigma(a: torch.Tensor, b: torch.Tensor, method: str,
                      settings: PowerSettings = PowerSettings()) -> SigmaOut:
    run = SIGMA_METHODS.get(method).run
    with torch.no_grad():
        return run(a.float(), b.float(), settings)
