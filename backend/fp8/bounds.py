"""Per-head spectral bounds on attention logits and per-layer FP8 scale factors, from weights alone.

Rank-aware bound (exact worst case without RoPE, or at relative offset 0 with it):
    |S_ij| <= logit_scale * n2 * sigma(A~_h^T B~_g)
Rotation-safe bound (RoPE puts a rotation between the factors, sigma(A^T R B) <= ||A|| ||B||):
    |S_ij| <= logit_scale * n2 * ||A~_h|| * ||B~_g||
The guaranteed bound is the rotation-safe one for RoPE models, the rank-aware one otherwise; with
QK-norm both come from the QK-norm gains. Per layer, scale = fp8_max / (calibration * max_h bound):
calibration >= 1 keeps the guarantee with headroom, < 1 trades it for resolution.
Observed scores on sample texts (optional) give utilisation = observed / bound.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch

import backend.fp8.formats as formats
import backend.fp8.geometry as geometry
import backend.fp8.observed as observed_logits
import backend.fp8.samples as samples
import backend.fp8.spectral as spectral
from backend.fp8.formats import FORMATS
from backend.fp8.geometry import LayerFactors, model_factors
from backend.fp8.observed import check_max_tokens, observe
from backend.fp8.samples import SAMPLE_TEXTS
from backend.fp8.spectral import SIGMA_METHODS, PowerSettings, factor_norm, interaction_sigma
from backend.params import Config, param, same_as
from backend.progress import Progress, scaled, silent
from backend.verbs import Verb, register


@dataclass(frozen=True)
class BoundsConfig(Config):
    method: str = param("power", "how sigma is computed; " + SIGMA_METHODS.help_text(), choices=SIGMA_METHODS)
    max_iter: int = same_as(PowerSettings, "max_iter")
    tol: float = same_as(PowerSettings, "tol")
    seed: int = same_as(PowerSettings, "seed")
    calibration: float = param(1.0, "alpha in scale = fp8_max / (alpha * bound); >= 1 keeps the guarantee", gt=0,
                               lt=math.inf)  # finite: an infinite alpha would make every scale 0
    fp8_format: str = param("e4m3", "FP8 format of the scaled logits", choices=FORMATS)
    verify: bool = param(True, "check sigma against the exact one (thin QR + r x r SVD) and report the deviation "
                         "(--no-verify: skip the check)")
    n_texts: int = param(4, "sample texts for observed scores (0: weights only)", ge=0, le=len(SAMPLE_TEXTS))
    max_tokens: int = param(64, "tokens per sample text", ge=2)


@dataclass(frozen=True)
class BoundsResult:
    """Shapes: L layers, H query heads, KV key heads. Bounds and observed scores are in logit units."""

    model: str  # display name
    model_type: str
    hidden_size: int
    head_dim: int
    n_kv_heads: int
    rope: bool
    qk_norm: bool
    augmented: bool  # biases folded in through [u; 1]
    method: str
    iterations: int
    sigma: np.ndarray  # [L, H] sigma of the folded interaction A~_h^T B~_g
    norm_q: np.ndarray  # [L, H] ||A~_h||
    norm_k: np.ndarray  # [L, KV] ||B~_g||
    bound_rank_aware: np.ndarray  # [L, H]
    bound_rotation_safe: np.ndarray  # [L, H]
    bound: np.ndarray  # [L, H] the guaranteed one
    layer_bound: np.ndarray  # [L]
    scale: np.ndarray  # [L] fp8_max / (calibration * layer_bound)
    fp8_format: str
    fp8_max: float
    calibration: float
    check_max_rel_error: float  # max |sigma - sigma_exact| / sigma_exact (nan when not verified)
    observed: np.ndarray  # [L, H] max |S_ij| on sample texts (nan without texts)
    n_tokens: int
    weights_seconds: float  # time of the weights-only part (factors, sigma, norms, scales)

    @property
    def observed_layer(self) -> np.ndarray:
        return self.observed.max(axis=1)

    @property
    def utilisation(self) -> np.ndarray:
        """[L] observed max / guaranteed bound: the fraction of the FP8 range real logits use."""
        return self.observed_layer / self.layer_bound

    def table(self) -> list[dict]:
        """One row per layer (what the page exports)."""
        rows = []
        for layer in range(len(self.layer_bound)):
            observed = float(self.observed_layer[layer])
            rows.append({"layer": layer, "sigma_max": float(self.sigma[layer].max()),
                         "bound_rank_aware": float(self.bound_rank_aware[layer].max()),
                         "bound_rotation_safe": float(self.bound_rotation_safe[layer].max()),
                         "bound": float(self.layer_bound[layer]), "scale": float(self.scale[layer]),
                         "observed_max": _num(observed), "utilisation": _num(self.utilisation[layer]),
                         "headroom_bits": _num(-np.log2(self.utilisation[layer])) if observed > 0 else None})
        return rows

    def summary(self) -> dict:
        finite = np.isfinite(self.utilisation)
        return {"model": self.model, "layers": len(self.layer_bound), "rope": self.rope, "qk_norm": self.qk_norm,
                "method": self.method, "iterations": self.iterations,
                "check_max_rel_error": _num(self.check_max_rel_error),
                "weights_seconds": round(self.weights_seconds, 3),
                "fp8_format": self.fp8_format, "calibration": self.calibration,
                "max_bound": float(self.layer_bound.max()), "max_observed": float(np.nanmax(self.observed))
                if finite.any() else None,
                "max_utilisation": float(self.utilisation[finite].max()) if finite.any() else None,
                "bound_ever_exceeded": bool((self.observed > self.bound).any())}


def _num(x) -> float | None:
    """JSON-safe number: NaN/inf (no observation) become None."""
    return float(x) if np.isfinite(x) else None


def _stack(factors: list[LayerFactors]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.stack([f.a for f in factors]), torch.stack([f.b for f in factors])


def weight_bounds(model, config: BoundsConfig, progress: Progress = silent) -> dict:
    """The weights-only part: sigma, factor norms, bounds `[L, H]` (numpy), iterations, check error."""
    progress(0.0, "folding norm gains into W_Q, W_K")
    factors = model_factors(model)
    a, b = _stack(factors)  # [L, kv, g, r, d'], [L, kv, r, d']
    n_layers, kv, group = a.shape[:3]
    settings = PowerSettings(config.max_iter, config.tol, config.seed)
    progress(0.2, f"sigma of W_Q W_K^T per head ({config.method})")
    out = interaction_sigma(a, b, config.method, settings)
    sigma = out.sigma.reshape(n_layers, kv * group)
    progress(0.5, "factor norms (rotation-safe bound)")
    with torch.no_grad():
        norm_q = factor_norm(a).reshape(n_layers, kv * group)
        norm_k = factor_norm(b)  # [L, kv]
    check = float("nan")
    if config.verify:
        progress(0.7, "exact check: thin QR + small SVD")
        exact = interaction_sigma(a, b, "exact").sigma.reshape(n_layers, kv * group)
        check = float(((sigma - exact).abs() / exact.clamp_min(1e-30)).max())
    logit_scale = torch.tensor([f.logit_scale * f.n2 for f in factors])[:, None]
    rank_aware = logit_scale * sigma
    rotation_safe = logit_scale * norm_q * norm_k.repeat_interleave(group, dim=1)
    if factors[0].qk_gain_rank_aware is not None:  # QK-norm: the gains bound the normalised q, k
        qk_scale = torch.tensor([f.logit_scale for f in factors])[:, None]
        rank_aware = qk_scale * torch.stack([f.qk_gain_rank_aware for f in factors])
        rotation_safe = qk_scale * torch.stack([f.qk_gain_rotation_safe for f in factors])
    rotation_safe = torch.maximum(rotation_safe, rank_aware)  # >= in exact arithmetic; guards rounding
    guaranteed = rotation_safe if factors[0].rope else rank_aware
    progress(1.0, "bounds done")
    np_ = lambda t: t.detach().float().cpu().numpy()  # noqa: E731
    return {"sigma": np_(sigma), "norm_q": np_(norm_q), "norm_k": np_(norm_k), "rank_aware": np_(rank_aware),
            "rotation_safe": np_(rotation_safe), "bound": np_(guaranteed), "iterations": out.iterations,
            "check": check, "rope": factors[0].rope, "qk_norm": factors[0].qk_gain_rank_aware is not None,
            "augmented": factors[0].augmented}


def compute_bounds(handle, config: BoundsConfig, progress: Progress = silent) -> BoundsResult:
    fmt = FORMATS.get(config.fp8_format)
    if config.n_texts:  # the context rule bounds max_tokens: refused before the weight bounds are computed
        check_max_tokens(handle.model, config.max_tokens)
    start = time.perf_counter()
    w = weight_bounds(handle.model, config, scaled(progress, 0.0, 0.4 if config.n_texts else 1.0))
    layer_bound = w["bound"].max(axis=1)
    scale = (fmt.max_value / (config.calibration * layer_bound)).astype(np.float32)
    weights_seconds = time.perf_counter() - start
    info = handle.info
    observed = np.full((info.n_layers, info.n_heads), np.nan, dtype=np.float32)
    n_tokens = 0
    if config.n_texts:
        obs = observe(handle.model, handle.tokenizer, config.n_texts, config.max_tokens,
                      scaled(progress, 0.4, 1.0))
        observed, n_tokens = obs.max_abs, obs.n_tokens
    return BoundsResult(model=handle.display_name, model_type=info.model_type, hidden_size=info.hidden_size,
                        head_dim=info.head_dim, n_kv_heads=info.n_kv_heads, rope=w["rope"], qk_norm=w["qk_norm"],
                        augmented=w["augmented"], method=config.method, iterations=w["iterations"], sigma=w["sigma"],
                        norm_q=w["norm_q"], norm_k=w["norm_k"], bound_rank_aware=w["rank_aware"],
                        bound_rotation_safe=w["rotation_safe"], bound=w["bound"],
                        layer_bound=layer_bound.astype(np.float32), scale=scale, fp8_format=fmt.name,
                        fp8_max=fmt.max_value, calibration=config.calibration, check_max_rel_error=w["check"],
                        observed=observed, n_tokens=n_tokens, weights_seconds=weights_seconds)


# The code a bounds result depends on: this module and the fp8 modules it computes with (the head drill-down and
# the simulation build on the same bounds and read these too).
BOUNDS_READS = (sys.modules[__name__], formats, geometry, observed_logits, samples, spectral)

bounds = register(Verb("fp8", "bounds", BoundsConfig, compute_bounds,
                       "per-head bounds, per-layer FP8 scales and observed utilisation of a loaded model",
                       reads=BOUNDS_READS))
