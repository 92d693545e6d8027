"""RC's figures: accuracy after each cycle with Wilson intervals, the batch's other settings as references, the
answer per cycle of one problem (app/figures/decoding_rc.py)."""
from app.figures.decoding_rc import accuracy_by_cycle, cycle_accuracy, cycle_answers, cycles_table
from backend.decoding import BatchResult, BatchRow, DecodeConfig, DecodeResult
from backend.decoding.result import Cycle
from backend.significance import wilson_interval


def _row(label, strategy, pid, correct, answers=(), tokens=()):
    return BatchRow(label=label, strategy=strategy, budget=1, problem_id=pid, correct=correct,
                    answer=answers[-1] if answers else 5, expected=5, wall_seconds=1.0,
                    tokens_generated=tokens[-1] if tokens else 40, forward_passes=10, ess_min_ratio=None,
                    acceptance_rate=None, run_key="k", cycle_answers=answers, cycle_tokens=tokens)


def _batch() -> BatchResult:
    rc = [_row("RC", "rc", "a", True, (4, 5, 5), (10, 25, 40)),
          _row("RC", "rc", "b", False, (5, 6), (10, 25)),  # stopped after two cycles on a total budget
          _row("RC", "rc", "c", False, (1, 5, 3), (10, 25, 40))]
    plain = [_row("Greedy at RC's budget (40 tokens)", "greedy", p, c) for p, c in (("a", True), ("b", True),
                                                                                     ("c", False))]
    return BatchResult(model_id="m", rows=tuple(rc + plain), labels=("RC", "Greedy at RC's budget (40 tokens)"))


def test_accuracy_after_each_cycle_keeps_a_stopped_runs_last_answer():
    frame = cycle_accuracy(_batch())
    assert frame["cycle"].tolist() == [1, 2, 3]
    assert frame["accuracy"].tolist() == [1 / 3, 2 / 3, 1 / 3]  # b: right after cycle 1 only, its 6 kept at 3
    low, high = wilson_interval(2, 3)
    assert (frame.loc[1, "low"], frame.loc[1, "high"]) == (low, high)
    assert frame["mean_tokens"].tolist() == [10, 25, (40 + 25 + 40) / 3]


def test_the_chart_shows_plain_decoding_as_the_reference():
    fig = accuracy_by_cycle(_batch())
    names = [t.name for t in fig.data]
    assert names.count("RC") == 2 and "Greedy at RC's budget (40 tokens)" in names
    assert any(s.y0 == 2 / 3 for s in fig.layout.shapes)  # the dashed reference line at plain's accuracy


def test_one_problem_per_cycle():
    cycles = (Cycle(prompt_tokens=30, reasoning="Answer: 4", reasoning_tokens=8, answer=4, summary="s",
                    summary_tokens=3),
              Cycle(prompt_tokens=35, reasoning="Answer: 5", reasoning_tokens=8, answer=5))
    r = DecodeResult(strategy="rc", config=DecodeConfig(strategy="rc"), model_id="m", problem_id="p", prompt="q",
                     output="Answer: 5", token_ids=(1,), answer=5, expected=5, correct=True, tokens_generated=19,
                     forward_passes=19, wall_seconds=1.0, cycles=cycles)
    table = cycles_table(r)
    assert table["correct"].tolist() == [False, True] and table["tokens_so_far"].tolist() == [8, 19]
    fig = cycle_answers(r)
    assert list(fig.data[0].y) == [4, 5] and list(fig.data[0].marker.color) == ["crimson", "seagreen"]
