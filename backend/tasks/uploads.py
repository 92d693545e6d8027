"""Problem files a user supplies (page upload or CLI --jsonl), capped before they are parsed.

The batch cap is the same for an upload as for the built-in sets: a file of more problems than a batch
may run is refused at upload, not after it has been parsed, tokenised and half decoded.
"""
from __future__ import annotations

from pathlib import Path

from backend.errors import UserError
from backend.tasks.arithmetic import Problem, load_jsonl_problems
from backend.upload_caps import LineCaps, check_lines, check_size

MAX_BATCH_PROBLEMS = 200  # one batch on the Decoding page: 1..200 problems, built-in or uploaded
# A word problem with its worked solution is well under 4 KB; 16 KB a line leaves room, and 1 MB in all
# (about 250k tokens) bounds the tokenised prompts of a whole batch.
PROBLEM_UPLOAD = LineCaps("The problem file", max_lines=MAX_BATCH_PROBLEMS, max_line_bytes=16 * 2**10,
                          max_bytes=2**20)


def problems_from_upload(data: bytes, caps: LineCaps = PROBLEM_UPLOAD) -> list[Problem]:
    """Problems from uploaded JSON lines, refused by `caps` before the bytes are decoded."""
    check_lines(data, caps)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UserError(f"{caps.what} is not UTF-8 text (byte {err.start}); save it as UTF-8.") from None
    return load_jsonl_problems(text)


def problems_from_file(path: str | Path, caps: LineCaps = PROBLEM_UPLOAD) -> list[Problem]:
    """The CLI's --jsonl: the same caps, the size checked before the file is read."""
    path = Path(path)
    try:
        check_size(path.stat().st_size, caps)
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"Cannot read {path}: {err.strerror}.") from None
    return problems_from_upload(data, caps)
