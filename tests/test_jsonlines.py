import pytest

from backend.errors import UserError
from backend.jsonlines import json_objects


def test_objects_come_with_their_line_numbers_and_blank_lines_are_skipped():
    lines = ['{"a": 1}', "", "   ", '{"b": 2}']
    assert list(json_objects(lines, "f.jsonl", "{}")) == [(1, {"a": 1}), (4, {"b": 2})]


@pytest.mark.parametrize("bad, expected", [("{oops", "line 2: not valid JSON"),
                                           ("[1, 2]", "line 2: expected a JSON object like {\"x\": 1}")])
def test_bad_lines_are_named(bad, expected):
    with pytest.raises(UserError, match=expected.replace("[", r"\[").replace("{", r"\{")):
        list(json_objects(['{"x": 1}', bad], "f.jsonl", '{"x": 1}'))
