"""Classifying a wrong worked answer by the equations it writes."""
from fractions import Fraction

import pytest

from backend.tasks.arithmetic import Problem
from backend.tasks.solution_errors import KINDS, classify, equations, right_if_computed, tally

TWO_STEPS = Problem("p", "Ana has 12 pens and buys 3 packs of 4. How many pens now?", 24,
                    "Step 1: 3 * 4 = 12\nStep 2: 12 + 12 = 24\nAnswer: 24", "heldout", 2)


def test_equations_are_read_exactly_with_every_operator_spelling():
    found = equations("Step 1: 1,200 / 8 = 150\nStep 2: 150 x 2 = 300\nthen 7 × 3 = 21, 9 ÷ 2 = 4.5 and 5-7=-2")
    assert [(e.terms, e.ops, e.written) for e in found] == [
        ((1200, 8), ("/",), 150), ((150, 2), ("x",), 300), ((7, 3), ("×",), 21), ((9, 2), ("÷",), Fraction(9, 2)),
        ((5, 7), ("-",), -2)]
    assert all(e.holds for e in found)
    assert not equations("Step 1: 22 / 11 = 1.8")[0].holds
    assert not equations("10 / 0 = 0")[0].holds  # no division by zero, and never true


def test_a_chain_is_one_equation_read_with_the_usual_precedence():
    (chain,) = equations("Step 2: 5 + 3 * 4 - 6 / 2 = 14")
    assert chain.terms == (5, 3, 4, 6, 2) and chain.value == 14 and chain.holds
    assert not equations("5 + 3 + 2 = 9")[0].holds


@pytest.mark.parametrize("reply, kind", [
    ("Step 1: 3 * 4 = 12\nStep 2: 12 + 12 = 24\nAnswer: 24", "right"),
    ("I am not sure how to solve this.", "no answer"),
    ("Step 1: 3 * 4 = 12\nStep 2: 12 + 12 = 25\nAnswer: 25", "arithmetic slip"),
    ("Step 1: 3 * 4 = 12\nAnswer: 12", "too few steps"),
    ("Step 1: 12 + 3 = 15\nStep 2: 15 + 4 = 19\nAnswer: 19", "wrong plan"),
])
def test_each_kind_of_reply(reply, kind):
    assert classify(TWO_STEPS, reply) == kind


def test_a_slip_outranks_a_short_plan_and_a_right_answer_outranks_a_slip():
    assert classify(TWO_STEPS, "Step 1: 3 * 4 = 13\nAnswer: 13") == "arithmetic slip"
    assert classify(TWO_STEPS, "Step 1: 3 * 4 = 13\nStep 2: 13 + 11 = 24\nAnswer: 24") == "right"


def test_an_upload_without_a_step_count_is_never_too_short():
    upload = Problem("upload-1", TWO_STEPS.question, 24, "", "", 0)
    assert classify(upload, "Step 1: 3 * 4 = 12\nAnswer: 12") == "wrong plan"


def test_tally_lists_every_kind_and_rejects_unknown_ones():
    assert tally(["right", "wrong plan", "right"]) == {k: {"right": 2, "wrong plan": 1}.get(k, 0) for k in KINDS}
    with pytest.raises(ValueError, match="unknown"):
        tally(["right", "lucky"])


def test_a_slip_in_a_right_plan_is_told_from_a_slip_in_a_wrong_one():
    # 3 * 4 written as 13, and the 13 carried on: recomputing both steps gives the answer
    assert right_if_computed(TWO_STEPS, "Step 1: 3 * 4 = 13\nStep 2: 13 + 12 = 25\nAnswer: 25")
    # the right arithmetic on the wrong numbers stays wrong
    assert not right_if_computed(TWO_STEPS, "Step 1: 12 + 3 = 16\nStep 2: 16 + 4 = 20\nAnswer: 20")
    assert not right_if_computed(TWO_STEPS, "no working at all")
