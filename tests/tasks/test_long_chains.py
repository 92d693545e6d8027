"""Long chains (RC's setting): more steps than the adapter was trained on, the generator's contract otherwise."""
import pytest

from backend.tasks.arithmetic import extract_answer, split_of
from backend.tasks.long_chains import LONG_STEPS, long_problems
from backend.tasks.problem_sets import problem_set, steps_of


def test_long_chains_have_the_steps_asked_for_and_a_checked_solution():
    for steps in LONG_STEPS:
        problems = long_problems(5, steps, seed=1)
        assert len({p.id for p in problems}) == 5 and all(p.difficulty == steps for p in problems)
        for p in problems:
            assert p.solution.count("Step ") == steps and extract_answer(p.solution) == p.answer
            assert split_of(p.id) == "heldout" == p.split
    mixed = long_problems(20, seed=2)
    assert {p.difficulty for p in mixed} <= {4, 5, 6} and len({p.difficulty for p in mixed}) > 1


def test_the_same_arguments_give_the_same_problems_and_splits_are_disjoint():
    assert long_problems(6, 5, seed=3) == long_problems(6, 5, seed=3)
    train = {p.id for p in long_problems(30, split="train", seed=3)}
    assert not train & {p.id for p in long_problems(30, split="heldout", seed=3)}


def test_as_a_problem_set():
    assert steps_of("long") == LONG_STEPS and steps_of("classic") == (1, 2, 3)
    assert problem_set("long", 4, 7) == long_problems(4, 7)
    with pytest.raises(ValueError, match="steps must be one of"):
        long_problems(2, 3)
