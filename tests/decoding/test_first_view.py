"""The Decoding page's first view: the shipped reference runs show its claim (the strategies differ, ASMC
resampled), they are keyed as the page asks for them, and the aggregate beside it carries Wilson intervals."""
from __future__ import annotations

import json

import backend.decoding.first_view as first_view
from backend.decoding import FIRST_VIEW, DecodeConfig, aggregate, stored_benchmark
from backend.decoding.run import RunKey, prepare, run
from backend.models.allowlist import get_spec
from backend.significance import wilson_interval
from backend.store.artifacts import artifact_key
from backend.store.codec import canonical_params, loads
from backend.store.reference_files import REFERENCE_DIR, read_reference
from backend.tasks import format_prompt, problem_set

SHIPPED = REFERENCE_DIR / "decoding_first_view.jsonl.gz"


def _page_key(strategy: str, fingerprint: str) -> str:
    """The store key of the page's default run of `strategy` on the first view's problem."""
    tokens = get_spec(FIRST_VIEW.model_id).max_new_tokens  # the page's token field follows the model's entry
    _, config = prepare(DecodeConfig(strategy=strategy, max_new_tokens=tokens, n=FIRST_VIEW.particles))
    task = problem_set(FIRST_VIEW.problem_set, FIRST_VIEW.index + 1, FIRST_VIEW.steps)[-1]
    key = RunKey(config, format_prompt(task), task.answer, task.id, True)
    return artifact_key(run.feature, run.name, fingerprint, canonical_params(key), run.code_version)


def test_the_shipped_first_view_shows_strategies_that_differ_and_a_resampling_asmc():
    rows = read_reference(SHIPPED)
    fingerprint = rows[0]["fingerprint"]
    assert stored_benchmark(fingerprint) is not None, "the first view's model has no stored benchmark to stand beside"
    by_key = {row["key"]: loads(row["payload"]) for row in rows}
    greedy, asmc = (by_key.get(_page_key(name, fingerprint)) for name in FIRST_VIEW.strategies)
    assert greedy is not None and asmc is not None, "the page's first runs would miss the shipped artifacts"
    assert greedy.answer != asmc.answer and greedy.correct != asmc.correct
    assert asmc.resampling_events >= 1
    assert asmc.ess_min_ratio < asmc.config.ess_threshold


def test_aggregate_rows_carry_wilson_intervals_at_the_first_view_budgets(tmp_path, monkeypatch):
    summary = [{"label": "Greedy", "strategy": "greedy", "budget": 1, "problems": 160, "accuracy": 0.575,
                "p95_latency_s": 6.07},
               {"label": "ASMC x4", "strategy": "asmc", "budget": 4, "problems": 160, "accuracy": 0.58125,
                "p95_latency_s": 10.06},
               {"label": "ASMC x16", "strategy": "asmc", "budget": 16, "problems": 160, "accuracy": 0.575,
                "p95_latency_s": 17.64}]
    path = tmp_path / "decoding_accuracy.json"
    path.write_text(json.dumps({"model": "m", "fingerprint": "fp", "summary": summary}))
    real = first_view.stored_benchmark
    monkeypatch.setattr(first_view, "stored_benchmark", lambda fingerprint: real(fingerprint, path))
    rows = aggregate("fp")
    assert [r.label for r in rows] == ["Greedy", "ASMC x4"]  # budget 16 is not the page's setting
    assert (rows[1].correct, rows[1].problems) == (93, 160)
    assert (rows[1].low, rows[1].high) == wilson_interval(93, 160)
    assert rows[1].low < rows[1].accuracy < rows[1].high and rows[1].p95_latency_s == 10.06
    assert aggregate("another model") == ()
