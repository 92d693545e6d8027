"""A benchmark's result as `python -m bench report` reads it: one indented JSON file, also printed."""
from __future__ import annotations

import json
from pathlib import Path


def write_result(path: Path | str, result: dict) -> dict:
    """Write `result` to `path` (its folder made when missing) as indented JSON, print it, and return it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=1)
    path.write_text(text + "\n")
    print(text)
    return result
