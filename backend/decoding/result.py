"""Result types of decoding runs: one `DecodeResult` for every strategy, plus batch rows.

Everything here is a frozen dataclass of numpy arrays, tuples and scalars, so the store's codec
can save it. Array shapes are in the field comments; `steps` counts generated tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backend.decoding.config import DecodeConfig


@dataclass(frozen=True)
class Candidate:
    """One finished sequence a strategy chose from (best-of-n samples, final particles)."""

    text: str
    answer: int | None
    score: float  # total log-likelihood (best_of_n) or final log-weight (asmc), nats
    weight: float  # normalised selection weight in [0, 1]
    tokens: int


@dataclass(frozen=True)
class ParticleTrace:
    """One SMC round of `n` particles."""

    n: int
    alpha: np.ndarray  # [steps] float: exponent of the target after step t
    ess: np.ndarray  # [steps] float: ESS after reweighting at step t, before any resampling
    resampled: np.ndarray  # [steps] bool: resampling happened after step t
    unique_parents: np.ndarray  # [steps] int: distinct ancestors chosen at step t (n when not resampled)
    lineages: np.ndarray  # [steps] int: distinct first-token ancestors still alive after step t
    genealogy: np.ndarray  # [steps, n] int: parent (row at step t-1) of row i after step t
    log_weights: np.ndarray  # [n] float: final unnormalised log-weights
    tokens_generated: int
    # Recorded since the drill-down (empty in runs stored before it): enough to rebuild any particle at any step.
    tokens: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    # [steps, n] int: token drawn by row i at step t (rows as before step t's resampling), -1 once it had finished
    log_weight_history: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    # [steps, n] float: unnormalised log-weights after reweighting at step t, before resampling (ess[t] is theirs)

    @property
    def has_history(self) -> bool:
        return self.tokens.shape == self.genealogy.shape == self.log_weight_history.shape and self.tokens.size > 0

    @property
    def ess_min_ratio(self) -> float:
        return float(self.ess.min() / self.n) if self.ess.size else 1.0

    @property
    def resampling_events(self) -> int:
        return int(self.resampled.sum())


@dataclass(frozen=True)
class MHTrace:
    """Every Metropolis-Hastings step of a power-sampling run, in order (S steps)."""

    block: np.ndarray  # [S] int: block after which the step ran
    position: np.ndarray  # [S] int: generated-token index where the suffix was resampled
    log_ratio: np.ndarray  # [S] float: log acceptance ratio (nats)
    accepted: np.ndarray  # [S] bool
    proposal_tokens: np.ndarray  # [S] int: tokens sampled for the proposal

    @property
    def acceptance_rate(self) -> float:
        return float(self.accepted.mean()) if self.accepted.size else float("nan")


@dataclass(frozen=True)
class Cycle:
    """One reasoning-summary cycle of RC: reasoning from the question (and the previous summary), then the
    model's summary of it (none after the last cycle). Token counts include a stop token when one was written."""

    prompt_tokens: int  # the cycle's reasoning prompt: question (+ previous summary), template included
    reasoning: str
    reasoning_tokens: int  # <= the per-cycle budget
    answer: int | None  # extracted from this cycle's reasoning (None without a checker)
    summary: str = ""
    summary_tokens: int = 0  # <= the summary length


