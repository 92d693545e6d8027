"""Problem files are refused at upload, before parsing, with the cap named and little memory spent."""
import json

import pytest

from backend.errors import UserError
from backend.tasks import MAX_BATCH_PROBLEMS, PROBLEM_UPLOAD, problems_from_file, problems_from_upload
from tests.support.memory import extra_peak_rss


def _lines(n: int) -> bytes:
    return "".join(json.dumps({"question": f"What is {i} + 1?", "answer": i + 1}) + "\n"
                   for i in range(n)).encode()


def test_a_file_within_the_caps_is_read():
    problems = problems_from_upload(_lines(MAX_BATCH_PROBLEMS))
    assert len(problems) == MAX_BATCH_PROBLEMS and problems[3].answer == 4


def test_ten_thousand_lines_are_refused_at_the_batch_cap_with_little_memory():
    data = _lines(10_000)
    assert len(data) < PROBLEM_UPLOAD.max_bytes  # refused by its line count, not its size
    with extra_peak_rss() as extra, pytest.raises(UserError, match=f"more than {MAX_BATCH_PROBLEMS} lines"):
        problems_from_upload(data)
    print(f"10,000-line upload refused with {extra.mb:.1f} MB extra peak RSS")
    assert extra.mb < 50


def test_one_five_megabyte_line_is_refused_with_little_memory():
    data = (json.dumps({"question": "x" * 5_000_000, "answer": 1}) + "\n").encode()
    with extra_peak_rss() as extra, pytest.raises(UserError, match="the limit is 1 MB"):
        problems_from_upload(data)
    print(f"5 MB-line upload refused with {extra.mb:.1f} MB extra peak RSS")
    assert extra.mb < 50


def test_a_long_line_in_a_small_file_is_refused_by_the_line_cap():
    data = _lines(2) + (json.dumps({"question": "y" * 20_000, "answer": 1}) + "\n").encode()
    with pytest.raises(UserError, match="line 3: .* per line"):
        problems_from_upload(data)


def test_the_cli_file_is_refused_by_its_size_before_it_is_read(tmp_path, monkeypatch):
    import pathlib

    big = tmp_path / "big.jsonl"
    with big.open("wb") as handle:
        handle.truncate(50 * 2**20)  # sparse: 50 MB that would cost memory only if read

    def never(self):
        raise AssertionError(f"{self} was read")

    monkeypatch.setattr(pathlib.Path, "read_bytes", never)
    with pytest.raises(UserError, match="The problem file is 50 MB; the limit is 1 MB"):
        problems_from_file(big)


def test_non_utf8_is_a_user_error():
    with pytest.raises(UserError, match="not UTF-8"):
        problems_from_upload('{"question": "caf\u00e9", "answer": 1}\n'.encode("latin-1"))
