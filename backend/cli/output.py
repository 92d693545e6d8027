"""Printing command results: JSON for machines, aligned text for people."""
from __future__ import annotations

import json
from typing import Any


def emit(value: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(value, indent=1, default=str))
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        columns = list(value[0])
        widths = {c: max(len(c), *(len(str(row.get(c, ""))) for row in value)) for c in columns}
        print("  ".join(c.ljust(widths[c]) for c in columns))
        for row in value:
            print("  ".join(str(row.get(c, "")).ljust(widths[c]) for c in columns))
    elif isinstance(value, dict):
        width = max((len(k) for k in value), default=0)
        for key, item in value.items():
            print(f"{key.ljust(width)}  {item}")
    else:
        print(value)
