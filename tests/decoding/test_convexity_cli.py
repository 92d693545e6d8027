"""`python -m backend decode compare --task convexbench` on a tiny model: the depth is a task setting."""
import json

import pytest

from backend.__main__ import main


def test_compare_convexbench_reports_f1_per_strategy_and_depth(capsys):
    assert main(["decode", "compare", "--task", "convexbench", "--model", "tiny-llama", "--strategies",
                 "direct,decomposed", "--depth", "1,2", "--problems", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "convexbench"
    assert [(r["strategy"], r["depth"]) for r in out["f1"]] == [("direct", 1), ("direct", 2), ("decomposed", 1),
                                                                ("decomposed", 2)]
    assert len(out["rows"]) == 12 and out["rules"]


def test_the_task_default_strategies_and_a_typed_expression(capsys):
    assert main(["decode", "compare", "--task", "convexbench", "--model", "tiny-llama", "--expression",
                 "exp(2*x) - y**2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rules_label"] == "neither" and [r["strategy"] for r in out["rows"]] == ["direct", "decomposed"]


@pytest.mark.parametrize("flags,message", [
    (["--depth", "0"], "depth must be in [1, 150], got 0"),
    (["--depth", "-3"], "depth must be in [1, 150], got -3"),
    (["--depth", "two"], "depth expects comma-separated integers"),
    (["--expression", "exp(x"], "expression could not be parsed"),
    (["--expression", "open('f')"], "expression could not be parsed: unknown name 'open'"),
    (["--strategies", "direct,asmc"], "Unknown convexity strategy 'asmc'"),
    (["--problems", "0"], "problems must be between 1 and 300"),
])
def test_bad_input_exits_2_naming_the_field(flags, message, capsys):
    assert main(["decode", "compare", "--task", "convexbench", "--model", "no-such-model", *flags]) == 2
    assert message in capsys.readouterr().err  # refused before the (unknown) model is looked up
