"""`watermark detect` for the methods whose keys are settings (hf-kgw, synthid): one JSON object per --method, a
list of every method that can judge the text without it; bad settings and bad input exit 2 naming the field and
store nothing."""
import json

import pytest

from backend.__main__ import main
from backend.store.runs import RunFilter, list_runs

VERDICTS = {"watermarked", "not watermarked", "too short"}
COMMON = {"method", "verdict", "score", "p_value", "tokens_scored", "removed_characters"}


def run(capsys, *argv) -> tuple[int, object, str]:
    try:
        code = main(["watermark", *argv, "--json"])
    except SystemExit as parse_error:  # argparse refuses a flag's type itself (exit 2, the flag named)
        code = parse_error.code
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


@pytest.fixture
def writer(writer_handle):
    return ["--model-id", "tiny-writer"]


def test_generate_and_detect_each_method_by_its_settings(capsys, writer):
    for method, settings in (("hf-kgw", ["--hashing-key", "77", "--seeding-scheme", "selfhash", "--bias", "3"]),
                             ("synthid", ["--synthid-keys", "5,6,7,8", "--ngram-len", "4"])):
        code, gen, _ = run(capsys, "generate", "Write about the sea.", "--method", method, *writer, *settings,
                           "--sentences", "4", "--temperature", "1.0")
        assert code == 0 and gen["method"] == method
        code, found, _ = run(capsys, "detect", "--method", method, "--text", gen["text"], *writer, *settings)
        assert code == 0 and COMMON <= set(found) and found["method"] == method
        assert found["verdict"] == "watermarked" and found["removed_characters"] == 0, found
        assert found["tokens_scored"] > 16 and found["p_value"] < 1e-3
        default = run(capsys, "detect", "--method", method, "--text", gen["text"], *writer)[1]
        assert default["score"] < found["score"]  # other (default) keys: weaker evidence


def test_without_method_one_object_per_method_that_can_judge(capsys, writer):
    text = "The harbour was quiet in the morning and the boats rocked slowly at their moorings. " * 3
    code, rows, _ = run(capsys, "detect", "--text", text, *writer)
    assert code == 0 and isinstance(rows, list)
    methods = {r["method"] for r in rows}
    assert {"hf-kgw", "synthid"} <= methods and "ipmark" not in methods  # no identities registered
    for row in rows:
        assert COMMON <= set(row) and row["verdict"] in VERDICTS
    short = run(capsys, "detect", "--text", "Hello there.", *writer)[1]
    assert {r["verdict"] for r in short} == {"too short"}


@pytest.mark.parametrize("argv, field", [
    (["--method", "hf-kgw", "--hashing-key", "abc"], "--hashing-key"),
    (["--method", "hf-kgw", "--hashing-key", "-3"], "hashing_key"),
    (["--method", "hf-kgw", "--seeding-scheme", "middlehash"], "--seeding-scheme"),
    (["--method", "synthid", "--synthid-keys", "1,x,3"], "--synthid-keys"),
    (["--synthid-keys", "1.5"], "--synthid-keys"),
    (["--method", "synthid", "--ngram-len", "40"], "ngram_len"),
    (["--method", "hf-kgw", "--text", ""], "text"),
])
def test_bad_settings_exit_2_naming_the_field_and_store_nothing(capsys, writer, argv, field):
    before = len(list_runs(RunFilter()))
    argv = argv if "--text" in argv else [*argv, "--text", "A few words of text here."]
    code, out, err = run(capsys, "detect", *argv, *writer)
    assert code == 2 and out is None and field in err and "Traceback" not in err, err
    assert len(list_runs(RunFilter())) == before


@pytest.mark.parametrize("name, data", [("empty.txt", b""), ("binary.txt", bytes(range(256)) * 8)])
def test_empty_or_binary_upload_exits_2(capsys, writer, tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = run(capsys, "detect", "--method", "synthid", "--file", str(path), *writer)
    assert code == 2 and out is None and ("empty" in err or "binary" in err), err
