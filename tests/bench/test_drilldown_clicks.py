"""bench/drilldown_clicks.py without a browser: which objects it clicks, in which order it visits the drill-downs,
and how its report section reads a result (a failed click or drill-down is a row that says why, never a gap)."""
from __future__ import annotations

import json
import re

from bench import report
from bench.drilldown_clicks import _choose
from bench.drilldown_targets import TARGETS, in_bench_order


def _points(n: int) -> list[dict]:
    return [{"trace": 0, "index": i, "customdata": ["head", i, 0]} for i in range(n)]


def test_it_clicks_the_first_a_middle_and_the_last_object_once_each():
    assert [p["index"] for p in _choose(_points(9))] == [0, 4, 8]
    assert [p["index"] for p in _choose(_points(2))] == [0, 1]
    assert [p["index"] for p in _choose(_points(1))] == [0]
    assert _choose([]) == []


def test_every_pages_first_drilldown_comes_before_any_second_and_computed_views_last():
    ordered = in_bench_order(TARGETS)
    assert sorted(map(id, ordered)) == sorted(map(id, TARGETS))
    views = [t.view for t in ordered]
    assert views == sorted(views, key=lambda v: v != "first")
    pages = {t.page for t in TARGETS}
    assert {t.page for t in ordered[:len(pages)]} == pages


def _result() -> dict:
    clicks = [{"object": [0, 1], "click": "first", "idle_s": 0.8, "drawn_s": 1.1, "served": "stored"},
              {"object": [3, 2], "click": "first", "idle_s": 9.0, "drawn_s": 9.4, "served": "computed",
               "provenance": ["cached · run 1", "computed in 0.1 s", "computed in 8.7 s · run 2"]},
              {"object": [5, 5], "click": "first", "failed": "not drawn: waited for ['Layer 5, head 5']"},
              {"object": [0, 1], "click": "again", "idle_s": 0.5, "drawn_s": 0.7, "served": "stored"}]
    return {"command": "python bench/drilldown_clicks.py --view all", "chromium": "1", "prepare_s": 6.0,
            "torch_threads": 2, "cpus": 2, "load_average_start": [1.0, 1.0, 1.0],
            "load_average_end": [2.0, 1.0, 1.0], "target_s": 2.0, "computed_target_s": 5.0,
            "targets": [{"page": "fp8_bounds", "tab": None, "drilldown": "fp8-head", "chart": "fp8-heatmap",
                         "kind": "head", "view": "first", "setup": "", "objects": 12, "clicks": clicks},
                        {"page": "nag", "tab": "Graph", "drilldown": "nag-drill-neuron", "chart": "nag-graph",
                         "kind": "neuron", "view": "first", "setup": "", "clicks": [],
                         "failed": "map not shown: Timeout"},
                        {"label": "decoding › Genealogy · dec-particle via dec-genealogy (particle)",
                         "page": "decoding", "drilldown": "dec-particle", "view": "first", "clicks": [],
                         "failed": "not reached: overall deadline"}]}


def test_the_section_says_each_clicks_time_and_verdict_and_why_one_failed(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "drilldown_clicks.json").write_text(json.dumps(_result()))
    text = report.render(tmp_path)
    section = text.split("## Drill-downs: every first click, in the browser", 1)[1].split("\n## ", 1)[0]
    assert "1 of 3 first clicks within 2 s" in section
    assert re.search(r"\| 0, 1 \| 1\.10 s \| 0\.70 s \| stored \| 0\.80 s \| yes \|", section)
    assert re.search(r"\| 3, 2 \| 9\.40 s \| – \| computed \(8\.7 s\) \| 9\.00 s \| \*\*no\*\* \|", section)
    assert "failed: not drawn" in section
    assert "Not measured: map not shown: Timeout." in section
    assert "**decoding › Genealogy · dec-particle via dec-genealogy (particle)**\n\nNot measured: not reached" in section
    assert ".venv/bin/python bench/drilldown_clicks.py --view all" in section
