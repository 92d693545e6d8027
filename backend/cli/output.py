"""Printing command results: JSON for machines (non-ASCII escaped), aligned text for people (hidden characters in
names and cells written out as `\\u202e` by backend.unicode_text.visible, never applied to the terminal)."""
from __future__ import annotations

import json
from typing import Any

from backend.unicode_text import visible


def _cell(item: Any) -> str:
    """One line per row: a newline inside a name is written out, or it would print a row of its own."""
    return visible(item)


def emit(value: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(value, indent=1, default=str))
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        columns = list(value[0])
        widths = {c: max(len(c), *(len(_cell(row.get(c, ""))) for row in value)) for c in columns}
        print("  ".join(_cell(c).ljust(widths[c]) for c in columns))
        for row in value:
            print("  ".join(_cell(row.get(c, "")).ljust(widths[c]) for c in columns))
    elif isinstance(value, dict):
        width = max((len(k) for k in value), default=0)
        for key, item in value.items():
            print(f"{_cell(key).ljust(width)}  {_cell(item)}")
    else:
        print(_cell(value))
