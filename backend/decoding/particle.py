"""Drill-down of one SMC particle at one step of a stored decode: its text then, its weight history along its
ancestry, and the particles it replaced at resampling events.

"Particle (step t, row i)" is row i of the population after step t (after any resampling at t), as the genealogy
draws it at x = t + 1. Its ancestor at step s <= t follows `genealogy` back; the token it drew at s is
`tokens[s, ancestor]` and its weight then `log_weight_history[s, ancestor]` (the weights ESS[s] is computed
from). A run stored before the history was recorded is decoded again (same seed, same stream) without replacing
the stored run (kept under its own action, "run-history", so the next particle of that run is read, not decoded),
and used only when its ESS trace is the stored one.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from backend.decoding.result import DecodeResult, ParticleTrace
from backend.decoding.run import FEATURE, RUN_READS, RunKey, run_history, run_keyed
from backend.errors import UserError
from backend.params import Config, param
from backend.progress import Progress, scaled, silent
from backend.verbs import Verb, register


@dataclass(frozen=True)
class ParticleConfig(Config):
    run: RunKey  # the stored decode (backend.decoding.run.run_key)
    round: int = param(-1, "SMC round (0: the first; -1: the last)")
    step: int = param(0, "generated-token step t (0: the first token)", ge=0)
    row: int = param(-1, "particle row after step t (-1: a child of the heaviest particle at t)")


@dataclass(frozen=True)
class Replacement:
    """A resampling event on the particle's ancestry: at `step` row `row` took a copy of row `parent`."""

    step: int
    row: int
    parent: int
    parent_weight: float  # normalised weight of the copied particle before resampling
    replaced: int | None  # the row's previous particle (None when the row kept its own: parent == row)
    replaced_weight: float | None
    replaced_survived: bool | None  # whether the replaced particle left a copy elsewhere


@dataclass(frozen=True)
class ParticleResult:
    round: int
    step: int
    row: int
    n: int
    steps: int
    token_ids: tuple[int, ...]  # the particle's tokens through step t (its stop token included)
    text: str
    ancestry: np.ndarray  # [t + 1] int: the row (before resampling) of its ancestor at each step
    log_weights: np.ndarray  # [t + 1] float: the ancestor's unnormalised log-weight at each step
    weights: np.ndarray  # [t + 1] float: the same, normalised over the population at that step
    ess: np.ndarray  # [t + 1] float: the population's ESS at each step (the ESS chart's values)
    replacements: tuple[Replacement, ...]  # the resampling events on its ancestry, in order
    offspring: tuple[int, ...]  # rows after step t that are copies of its parent at t (itself included)
    recomputed: bool  # the stored run had no history: it was decoded again to rebuild it

    def to_json(self) -> dict:
        return {"round": self.round, "step": self.step, "row": self.row, "n": self.n, "steps": self.steps,
                "text": self.text, "token_ids": list(self.token_ids), "ancestry": self.ancestry.tolist(),
                "log_weights": self.log_weights.tolist(), "weights": self.weights.tolist(), "ess": self.ess.tolist(),
                "replacements": [vars(r) for r in self.replacements], "offspring": list(self.offspring),
                "recomputed": self.recomputed}


def _normalised(log_w: np.ndarray) -> np.ndarray:
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def pick_round(result: DecodeResult, config: ParticleConfig) -> tuple[int, ParticleTrace]:
    if not result.particles:
        raise UserError(f"The {result.strategy} run has no particles: the particle drill-down needs an ASMC run.")
    rounds = len(result.particles)
    if not -rounds <= config.round < rounds:
        raise UserError(f"Round {config.round} is out of range: the run has {rounds} round(s) (0 to {rounds - 1}).")
    index = config.round % rounds
    p = result.particles[index]
    steps = p.genealogy.shape[0]
    if config.step >= steps:
        raise UserError(f"Step {config.step} is out of range: round {index} has {steps} steps (0 to {steps - 1}).")
    if not -1 <= config.row < p.n:
        raise UserError(f"Particle {config.row} is out of range: round {index} has {p.n} particles (0 to {p.n - 1}).")
    return index, p


