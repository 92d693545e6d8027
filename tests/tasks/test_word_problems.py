"""The broad word-problem family: varied surface forms, the same solution format and split rule as the classic one."""
import random
import re
from collections import Counter

import pytest

from backend.tasks.arithmetic import extract_answer, generate_problems, split_of
from backend.tasks.solution_errors import classify
from backend.tasks.word_problems import CONVERSIONS, EXTRA_SCENARIOS, SCENARIOS, number_words, write_problem

STEP = re.compile(r"Step (\d+): (\d+) ([-+*/]) (\d+) = (\d+)")


@pytest.fixture(scope="module")
def train():
    return generate_problems(1500, "train", seed=3, family="broad")


def _apply(a: int, op: str, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]


def test_solutions_are_correct_chains(train):
    for p in train:
        lines = p.solution.splitlines()
        steps = [STEP.fullmatch(line) for line in lines[:-1]]
        assert all(steps), p.solution
        for i, m in enumerate(steps, 1):
            a, op, b, c = int(m[2]), m[3], int(m[4]), int(m[5])
            assert int(m[1]) == i and _apply(a, op, b) == c and (op != "/" or a % b == 0)
        assert len(steps) == p.difficulty and extract_answer(p.solution) == p.answer == int(steps[-1][5])


def test_the_family_covers_its_surface_forms(train):
    questions = [p.question for p in train]
    ops = Counter(op for p in train for op in STEP.findall(p.solution) for op in op[2])
    assert set(ops) == set("+-*/") and min(ops.values()) > 100
    assert Counter(p.difficulty for p in train).keys() == {1, 2, 3}
    assert {p.id.split("-")[1] for p in train} == set(SCENARIOS)
    assert sum(any(w in q.lower().split() for w in ("seven", "twelve", "twenty", "forty", "nine")) for q in questions) > 30
    assert sum(q.split("?")[0].count(".") == 0 and q.index("?") < len(q) - 1 for q in questions) > 100  # question first
    assert sum(q.count("years old") > (p.id.split("-")[1] == "ages") for q, p in zip(questions, train)) > 30  # distractor
    assert len(set(questions)) == len(questions)


def test_every_shown_number_is_in_the_id_and_splits_are_disjoint(train):
    heldout = generate_problems(300, "heldout", seed=3, family="broad")
    assert all(split_of(p.id) == "train" for p in train) and all(split_of(p.id) == "heldout" for p in heldout)
    assert not {p.id for p in train} & {p.id for p in heldout}
    assert not {p.question for p in train} & {p.question for p in heldout}


def test_same_arguments_same_list_and_mixed_is_half_of_each():
    assert generate_problems(50, "train", seed=9, family="broad") == generate_problems(50, "train", seed=9, family="broad")
    mixed = generate_problems(40, "train", seed=9, family="mixed")
    assert sum(p.id.startswith("broad-") for p in mixed) == 20 and len({p.id for p in mixed}) == 40
    assert generate_problems(10, "train", seed=9, family="classic") == generate_problems(10, "train", seed=9)


def test_bad_family_and_difficulty():
    with pytest.raises(ValueError, match="family"):
        generate_problems(3, family="weird")
    with pytest.raises(ValueError, match="difficulty"):
        generate_problems(3, family="broad", difficulty=4)
    assert {p.difficulty for p in generate_problems(30, "heldout", seed=1, family="broad", difficulty=2)} == {2}


def test_number_words():
    assert [number_words(n) for n in (0, 7, 15, 20, 42, 90, 100)] == [
        "zero", "seven", "fifteen", "twenty", "forty-two", "ninety", "one hundred"]
    with pytest.raises(ValueError):
        number_words(101)


def test_write_problem_redraws_rather_than_breaking_a_rule():
    r, results = random.Random(0), []
    for _ in range(500):
        written = write_problem(r, r.choice((1, 2, 3)))
        if written is not None:
            results.append(written)
            assert all(0 <= v <= 2000 for s in written.steps for v in (s[0], s[2], s[3]))
    assert len(results) > 400


def test_extended_adds_conversions_without_changing_the_broad_family():
    """The stored benchmarks were drawn from "broad" and "mixed": the extra scenarios must not move them."""
    extended = generate_problems(600, "train", seed=9, family="extended")
    broad_part = [p for p in extended if p.id.startswith("broad-")]
    assert {p.id.split("-")[1] for p in broad_part} == set(SCENARIOS) | set(EXTRA_SCENARIOS)
    mixed = generate_problems(600, "train", seed=9, family="mixed")
    assert all(p.id.split("-")[1] in SCENARIOS for p in mixed if p.id.startswith("broad-"))
    for p in (p for p in broad_part if p.id.split("-")[1] == "convert"):
        assert any(big in p.question and small in p.question and str(factor) in p.id.split("-")
                   for big, small, factor in CONVERSIONS)
        assert not p.question[0].islower() and p.question == p.question.strip()
        assert classify(p, p.solution) == "right" and 1 <= p.difficulty <= 2
