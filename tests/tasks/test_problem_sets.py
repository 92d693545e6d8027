import pytest

from backend.tasks.arithmetic import generate_problems
from backend.tasks.problem_sets import (PROBLEM_SETS, evenly_spread, handwritten_problems, problem_set,
                                        problem_set_size)


def test_handwritten_set_is_at_least_60_checked_problems_of_every_difficulty():
    problems = handwritten_problems()
    assert len(problems) >= 60
    assert {p.difficulty for p in problems} == {1, 2, 3}
    assert len({p.question for p in problems}) == len(problems)


def test_handwritten_wording_is_not_the_generators():
    generated = {p.question for family in ("classic", "broad") for split in ("train", "heldout")
                 for p in generate_problems(2000, split, seed=0, family=family)}
    assert not generated & {p.question for p in handwritten_problems()}


def test_problem_set_filters_by_difficulty_and_matches_the_generator():
    assert all(p.difficulty == 2 for p in problem_set("handwritten", 100, 2))
    assert problem_set("broad", 5, 3) == generate_problems(5, "heldout", seed=0, difficulty=3, family="broad")
    assert set(PROBLEM_SETS) == {"classic", "broad", "handwritten", "long"}
    with pytest.raises(ValueError, match="problem set"):
        problem_set("mixed", 3)


def test_problem_set_size_bounds_what_problem_set_gives():
    for difficulty in (1, 2, 3):
        size = problem_set_size("handwritten", difficulty)
        assert len(problem_set("handwritten", size + 10, difficulty)) == size
    assert problem_set_size("handwritten") == len(handwritten_problems())
    assert len(problem_set("broad", problem_set_size("broad"), 1)) == problem_set_size("broad")


def test_evenly_spread_covers_every_difficulty_of_the_ordered_file():
    every = handwritten_problems()
    half = evenly_spread(every, len(every) // 2)
    assert len(half) == len(every) // 2 and len(set(half)) == len(half)
    assert {p.difficulty for p in half} == {1, 2, 3}
    assert evenly_spread(every, 10 * len(every)) == list(every)
    assert evenly_spread(every, 0) == []
