"""A simulated training transient: delayed (amax-history) FP8 scaling vs the geometry-aware scale.

Step t scores one sample text (t mod n) with one layer's real attention logits, multiplied by a_t^2, where
a_t multiplies that layer's query and key activations: a small seeded log-normal drift every step, and a
spike factor for `spike_length` steps from `spike_step` (think of a norm-gain jump after an optimizer step;
the gain folds into both factors, so logits scale by a_t^2 and so does the weight-derived bound).

- delayed scaling: scale_t = fp8_max / (max(amax of the last `history_len` steps) * 2^margin); the history
  starts with step 0's own amax (one calibration step) and learns of the spike only after it happened;
- geometry-aware: scale_t = fp8_max / (calibration * bound_t), bound_t recomputed from the current weights
  (bound_0 * a_t^2), so the spike is covered at the step it happens.
Each step's scaled logits are clamped and cast to FP8; overflows are counted before the clamp.
"""
from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from backend.fp8.bounds import BOUNDS_READS, BoundsConfig, bounds
from backend.fp8.formats import FORMATS, quantise
from backend.fp8.observed import check_max_tokens, layer_score_samples
from backend.fp8.samples import SAMPLE_TEXTS
from backend.params import Config, param, require, same_as
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.verbs import Verb, register


@dataclass(frozen=True)
class SimulateConfig(Config):
    """`layer` may count from the end (-1: the last); its range is checked against the model in `simulate`."""

    layer: int = param(0, "layer whose logits are simulated (-1: the last)")
    n_steps: int = param(40, "simulated steps", ge=2, le=10_000)
    spike_step: int = param(20, "step at which the spike starts", ge=0)
    spike_factor: float = param(4.0, "multiplies q and k (logits x factor^2)", gt=0,
                                hint="(spike factor and calibration must be positive)")
    spike_length: int = param(1, "steps the spike lasts", ge=1)
    history_len: int = param(16, "amax history length of delayed scaling", ge=1)
    margin: int = param(0, "delayed scaling margin (powers of two)")
    calibration: float = same_as(BoundsConfig, "calibration")
    drift: float = param(0.02, "std of the per-step log-normal activation drift", ge=0)
    fp8_format: str = same_as(BoundsConfig, "fp8_format")
    method: str = same_as(BoundsConfig, "method")
    n_texts: int = param(4, "sample texts the steps cycle through", ge=1, le=len(SAMPLE_TEXTS))
    max_tokens: int = same_as(BoundsConfig, "max_tokens")
    seed: int = param(0, "seed of the activation drift")

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.spike_step < self.n_steps, f"The spike must start inside the simulated steps (spike_step "
                f"{self.spike_step} >= n_steps {self.n_steps}).")


@dataclass(frozen=True)
class SimulateResult:
    """Per-step arrays `[steps]`. Limits are the largest |S| each scale represents (fp8_max / scale)."""

    model: str
    layer: int
    fp8_format: str
    fp8_max: float
    spike_step: int
    spike_factor: float
    history_len: int
    activation_scale: np.ndarray  # a_t
    amax: np.ndarray  # observed max |S| at step t
    bound: np.ndarray  # guaranteed bound at step t
    limit_geometry: np.ndarray
    limit_delayed: np.ndarray
    overflow_geometry: np.ndarray  # int counts
    overflow_delayed: np.ndarray
    underflow_geometry: np.ndarray
    underflow_delayed: np.ndarray
    rel_error_geometry: np.ndarray
    rel_error_delayed: np.ndarray
    nonfinite_unclamped_delayed: int  # what skipping the clamp would have cost delayed scaling
    n_scores: np.ndarray  # logits per step

    def summary(self) -> dict:
        return {"model": self.model, "layer": self.layer, "spike_step": self.spike_step,
                "spike_factor": self.spike_factor, "overflows_geometry": int(self.overflow_geometry.sum()),
                "overflows_delayed": int(self.overflow_delayed.sum()),
                "overflows_delayed_at_spike": int(self.overflow_delayed[self.spike_step]),
                "steps_with_overflow_delayed": int((self.overflow_delayed > 0).sum()),
                "steps_with_overflow_geometry": int((self.overflow_geometry > 0).sum()),
                "mean_rel_error_geometry": float(self.rel_error_geometry.mean()),
                "mean_rel_error_delayed": float(self.rel_error_delayed.mean()),
                "nonfinite_unclamped_delayed": self.nonfinite_unclamped_delayed}

    def table(self) -> list[dict]:
        return [{"step": t, "activation_scale": float(self.activation_scale[t]), "amax": float(self.amax[t]),
                 "bound": float(self.bound[t]), "limit_geometry": float(self.limit_geometry[t]),
                 "limit_delayed": float(self.limit_delayed[t]), "overflow_geometry": int(self.overflow_geometry[t]),
                 "overflow_delayed": int(self.overflow_delayed[t]), "rel_error_geometry":
                 float(self.rel_error_geometry[t]), "rel_error_delayed": float(self.rel_error_delayed[t])}
                for t in range(len(self.amax))]