def rebuild(p: ParticleTrace, t: int, row: int) -> tuple[list[int], np.ndarray]:
    """Tokens through step t and the ancestor rows (before resampling) `[t + 1]` of row `row` after step t."""
    ancestry = np.zeros(t + 1, dtype=np.int64)
    current = row
    for s in range(t, -1, -1):
        current = int(p.genealogy[s, current])  # row after step s -> the row it copied at step s
        ancestry[s] = current
    tokens = [int(p.tokens[s, ancestry[s]]) for s in range(t + 1)]
    return [x for x in tokens if x >= 0], ancestry


def compute_particle(handle, config: ParticleConfig, progress: Progress = silent) -> ParticleResult:
    result = run_keyed(handle, config.run, scaled(progress, 0.0, 0.5)).value
    index, p = pick_round(result, config)
    recomputed = False
    if not p.has_history:  # stored before the history was recorded: the same seed decodes the same run
        progress(0.5, "decoding the stored run again to rebuild its particle history")
        again = run_history(handle, config.run, scaled(progress, 0.5, 1.0)).value  # kept beside it: once per run
        fresh = again.particles[index] if len(again.particles) == len(result.particles) else None
        if (fresh is None or not fresh.has_history or fresh.ess.shape != p.ess.shape
                or not np.allclose(fresh.ess, p.ess, rtol=1e-6)):
            raise UserError("This stored run predates the particle history and decoding it again did not reproduce "
                            "it; run the decode again to drill into its particles.")
        p, recomputed = fresh, True
    t = config.step
    row = config.row if config.row >= 0 else int(np.flatnonzero(
        p.genealogy[t] == int(np.argmax(p.log_weight_history[t])))[0])
    tokens, ancestry = rebuild(p, t, row)
    log_w = np.array([p.log_weight_history[s, ancestry[s]] for s in range(t + 1)], dtype=np.float64)
    weights = np.array([_normalised(p.log_weight_history[s])[ancestry[s]] for s in range(t + 1)])
    replacements = []
    for s in np.flatnonzero(p.resampled[: t + 1]):
        after = _row_after(p, ancestry, int(s), t, row)
        parent = int(p.genealogy[s, after])
        w = _normalised(p.log_weight_history[s])
        replaced = None if parent == after else after
        replacements.append(Replacement(
            step=int(s), row=after, parent=parent, parent_weight=float(w[parent]), replaced=replaced,
            replaced_weight=None if replaced is None else float(w[replaced]),
            replaced_survived=None if replaced is None else bool((p.genealogy[s] == replaced).any())))
    progress(1.0, "particle done")
    return ParticleResult(round=index, step=t, row=row, n=p.n, steps=p.genealogy.shape[0], token_ids=tuple(tokens),
                          text=handle.tokenizer.decode(tokens, skip_special_tokens=True), ancestry=ancestry,
                          log_weights=log_w, weights=weights, ess=np.asarray(p.ess[: t + 1], dtype=np.float64),
                          replacements=tuple(replacements),
                          offspring=tuple(int(i) for i in np.flatnonzero(p.genealogy[t] == ancestry[t])),
                          recomputed=recomputed)


def _row_after(p: ParticleTrace, ancestry: np.ndarray, s: int, t: int, row: int) -> int:
    """The ancestor's row after step s (after its resampling): the row it drew from at step s + 1."""
    return row if s == t else int(ancestry[s + 1])


particle: Verb[ParticleConfig, ParticleResult] = register(Verb(
    FEATURE, "particle", ParticleConfig, compute_particle, "one particle of a stored ASMC decode at one step",
    reads=(sys.modules[__name__], *RUN_READS), variants=run_history.variants))
