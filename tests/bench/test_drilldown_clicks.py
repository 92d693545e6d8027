"""bench/drilldown_clicks.py without a browser: which objects it clicks, in which order it visits the drill-downs,
and how its report section reads a result (a failed click or drill-down is a row that says why, never a gap)."""
from __future__ import annotations

import json
import re

from bench import report
from bench.drilldown_clicks import Deadline, _choose, merged
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
              {"object": [5, 5], "click": "first", "failed": "miss: not drawn within 60 s of the click"},
              {"object": [0, 1], "click": "again", "idle_s": 0.5, "drawn_s": 0.7, "served": "stored"},
              {"object": [3, 2], "click": "again", "idle_s": 0.3, "drawn_s": 0.4, "served": "stored",
               "lost_clicks": 1, "lost": ["lost: the rerun ended with the point not selected"]}]
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
    assert re.search(r"\| 3, 2 \| 9\.40 s \| 0\.40 s \(1 click lost: lost: the rerun ended with the point not "
                     r"selected\) \| computed \(8\.7 s\) \| 9\.00 s \| \*\*no\*\* \|", section)
    assert "failed: miss: not drawn within 60 s" in section
    assert "Not measured: map not shown: Timeout." in section
    assert "**decoding › Genealogy · dec-particle via dec-genealogy (particle)**\n\nNot measured: not reached" in section
    assert ".venv/bin/python bench/drilldown_clicks.py --view all" in section


def _computed() -> dict:
    clicks = [{"object": [0], "click": "first", "idle_s": 3.0, "drawn_s": 3.2, "served": "computed",
               "provenance": ["computed in 2.9 s · run 3"]},
              {"object": [4], "click": "first", "idle_s": 3.0, "drawn_s": 3.1, "served": "stored"}]
    return {**_result(), "command": "python bench/drilldown_clicks.py --view computed",
            "load_average_start": [0.5, 0.4, 0.3],
            "targets": [{"page": "disagreement", "tab": None, "drilldown": "dis-position", "chart": "dis-trace-fig",
                         "kind": "position", "view": "computed", "setup": "fewest new tokens", "objects": 9,
                         "load_average": [0.5, 0.4, 0.3], "clicks": clicks}]}


def test_a_computed_views_row_is_held_to_five_s_only_when_the_click_computed(tmp_path):
    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    (results / "drilldown_clicks.json").write_text(json.dumps(_result()))
    (results / "drilldown_clicks_computed.json").write_text(json.dumps(_computed()))
    section = report.render(tmp_path).split("## Drill-downs: every first click, in the browser", 1)[1]
    assert re.search(r"\| 0 \| 3\.20 s \| – \| computed \(2\.9 s\) \| 3\.00 s \| yes \(≤ 5 s\) \|", section)
    assert re.search(r"\| 4 \| 3\.10 s \| – \| stored \| 3\.00 s \| \*\*no\*\* \(≤ 2 s\) \|", section)
    assert "1 of 2 first clicks within their target. Headless Chromium 1" in section
    assert "[0.5, 0.4, 0.3] at the start" in section and "load 0.5)" in section
    assert ".venv/bin/python bench/drilldown_clicks.py --view computed" in section


def test_a_merged_rerun_replaces_only_its_targets_rows_and_is_listed(tmp_path):
    out = tmp_path / "clicks.json"
    base = {**_result(), "targets": [{"label": "a", "clicks": [1]}, {"label": "b", "clicks": [2]}]}
    out.write_text(json.dumps(base))
    run = {"command": "python bench/drilldown_clicks.py --only b --view first --merge", "started": "T",
           "load_average_start": [0.1, 0.2, 0.3]}
    result = merged(out, run, [{"label": "b", "clicks": [3]}, {"label": "c", "clicks": [4]}])
    assert result["targets"] == [{"label": "a", "clicks": [1]}, {"label": "b", "clicks": [3]},
                                 {"label": "c", "clicks": [4]}]
    assert result["load_average_start"] == base["load_average_start"]
    assert [(m["command"], m["targets"]) for m in result["merged"]] == [(run["command"], ["b", "c"])]


def test_without_an_overall_deadline_each_wait_gets_its_own_cap():
    assert Deadline(None).left(60.0) == 60.0
    assert Deadline(1000.0).left(60.0) == 60.0
    assert Deadline(10.0).left(60.0) <= 10.0