def activation_schedule(config: SimulateConfig) -> np.ndarray:
    rng = np.random.default_rng(config.seed)
    a = np.exp(config.drift * rng.standard_normal(config.n_steps))
    a[config.spike_step:config.spike_step + config.spike_length] *= config.spike_factor
    return a.astype(np.float64)


def run_simulation(handle, config: SimulateConfig, progress: Progress = silent) -> SimulateResult:
    fmt, layer = FORMATS.get(config.fp8_format), config.layer % handle.info.n_layers
    check_max_tokens(handle.model, config.max_tokens)  # the context rule, before the weight bound
    progress(0.0, "weight bound of the layer")
    bound_cfg = BoundsConfig(method=config.method, calibration=config.calibration, fp8_format=config.fp8_format,
                             verify=False, n_texts=0)
    bound0 = float(bounds(handle, bound_cfg, scaled(progress, 0.0, 0.3)).value.layer_bound[layer])
    progress(0.3, f"layer {layer} logits on sample texts")
    samples = layer_score_samples(handle.model, handle.tokenizer, layer, config.n_texts, config.max_tokens)
    a = activation_schedule(config)
    n = config.n_steps
    out = {k: np.zeros(n) for k in ("amax", "bound", "lim_g", "lim_d", "rel_g", "rel_d")}
    counts = {k: np.zeros(n, dtype=np.int64) for k in ("of_g", "of_d", "uf_g", "uf_d", "n")}
    history: deque[float] = deque(maxlen=config.history_len)
    nonfinite = 0
    for t in range(n):
        values = samples[t % len(samples)] * np.float32(a[t] ** 2)
        amax = float(np.abs(values).max())
        if not history:
            history.append(amax)  # calibration step: delayed scaling starts from step 0's own amax
        scale_d = fmt.max_value / (max(history) * 2.0 ** config.margin)
        bound_t = bound0 * a[t] ** 2
        scale_g = fmt.max_value / (config.calibration * bound_t)
        qg, qd = quantise(values, scale_g, fmt), quantise(values, scale_d, fmt)
        history.append(amax)
        out["amax"][t], out["bound"][t] = amax, bound_t
        out["lim_g"][t], out["lim_d"][t] = fmt.max_value / scale_g, fmt.max_value / scale_d
        out["rel_g"][t], out["rel_d"][t] = qg.rel_error, qd.rel_error
        counts["of_g"][t], counts["of_d"][t] = qg.overflows, qd.overflows
        counts["uf_g"][t], counts["uf_d"][t], counts["n"][t] = qg.underflows, qd.underflows, values.size
        nonfinite += qd.nonfinite_unclamped
        progress(0.3 + 0.7 * (t + 1) / n, f"step {t + 1}/{n}")
    return SimulateResult(model=handle.display_name, layer=layer, fp8_format=fmt.name, fp8_max=fmt.max_value,
                          spike_step=config.spike_step, spike_factor=config.spike_factor,
                          history_len=config.history_len, activation_scale=a, amax=out["amax"], bound=out["bound"],
                          limit_geometry=out["lim_g"], limit_delayed=out["lim_d"], overflow_geometry=counts["of_g"],
                          overflow_delayed=counts["of_d"], underflow_geometry=counts["uf_g"],
                          underflow_delayed=counts["uf_d"], rel_error_geometry=out["rel_g"],
                          rel_error_delayed=out["rel_d"], nonfinite_unclamped_delayed=nonfinite, n_scores=counts["n"])


# The transient starts from the layer's stored bound and scores real logits with the bounds' code: it reads both.
simulate_verb = register(Verb("fp8", "simulate", SimulateConfig, run_simulation, "a training transient on one "
                              "layer: delayed (amax-history) FP8 scaling vs the geometry-aware scale",
                              reads=(sys.modules[__name__], *BOUNDS_READS)))


def simulate(handle, config: SimulateConfig = SimulateConfig(), progress: Progress = silent
             ) -> Computed[SimulateResult]:
    """Cached transient simulation for one layer of a loaded model."""
    n_layers = handle.info.n_layers
    require(-n_layers <= config.layer < n_layers,
            f"Layer {config.layer} is out of range (the model has {n_layers} layers).")
    config = replace(config, layer=config.layer % handle.info.n_layers)  # one cache entry per layer
    return simulate_verb(handle, config, progress)
