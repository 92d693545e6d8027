"""`watermark detect --file` on bad uploads: one error line naming --file and the file (hidden characters
written out), exit 2, nothing read past the size cap."""
import pytest

from backend.__main__ import main


@pytest.mark.parametrize("name, data, words", [
    ("empty.txt", b"", "The file is empty"),
    ("binary.txt", b"\x00\x01\x02" * 100, "binary file"),
    ("not-a-zip.docx", b"plain text, not a zip", "not a .docx"),
    ("evil\u202ename.txt", b"", "evil\\u202ename.txt"),
])
def test_a_bad_file_is_one_error_line_naming_the_flag_and_exit_2(tmp_path, capsys, name, data, words):
    path = tmp_path / name
    path.write_bytes(data)
    assert main(["watermark", "detect", "--method", "ipmark", "--file", str(path)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: --file ") and words in errors[0], errors
    assert "\u202e" not in errors[0]


def test_a_file_over_the_cap_is_refused_by_its_size_without_being_read(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    from backend.watermark.uploads import MAX_BYTES

    path = tmp_path / "huge.txt"
    with open(path, "wb") as handle:  # sparse: the size without the bytes
        handle.truncate(MAX_BYTES + 1)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("the file was read"))
    assert main(["watermark", "detect", "--method", "ipmark", "--file", str(path)]) == 2
    assert "the limit is" in capsys.readouterr().err
