import pytest

from backend.errors import UserError
from backend.upload_caps import LineCaps, check_lines, check_size

CAPS = LineCaps("The test file", max_lines=3, max_line_bytes=10, max_bytes=64)


def test_lines_within_the_caps_are_counted_and_blank_lines_are_free():
    assert check_lines(b"a\n\n  \nbb\r\nccc", CAPS) == 3
    assert check_lines(b"", CAPS) == 0


@pytest.mark.parametrize("data, named", [
    (b"a\nb\nc\nd\n", "more than 3 lines"),
    (b"ok\n" + b"x" * 11 + b"\n", r"line 2: 11 bytes in one line; the limit is 10 bytes per line"),
    (b"x\n" * 40, "is 80 bytes; the limit is 64 bytes"),
])
def test_each_cap_is_named_in_its_refusal(data, named):
    with pytest.raises(UserError, match=named) as err:
        check_lines(data, CAPS)
    assert "at most 3 lines, 10 bytes per line, 64 bytes in all" in str(err.value)


def test_a_size_alone_is_refused_before_reading_and_the_widget_cap_rounds_up():
    with pytest.raises(UserError, match="The test file is 65 bytes"):
        check_size(65, CAPS)
    assert CAPS.upload_mb == 1
    assert LineCaps("f", 1, 1, 3 * 2**20 + 1).upload_mb == 4