@dataclass(frozen=True)
class Outcome:
    """What a strategy returns; `decode` adds text, answer, correctness and timing."""

    token_ids: tuple[int, ...]
    tokens_generated: int
    forward_passes: int
    candidates: tuple[Candidate, ...] = ()
    particles: tuple[ParticleTrace, ...] = ()
    mh: MHTrace | None = None
    cycles: tuple[Cycle, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecodeResult:
    """One strategy on one prompt. `wall_seconds` is the decoding time (model already loaded)."""

    strategy: str
    config: DecodeConfig
    model_id: str
    problem_id: str
    prompt: str
    output: str
    token_ids: tuple[int, ...]
    answer: int | None  # extracted from the output when the task has a checker
    expected: int | None
    correct: bool | None  # None without a checker
    tokens_generated: int  # every sampled token: all samples, particles and proposals
    forward_passes: int
    wall_seconds: float
    candidates: tuple[Candidate, ...] = ()
    particles: tuple[ParticleTrace, ...] = ()  # one per SMC round
    mh: MHTrace | None = None
    cycles: tuple[Cycle, ...] = ()  # RC: one per reasoning-summary cycle
    notes: tuple[str, ...] = ()

    @property
    def cycle_correct(self) -> tuple[bool | None, ...]:
        """RC: whether the answer after each cycle is right (None without a checker)."""
        return tuple(None if self.expected is None else c.answer == self.expected for c in self.cycles)

    @property
    def cycle_tokens(self) -> tuple[int, ...]:
        """RC: generated tokens spent up to the end of each cycle's reasoning (earlier summaries included)."""
        out, spent = [], 0
        for c in self.cycles:
            out.append(spent + c.reasoning_tokens)
            spent += c.reasoning_tokens + c.summary_tokens
        return tuple(out)

    @property
    def ess_min_ratio(self) -> float | None:
        """Worst collapse over the rounds: min_t ESS_t / N (None for non-particle strategies)."""
        return min(p.ess_min_ratio for p in self.particles) if self.particles else None

    @property
    def resampling_events(self) -> int | None:
        return sum(p.resampling_events for p in self.particles) if self.particles else None

    @property
    def unique_ancestors(self) -> int | None:
        """Distinct first-token ancestors of the final particles of the last round."""
        return int(self.particles[-1].lineages[-1]) if self.particles and self.particles[-1].lineages.size else None

    @property
    def acceptance_rate(self) -> float | None:
        return self.mh.acceptance_rate if self.mh is not None else None

    def summary(self) -> dict:
        """A flat row for tables, CSV and the CLI."""
        return {"strategy": self.strategy, "problem_id": self.problem_id, "output": self.output,
                "answer": self.answer, "expected": self.expected, "correct": self.correct,
                "tokens_generated": self.tokens_generated, "forward_passes": self.forward_passes,
                "wall_seconds": round(self.wall_seconds, 3), "ess_min_ratio": self.ess_min_ratio,
                "resampling_events": self.resampling_events, "unique_ancestors": self.unique_ancestors,
                "particles": tuple(p.n for p in self.particles) or None,
                "acceptance_rate": self.acceptance_rate,
                "cycle_answers": tuple(c.answer for c in self.cycles) or None, "notes": " | ".join(self.notes)}


@dataclass(frozen=True)
class BatchRow:
    """One (strategy setting, problem) cell of a batch; the full result is the artifact `run_key`."""

    label: str
    strategy: str
    budget: int  # budget multiplier of a sweep (generated tokens / max_new_tokens); 1 when not swept
    problem_id: str
    correct: bool | None
    answer: int | None
    expected: int | None
    wall_seconds: float
    tokens_generated: int
    forward_passes: int
    ess_min_ratio: float | None
    acceptance_rate: float | None
    run_key: str
    cycle_answers: tuple[int | None, ...] = ()  # RC: the answer after each cycle
    cycle_tokens: tuple[int, ...] = ()  # RC: generated tokens spent by the end of each cycle's reasoning

    @property
    def cycle_correct(self) -> tuple[bool | None, ...]:
        return tuple(None if self.expected is None else a == self.expected for a in self.cycle_answers)


@dataclass(frozen=True)
class BatchResult:
    """Many problems x several strategy settings. Latencies are per-problem decoding times."""

    model_id: str
    rows: tuple[BatchRow, ...]
    labels: tuple[str, ...] = field(default=())  # settings in the order they were requested
    skipped: tuple[str, ...] = ()  # problems left out by the context rule (`where(problem)`: "Line 2", an id)

    def summary(self) -> list[dict]:
        """Per setting: accuracy, mean and p95 latency (s), mean generated tokens."""
        out = []
        for label in self.labels or tuple(dict.fromkeys(r.label for r in self.rows)):
            rows = [r for r in self.rows if r.label == label]
            checked = [r.correct for r in rows if r.correct is not None]
            lat = np.array([r.wall_seconds for r in rows])
            out.append({"label": label, "strategy": rows[0].strategy, "budget": rows[0].budget,
                        "problems": len(rows), "checked": len(checked),
                        "accuracy": float(np.mean(checked)) if checked else None,
                        "mean_latency_s": float(lat.mean()), "p95_latency_s": float(np.percentile(lat, 95)),
                        "mean_tokens": float(np.mean([r.tokens_generated for r in rows]))})
        return out
