import json

import pytest

from backend.errors import UserError
from backend.mt.data import MAX_ROWS, builtin, parse_upload


def test_builtin_set_has_four_languages_and_a_split():
    data = builtin()
    assert data.languages == ("en", "fr", "de", "es")
    assert len(data) >= 150
    assert len(data.rows("heads")) == 100 and len(data.rows("evaluate")) == 60
    assert set(data.rows("heads")).isdisjoint(data.rows("evaluate"))
    assert all(data.text(lang, i).strip() for lang in data.languages for i in range(len(data)))
    assert len(set(data.columns["en"])) == len(data)  # no duplicate sentences
    assert data.digest == builtin().digest


def test_tsv_csv_and_jsonl_give_the_same_set():
    tsv = "en\tfr\nhello\tbonjour\nyes\toui\nno\tnon\ncat\tchat\n"
    csv = 'en,fr\nhello,bonjour\nyes,oui\nno,non\ncat,chat\n'
    jsonl = "\n".join(json.dumps({"en": e, "fr": f}) for e, f in
                      [("hello", "bonjour"), ("yes", "oui"), ("no", "non"), ("cat", "chat")])
    sets = [parse_upload(tsv.encode(), "a.tsv"), parse_upload(csv.encode(), "a.csv"),
            parse_upload(jsonl.encode(), "a.jsonl")]
    assert {s.digest for s in sets} == {sets[0].digest}
    assert sets[0].languages == ("en", "fr")
    assert sets[0].splits.count("evaluate") == 1  # no split column: every third row held out


@pytest.mark.parametrize("text, name, message", [
    ("", "a.tsv", "empty"),
    ("en\tfr\n", "a.tsv", "no sentence rows"),
    ("en\nhello\nyes\nno\ncat\n", "a.tsv", "only one language"),
    ("id\tsplit\n1\theads\n", "a.tsv", "no language columns"),
    ("english sentence\tfrench sentence\na\tb\nc\td\ne\tf\ng\th\n", "a.tsv", "language codes"),
    ("en\tfr\nhello\tbonjour\n", "a.tsv", "at least"),
    ('{"en": "a", "fr": "b"}\nnot json\n', "a.jsonl", "line 2"),
    ('["a", "b"]\n', "a.jsonl", "JSON object"),
])
def test_bad_uploads_say_what_is_wrong(text, name, message):
    with pytest.raises(UserError, match=message):
        parse_upload(text.encode(), name)


def test_missing_cells_and_empty_lines_are_skipped_with_a_notice():
    text = "en\tfr\nhello\tbonjour\n\n\nyes\t\nno\tnon\ncat\tchat\nsun\tsoleil\n"
    data = parse_upload(text.encode(), "a.tsv")
    assert len(data) == 4
    assert any("1 row(s)" in n for n in data.notices)


def test_mixed_encodings_are_read_with_a_notice():
    raw = "en\tfr\nhello\tbonjour\n".encode() + "coffee\tcafé\n".encode("cp1252") + "no\tnon\ncat\tchat\n".encode()
    data = parse_upload(raw, "a.tsv")
    assert "café" in data.columns["fr"]
    assert any("not valid UTF-8" in n for n in data.notices)


def test_binary_files_are_refused():
    with pytest.raises(UserError, match="binary"):
        parse_upload(b"\x00\x01\x02garbage" * 10, "a.tsv")


def test_huge_files_are_sampled_with_a_notice():
    rows = "".join(f"sentence {i}\tphrase {i}\n" for i in range(100_000))
    data = parse_upload(("en\tfr\n" + rows).encode(), "big.tsv")
    assert len(data) == MAX_ROWS
    assert any("sample" in n for n in data.notices)


def test_pair_checks(tiny_data):
    tiny_data.check_pair("en", "fr")
    with pytest.raises(UserError, match="not in the data set"):
        tiny_data.check_pair("en", "es")
    with pytest.raises(UserError, match="differ"):
        tiny_data.check_pair("fr", "fr")


def test_uploads_over_a_cap_are_refused_before_decoding_with_the_cap_named():
    from backend.mt.data import UPLOAD_CAPS

    with pytest.raises(UserError, match="line 2: .* per line"):
        parse_upload(b"en\tfr\n" + b"a" * (UPLOAD_CAPS.max_line_bytes + 1) + b"\tb\n", "long.tsv")
    with pytest.raises(UserError, match="more than 200,000 lines"):
        parse_upload(b"en\tfr\n" + b"a\tb\n" * 200_000, "many.tsv")
    with pytest.raises(UserError, match="the limit is 20 MB"):
        parse_upload(b"x" * (UPLOAD_CAPS.max_bytes + 1), "big.tsv")
