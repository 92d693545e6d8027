"""The Decoding page's first view: one problem of the stored benchmark, chosen for illustration, shown beside the
benchmark's aggregate over all its problems, so the illustrative case is never seen without the honest average.

The choice is a setting (which problem, which strategies), made on the benchmark's own per-problem runs of the
everyday-arithmetic adapter (bench/runs/decoding_accuracy_everyday.jsonl.gz): a problem where greedy and ASMC (4
particles, the page's default) answer differently and ASMC resampled. Why it was chosen, in figures, is data
(backend.results.preset_evidence); its two decodes ship as reference artifacts
(data/reference/decoding_first_view.jsonl.gz), keyed like any other run, so the page opens on them and any other
setting computes.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.decoding.benchmark import stored_benchmark
from backend.results import preset_evidence
from backend.significance import wilson_interval


@dataclass(frozen=True)
class FirstView:
    model_id: str  # the model whose stored benchmark the problem was chosen from
    problem_set: str  # backend.tasks.PROBLEM_SETS name
    steps: int
    index: int  # 0-based within (problem_set, steps), as the page's "Problem #"
    strategies: tuple[str, ...]
    particles: int  # ASMC's n on the page: the benchmark budget whose aggregate rows stand beside it

    def shows(self, model_id: str, problem_set: str, steps: int, index: int) -> bool:
        """Whether the page's current model and problem are the illustrated ones (only then is it labelled)."""
        return (model_id, problem_set, steps, index) == (self.model_id, self.problem_set, self.steps, self.index)

    @property
    def evidence(self) -> str:
        return preset_evidence("decoding", "first_view")


FIRST_VIEW = FirstView(model_id="smollm2-135m-arith-reasoner-everyday", problem_set="handwritten", steps=1, index=3,
                       strategies=("greedy", "asmc"), particles=4)


@dataclass(frozen=True)
class AggregateRow:
    """One setting of the stored benchmark: accuracy with its 95% Wilson interval, p95 latency (seconds)."""

    label: str
    problems: int
    correct: int
    accuracy: float
    low: float
    high: float
    p95_latency_s: float


def aggregate(fingerprint: str, budgets: tuple[int, ...] = (1, FIRST_VIEW.particles)) -> tuple[AggregateRow, ...]:
    """The stored benchmark of this model (same fingerprint) at these budgets, one row per setting; () when the
    model has none. The stored accuracy is a share of `problems`, so the count is recovered by rounding."""
    stored = stored_benchmark(fingerprint)
    if stored is None:
        return ()
    rows = []
    for row in stored.summary:
        if int(row.get("budget", 1)) not in budgets or row.get("accuracy") is None:
            continue
        problems = int(row["problems"])
        correct = round(float(row["accuracy"]) * problems)
        low, high = wilson_interval(correct, problems)
        rows.append(AggregateRow(label=str(row["label"]), problems=problems, correct=correct,
                                 accuracy=correct / problems, low=low, high=high,
                                 p95_latency_s=float(row["p95_latency_s"])))
    return tuple(rows)
