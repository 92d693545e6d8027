"""Drill-downs of one position of a traced rollout: both models' next-token distributions there, every divergence,
and whether the intervention gate fires there and why.

`position` reads both models' top-k at every position of the traced rollout (`rollout_topk`: the same
teacher-forced forward `score` used, once per rollout, stored), so its divergences are the trace's values there. `gate_at` replays the guided policy's gate (`SignalGate`,
calibrated on the base rollouts of the training problems) along the rollout up to the position, as if no earlier
takeover had changed it: the values compared are the trace's signal there, tau, lambda and the window's mean.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

import backend.disagreement.analysis as analysis
import backend.disagreement.divergences as divergences
import backend.disagreement.rollout as rollout_module
from backend.disagreement.analysis import TraceConfig, problem_of, trace
from backend.disagreement.calibration import CalibrationConfig, GateConfig, calibration
from backend.disagreement.divergences import SIGNALS, token_divergences
from backend.disagreement.guided import TAKEOVER_READS, InterveneConfig
from backend.disagreement.intervention import SignalGate
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.rollout import prompt_ids, rollout_logprobs
from backend.disagreement.scoring import SOURCES, ScoredRollout
from backend.errors import UserError
from backend.params import Config, param, same_as
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.store.artifacts import ComputedMany
from backend.verbs import Verb


@dataclass(frozen=True)
class PositionConfig(Config):
    trace: TraceConfig
    position: int = param(0, "index of the generated token on the rollout (0: the first)", ge=0)
    source: str = param("base", "the rollout: the base model's or the reasoning model's", choices=SOURCES)
    top_k: int = param(10, "tokens listed per model", ge=1, le=100)


@dataclass(frozen=True)
class TopToken:
    token: str
    id: int
    prob: float
    logprob: float  # nats


@dataclass(frozen=True)
class PositionResult:
    """Position `position` of the `source` rollout: the prefix before it, the token written there, both
    distributions' top-k and every signal (nats) between them."""

    source: str
    position: int
    length: int  # tokens in the rollout
    prefix: str  # the rollout's text before the position
    token: str
    token_id: int
    base_top: tuple[TopToken, ...]
    reasoning_top: tuple[TopToken, ...]
    signals: dict[str, float]  # every SIGNALS name -> value at the position
    logp_base: float  # log p of the written token under each model
    logp_reason: float
    differs: bool  # the two greedy tokens differ

    def to_json(self) -> dict:
        top = lambda ts: [{"token": t.token, "id": t.id, "prob": t.prob, "logprob": t.logprob} for t in ts]  # noqa: E731
        return {"source": self.source, "position": self.position, "length": self.length, "prefix": self.prefix,
                "token": self.token, "token_id": self.token_id, "base_top": top(self.base_top),
                "reasoning_top": top(self.reasoning_top), "divergences": self.signals,
                "logp_base": self.logp_base, "logp_reason": self.logp_reason, "greedy_tokens_differ": self.differs}


def rollout_of(pair: Pair, config: TraceConfig, source: str, position: int) -> ScoredRollout:
    """The traced rollout (cached verb), after checking the position lies on it."""
    traced = trace(pair, config).value
    r = traced.base if source == "base" else traced.reasoning
    if not 0 <= position < r.length:
        raise UserError(f"Position {position} is out of range: the {source} rollout has {r.length} tokens "
                        f"(positions 0 to {r.length - 1}).")
    return r


@dataclass(frozen=True)
class RolloutTopK:
    """Both models' top-k next tokens `[L, k]` (ids, log-probs) at every position of one rollout, with every signal
    `{name: [L]}` and the written token's log-probs `[L]`: one teacher-forced forward per model, so every
    position of a traced rollout after the first click is read from the store."""

    base_ids: np.ndarray
    base_logp: np.ndarray
    reason_ids: np.ndarray
    reason_logp: np.ndarray
    signals: dict[str, np.ndarray]
    logp_base: np.ndarray
    logp_reason: np.ndarray


@dataclass(frozen=True)
class TopKKey:
    trace: TraceConfig
    source: str
    top_k: int


