import pytest

from backend.tasks.arithmetic import generate_problems
from backend.tasks.problem_sets import PROBLEM_SETS, handwritten_problems, problem_set


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
    assert set(PROBLEM_SETS) == {"classic", "broad", "handwritten"}
    with pytest.raises(ValueError, match="problem set"):
        problem_set("mixed", 3)
