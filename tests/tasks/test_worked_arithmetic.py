"""Worked steps: place-value pieces whose every equality is true and that a checker can read back."""
import random

import pytest

from backend.tasks.arithmetic import extract_answer, generate_problems
from backend.tasks.solution_errors import classify, equations, right_if_computed
from backend.tasks.worked_arithmetic import format_step, worked_equation


@pytest.mark.parametrize(("step", "expected"), [
    ((158, "+", 39, 197), "158 + 39 = 158 + 30 + 9 = 188 + 9 = 197"),
    ((48, "-", 31, 17), "48 - 31 = 48 - 30 - 1 = 18 - 1 = 17"),
    ((7, "*", 17, 119), "7 * 17 = 7 * 10 + 7 * 7 = 70 + 49 = 119"),
    ((17, "*", 7, 119), "17 * 7 = 7 * 10 + 7 * 7 = 70 + 49 = 119"),
    ((158, "/", 2, 79), "158 / 2 = 140 / 2 + 18 / 2 = 70 + 9 = 79"),
    # nothing to split: a one-digit or round operand, a one-digit or round quotient
    ((158, "+", 7, 165), "158 + 7 = 165"), ((158, "-", 40, 118), "158 - 40 = 118"),
    ((6, "*", 8, 48), "6 * 8 = 48"), ((20, "*", 9, 180), "20 * 9 = 180"),
    ((56, "/", 7, 8), "56 / 7 = 8"), ((600, "/", 20, 30), "600 / 20 = 30"),
])
def test_worked_equation(step, expected):
    assert worked_equation(*step) == expected


def test_every_worked_step_reads_back_as_a_true_chain_of_the_same_step():
    r = random.Random(0)
    for _ in range(2000):
        op, a, b = r.choice("+-*/"), r.randint(0, 1999), r.randint(1, 99)
        if op == "/":
            a -= a % b
        c = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]
        for style in ("worked", "worked+division"):
            (eq,) = equations(format_step(1, a, op, b, c, style))
            assert eq.holds and (eq.terms, eq.ops, eq.written) == ((a, b), (op,), c)


def test_only_worked_plus_division_splits_a_division():
    assert format_step(2, 158, "/", 2, 79, "worked") == "Step 2: 158 / 2 = 79"
    assert format_step(2, 158, "/", 2, 79, "worked+division") == "Step 2: 158 / 2 = 140 / 2 + 18 / 2 = 70 + 9 = 79"
    assert format_step(2, 158, "+", 2, 160, "worked") == format_step(2, 158, "+", 2, 160, "worked+division")


def test_a_wrong_piece_is_a_slip_in_a_right_plan():
    problem = generate_problems(1, "heldout", seed=0)[0]
    plain = generate_problems(1, "heldout", seed=0, style="plain")[0]
    worked = generate_problems(1, "heldout", seed=0, style="worked")[0]
    assert (worked.id, worked.answer) == (plain.id, plain.answer) == (problem.id, problem.answer)
    assert classify(worked, worked.solution) == "right" and extract_answer(worked.solution) == worked.answer
    reply = "Step 1: 158 + 39 = 158 + 30 + 9 = 187 + 9 = 196\nStep 2: 196 - 100 = 96\nAnswer: 96"
    broken = type(problem)("x", "q", 97, "", "heldout", 2)
    assert classify(broken, reply) == "arithmetic slip"  # 158 + 30 + 9 is not 196, though 187 + 9 is
    assert right_if_computed(broken, reply)  # the plan, computed right, carries 197 forward to 97
    assert not equations(reply)[0].holds and equations(reply)[1].holds


def test_unknown_style_and_operation():
    with pytest.raises(ValueError, match="style"):
        generate_problems(1, style="columns")
    with pytest.raises(ValueError, match="style"):
        format_step(1, 1, "+", 2, 3, "columns")
    with pytest.raises(ValueError, match="operation"):
        worked_equation(1, "%", 2, 1)
