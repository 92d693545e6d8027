"""The hand-written arithmetic evaluation set (data/arith/handwritten.jsonl): never produced by the generator,
and every answer is what its written working computes."""
import ast
import json
import operator
from pathlib import Path

from backend.tasks.arithmetic import generate_problems, load_jsonl_problems

SET = Path(__file__).resolve().parents[2] / "data" / "arith" / "handwritten.jsonl"
OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _value(node):
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError(f"not plain arithmetic: {ast.dump(node)}")


def test_every_answer_is_what_its_working_computes():
    rows = [json.loads(line) for line in SET.read_text().splitlines()]
    assert len(rows) >= 60
    for row in rows:
        assert _value(ast.parse(row["working"], mode="eval")) == row["answer"], row["question"]
    assert {row["steps"] for row in rows} == {1, 2, 3}
    assert len({row["question"] for row in rows}) == len(rows)


def test_the_set_loads_as_problems_and_shares_no_question_with_the_generator():
    problems = load_jsonl_problems(SET.read_text())
    generated = {p.question for split in ("train", "heldout") for p in generate_problems(3000, split, seed=0)}
    assert len(problems) >= 60 and not generated & {p.question for p in problems}


def test_the_step_count_of_each_problem_is_its_difficulty():
    problems = load_jsonl_problems(SET.read_text())
    rows = [json.loads(line) for line in SET.read_text().splitlines()]
    assert [p.difficulty for p in problems] == [row["steps"] for row in rows]