def compute_topk(pair: Pair, key: TopKKey, progress: Progress = silent) -> RolloutTopK:
    r = rollout_of(pair, key.trace, key.source, 0)
    progress(0.3, "both models on the rollout")
    prompt, tokens = prompt_ids(pair.base, problem_of(key.trace)), list(r.token_ids)
    logp_base = rollout_logprobs(pair.base, prompt, tokens)  # [L, V], as `score` computed the trace
    logp_reason = rollout_logprobs(pair.reasoning, prompt, tokens)
    signals = {k: v.numpy().astype(np.float64) for k, v in token_divergences(logp_base, logp_reason).items()}
    k = min(key.top_k, logp_base.shape[-1])
    (bv, bi), (rv, ri) = logp_base.topk(k), logp_reason.topk(k)
    index = torch.tensor(tokens, dtype=torch.long).view(-1, 1)
    return RolloutTopK(base_ids=bi.numpy(), base_logp=bv.numpy().astype(np.float64), reason_ids=ri.numpy(),
                       reason_logp=rv.numpy().astype(np.float64), signals=signals,
                       logp_base=logp_base.gather(1, index).view(-1).numpy().astype(np.float64),
                       logp_reason=logp_reason.gather(1, index).view(-1).numpy().astype(np.float64))


_READS = (sys.modules[__name__], analysis, rollout_module, divergences)  # the trace's code included

rollout_topk: Verb[TopKKey, RolloutTopK] = pair_verb(
    "position-topk", TopKKey, compute_topk, "both models' top-k and every signal at every position of a traced "
    "rollout", reads=_READS)


def _top(handle, ids: np.ndarray, logp: np.ndarray) -> tuple[TopToken, ...]:
    return tuple(TopToken(handle.tokenizer.decode([int(i)]), int(i), float(np.exp(v)), float(v))
                 for v, i in zip(logp, ids))


def compute_position(pair: Pair, config: PositionConfig, progress: Progress = silent) -> PositionResult:
    return compute_positions(pair, [config], progress)[0]


def compute_positions(pair: Pair, configs: Sequence[PositionConfig], progress: Progress = silent
                      ) -> list[PositionResult]:
    """Every config's position, in order: the rollout and its top-k pass (`rollout_topk`, stored) read once per
    (trace, source, top_k), so every position of a trace costs what one did."""
    groups: dict[TopKKey, list[int]] = {}
    for i, config in enumerate(configs):
        groups.setdefault(TopKKey(config.trace, config.source, config.top_k), []).append(i)
    results: list[PositionResult | None] = [None] * len(configs)
    for done, (key, indices) in enumerate(groups.items()):
        r = rollout_of(pair, key.trace, key.source, 0)
        for i in indices:  # each position checked before the pass (rollout_of says why one is out of range)
            if not 0 <= configs[i].position < r.length:
                rollout_of(pair, key.trace, key.source, configs[i].position)
        top = rollout_topk(pair, key, scaled(progress, done / len(groups), (done + 1) / len(groups))).value
        tokens = list(r.token_ids)
        for i in indices:
            at = configs[i].position
            results[i] = PositionResult(
                source=key.source, position=at, length=r.length,
                prefix=pair.base.tokenizer.decode(tokens[:at], skip_special_tokens=True), token=r.tokens[at],
                token_id=tokens[at], base_top=_top(pair.base, top.base_ids[at], top.base_logp[at]),
                reasoning_top=_top(pair.reasoning, top.reason_ids[at], top.reason_logp[at]),
                signals={k: float(v[at]) for k, v in top.signals.items()}, logp_base=float(top.logp_base[at]),
                logp_reason=float(top.logp_reason[at]), differs=bool(top.base_ids[at, 0] != top.reason_ids[at, 0]))
    progress(1.0, "position done" if len(configs) == 1 else f"{len(configs)} positions done")
    return results


position: Verb[PositionConfig, PositionResult] = pair_verb(
    "position", PositionConfig, compute_position, "both models' top-k and every divergence at one position of a "
    "traced rollout", reads=_READS)


def store_positions(pair: Pair, configs: Sequence[PositionConfig], progress: Progress = silent
                    ) -> ComputedMany[PositionResult]:
    """Many positions' drill-downs (every position of a drawn trace) computed together and stored, each under the
    key its click reads; those already stored are read, not computed."""
    return position.many(pair, list(configs), lambda missing: compute_positions(pair, missing, progress))


@dataclass(frozen=True)
class GateAtConfig(Config):
    trace: TraceConfig
    position: int = same_as(PositionConfig, "position")
    source: str = same_as(PositionConfig, "source")
    gate: GateConfig = GateConfig()
    budget: float = same_as(InterveneConfig, "budget")
    calibration: CalibrationConfig = CalibrationConfig()


