import re

import pytest

from backend.errors import UserError
from backend.tasks import (
    Problem,
    check_answer,
    extract_answer,
    format_prompt,
    generate_problems,
    load_jsonl_problems,
    split_of,
)
from backend.tasks.arithmetic import MAX_VALUE, TEMPLATES

STEP_RE = re.compile(r"Step (\d+): (\d+) ([-+*/]) (\d+) = (\d+)")


@pytest.fixture(scope="module")
def train() -> list[Problem]:
    return generate_problems(2000, "train", seed=0)


@pytest.fixture(scope="module")
def heldout() -> list[Problem]:
    return generate_problems(2000, "heldout", seed=0)


def test_same_seed_same_list() -> None:
    assert generate_problems(50, seed=7) == generate_problems(50, seed=7)
    assert generate_problems(50, "heldout", seed=7, difficulty=2) == generate_problems(
        50, "heldout", seed=7, difficulty=2
    )
    assert generate_problems(50, seed=7) != generate_problems(50, seed=8)


def test_counts_and_fields(train: list[Problem]) -> None:
    assert len(train) == 2000
    assert len({p.id for p in train}) == 2000  # distinct within a list
    assert {p.difficulty for p in train} == {1, 2, 3}
    assert all(p.split == "train" for p in train)
    assert {p.id.split("-")[0] for p in train} == {n for d in TEMPLATES.values() for n in d}
    for d in (1, 2, 3):
        assert all(p.difficulty == d for p in generate_problems(30, seed=1, difficulty=d))


def test_splits_disjoint_and_follow_hash_rule(train: list[Problem], heldout: list[Problem]) -> None:
    assert all(p.split == "heldout" for p in heldout)
    assert all(split_of(p.id) == p.split for p in train + heldout)
    assert not {p.question for p in train} & {p.question for p in heldout}
    assert not {p.id for p in train} & {p.id for p in heldout}
    # other seeds draw other problems but never cross the split
    other = generate_problems(500, "train", seed=123)
    assert not {p.id for p in other} & {p.id for p in heldout}
    # the held-out share of the canonical space is roughly HELDOUT_PERCENT
    ids = [f"collect-{a}-{b}" for a in range(2, 100) for b in range(2, 100)]
    assert 0.15 < sum(split_of(i) == "heldout" for i in ids) / len(ids) < 0.25


def test_question_contains_id_numbers(train: list[Problem]) -> None:
    # disjointness on question text relies on every id number being shown in the question
    for p in train[:300]:
        for num in p.id.split("-")[1:]:
            assert re.search(rf"(?<!\d){num}(?!\d)", p.question), (p.id, p.question)


def test_solution_steps_are_consistent(train: list[Problem], heldout: list[Problem]) -> None:
    for p in train + heldout:
        lines = p.solution.split("\n")
        assert lines[-1] == f"Answer: {p.answer}"
        assert len(lines) - 1 == p.difficulty
        steps: list[tuple[int, int, int]] = []
        for i, line in enumerate(lines[:-1], 1):
            m = STEP_RE.fullmatch(line)
            assert m, line
            n, a, op, b, c = int(m[1]), int(m[2]), m[3], int(m[4]), int(m[5])
            assert n == i
            if op == "/":
                assert b != 0 and a % b == 0 and a // b == c
            else:
                assert {"+": a + b, "-": a - b, "*": a * b}[op] == c
            assert all(0 <= v <= MAX_VALUE for v in (a, b, c))
            steps.append((a, b, c))
        for j, (_, _, c) in enumerate(steps[:-1]):  # no dead steps: each result feeds a later step
            assert any(c in (a, b) for a, b, _ in steps[j + 1 :]), p.solution
        assert steps[-1][2] == p.answer
        assert check_answer(p, p.solution)
        assert 0 <= p.answer <= MAX_VALUE


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        generate_problems(5, split="test")
    with pytest.raises(ValueError):
        generate_problems(5, difficulty=4)
    assert generate_problems(0) == []


def test_format_prompt(train: list[Problem]) -> None:
    prompt = format_prompt(train[0])
    assert prompt.endswith(train[0].question)
    assert "Answer: <number>" in prompt


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Step 1: 12 + 7 = 19\nStep 2: 19 * 3 = 57\nAnswer: 57", 57),
        ("Answer: 1,234.", 1234),
        ("answer: $45", 45),
        ("Answer: -12", -12),
        ("Answer: -$5", -5),
        ("**Answer:** 42", 42),
        ("Answer: 3\nwait, recheck.\nAnswer: 4", 4),
        ("Answer: 57.0", 57),
        ("Answer: 3.5", None),  # a non-integer final answer is not silently truncated
        ("Answer: 9 apples, 3 of them red", 9),  # the marked answer beats the last integer
        ("So she has 19 - 7 = 12 left.", 12),  # no marker: last integer
        ("The total is 1,500 dollars", 1500),
        ("it drops to -3 degrees", -3),
        ("roughly 2.5 and then 7", 7),
        ("I don't know.", None),
        ("", None),
    ],
)
def test_extract_answer(text: str, expected: int | None) -> None:
    assert extract_answer(text) == expected


def test_check_answer() -> None:
    p = Problem("x", "q", 57, "Answer: 57", "train", 1)
    assert check_answer(p, "... Answer: 57")
    assert not check_answer(p, "Answer: 56")
    assert not check_answer(p, "no idea")


def test_load_jsonl_ok() -> None:
    text = '{"question": "2+2?", "answer": 4}\n\n{"prompt": "10-3?", "answer": "7", "id": "a"}\n'
    a, b = load_jsonl_problems(text)
    assert (a.question, a.answer, a.id, a.split) == ("2+2?", 4, "upload-1", "upload")
    assert (b.question, b.answer, b.id) == ("10-3?", 7, "a")
    assert load_jsonl_problems('{"question": "q", "answer": 5.0}')[0].answer == 5


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('{"question": "q", "answer": 1}\n{"question": "q", "answer": 2', "line 2: not valid JSON"),
        ('[1, 2]', "line 1: expected a JSON object"),
        ('{"answer": 1}', "Line 1: needs a non-empty \"question\""),
        ('{"question": "", "answer": 1}', "Line 1: needs a non-empty"),
        ('{"question": "q"}', "Line 1: needs an \"answer\""),
        ('{"question": "q", "answer": 2.5}', "Line 1: \"answer\" must be an integer"),
        ('{"question": "q", "answer": "seven"}', "must be an integer"),
        ('{"question": "q", "answer": true}', "must be an integer"),
        ("\n  \n", "no problems"),
    ],
)
def test_load_jsonl_errors(text: str, fragment: str) -> None:
    with pytest.raises(UserError, match=re.escape(fragment)):
        load_jsonl_problems(text)
