"""Reading uploaded JSON-lines files: one object per line, errors that name the line."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from backend.errors import UserError


def json_objects(lines: Iterable[str], source: str, example: str) -> Iterator[tuple[int, dict]]:
    """(1-based line number, object) for every non-blank line. A line that is not valid JSON, or is JSON
    but not an object, raises a UserError naming `source`, the line and the `example` of a good line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(f"{source}, line {number}: not valid JSON ({err.msg}).") from None
        except (ValueError, RecursionError):  # e.g. an integer of more than 4,300 digits, or deep nesting
            raise UserError(f"{source}, line {number}: a value is too large or too deeply nested to read.") from None
        if not isinstance(obj, dict):
            raise UserError(f"{source}, line {number}: expected a JSON object like {example}.")
        yield number, obj