@dataclass(frozen=True)
class GateCheck:
    """The guided gate at one position: g_t = [s_t > tau and s_t > lambda * mean(s over the previous W)]
    (and, decisive, the greedy tokens differ; capped, the online budget allows one more takeover)."""

    signal: str
    value: float  # s_t (nats)
    tau: float
    lam: float
    budget: float
    window: int
    early: str
    previous: tuple[float, ...]  # the values the local mean is taken over (at most W)
    local_mean: float  # nan when no local comparison applies
    above_tau: bool
    spike: bool | None  # s_t > lambda * local mean; None when the rule makes no local comparison here
    decisive: bool
    differs: bool
    capped: bool
    taken_before: int  # takeovers the replayed gate made before this position
    cap_allows: bool | None  # None without the cap
    fired: bool
    rule: str  # the rule, in words
    reason: str  # why it fired or not, with the values

    def to_json(self) -> dict:
        num = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        return {"signal": self.signal, "value": num(self.value), "tau": num(self.tau), "lambda": num(self.lam),
                "budget": self.budget, "window": self.window, "early": self.early,
                "previous": [float(v) for v in self.previous], "local_mean": num(self.local_mean),
                "above_tau": self.above_tau, "spike": self.spike, "decisive": self.decisive,
                "greedy_tokens_differ": self.differs, "capped": self.capped, "taken_before": self.taken_before,
                "cap_allows": self.cap_allows, "fired": self.fired, "rule": self.rule, "reason": self.reason}


def _rule(g: GateConfig) -> str:
    text = "s_t > τ" if g.window == 0 else f"s_t > τ and s_t > λ · mean(s over the previous {g.window} tokens)"
    if g.window:
        text += f" (first {g.window} steps: rule '{g.early}')"
    if g.decisive:
        text += ", and the two models' greedy tokens differ"
    if g.capped:
        text += ", within the online budget max(1, r·(t+1)) takeovers by step t"
    return f"{g.signal}: {text}"


def compute_gate_at(pair: Pair, config: GateAtConfig, progress: Progress = silent) -> GateCheck:
    r = rollout_of(pair, config.trace, config.source, config.position)
    g, t = config.gate, config.position
    cal = calibration(pair, config.calibration, scaled(progress, 0.0, 0.95))
    threshold = cal.threshold(g.signal, config.budget, g.decisive)
    values = r.signals[g.signal].astype(np.float64)
    differs = r.signals["differs"] > 0.5
    replay = SignalGate(g.signal, threshold, g.window, g.early, g.capped, g.decisive)
    for step in range(t):  # the gate's own history and takeover count up to the position
        replay.decide(step, float(values[step]), bool(differs[step]))
    taken = replay.taken
    fired = replay.decide(t, float(values[t]), bool(differs[t]))
    s, history = float(values[t]), [float(v) for v in values[:t]]
    local = history[-g.window:] if g.window else []
    compared = bool(local) and not (len(history) < g.window and g.early != "partial")
    mean = float(np.mean(local)) if compared else float("nan")
    above, spike = s > threshold.tau, (s > threshold.lam * mean) if compared else None
    cap = taken + 1 <= max(1.0, threshold.budget * (t + 1)) if g.capped else None
    parts = [f"s_t = {s:.4g} {'>' if above else '≤'} τ = {threshold.tau:.4g}"]
    if spike is not None:
        parts.append(f"{'>' if spike else '≤'} λ · mean = {threshold.lam:.3g} × {mean:.4g} = "
                     f"{threshold.lam * mean:.4g}")
    elif g.window and len(history) < g.window:
        parts.append(f"step {t} < W = {g.window}: early rule '{g.early}'"
                     + (" never fires" if g.early == "never" else " (no local comparison)"))
    if g.decisive:
        parts.append("greedy tokens differ" if differs[t] else "greedy tokens agree")
    if cap is not None:
        parts.append(f"{taken} earlier takeovers, cap {'allows' if cap else 'refuses'} one more")
    progress(1.0, "gate checked")
    return GateCheck(signal=g.signal, value=s, tau=threshold.tau, lam=threshold.lam, budget=config.budget,
                     window=g.window, early=g.early, previous=tuple(local), local_mean=mean, above_tau=bool(above),
                     spike=spike, decisive=g.decisive, differs=bool(differs[t]), capped=g.capped, taken_before=taken,
                     cap_allows=cap, fired=bool(fired), rule=_rule(g),
                     reason=("fires: " if fired else "does not fire: ") + "; ".join(parts))


gate_check: Verb[GateAtConfig, GateCheck] = pair_verb(
    "gate-at", GateAtConfig, compute_gate_at, "whether the guided gate fires at one position of a traced rollout, "
    "and the values it compared", reads=(*_READS, *TAKEOVER_READS))


def gate_at(pair: Pair, config: GateAtConfig, progress: Progress = silent) -> Computed[GateCheck]:
    """Cached: whether the guided gate fires at one position of a traced rollout, and the values it compared."""
    if config.gate.signal not in SIGNALS.names():
        raise UserError(f"Unknown gate signal {config.gate.signal!r}.")
    return gate_check(pair, config, progress)
