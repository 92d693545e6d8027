"""Inputs a careless or hostile user gives the CLI end in one line and exit 2, before any long work."""
from __future__ import annotations

import pytest

from backend.__main__ import main


@pytest.fixture
def files(tmp_path):
    (tmp_path / "latin1.jsonl").write_bytes('{"question": "caf\u00e9 2+2", "answer": 4}\n'.encode("latin-1"))
    (tmp_path / "huge.jsonl").write_text('{"question": "2+2", "answer": ' + "9" * 5000 + "}\n")
    (tmp_path / "wide.csv").write_text('id,text\n1,"' + "a" * 200_000 + '"\n')
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 au lait.".encode("latin-1"))
    (tmp_path / "digits.jsonl").write_text('{"question": "2+2", "answer": "' + "9" * 5000 + '"}\n')
    (tmp_path / "secret-dir").mkdir()
    return tmp_path


CASES = [
    (["decode", "run", "--model", "tiny-llama", "--jsonl", "{d}/latin1.jsonl"], "UTF-8"),
    (["decode", "run", "--model", "tiny-llama", "--jsonl", "{d}/huge.jsonl"], "too large"),
    (["decode", "run", "--model", "tiny-llama", "--prompt", "hi", "--strategy", "sampling", "--temperature", "0"],
     "temperature"),
    (["nag", "rank", "--model", "tiny-llama", "--pool", "{d}/wide.csv"], ""),
    (["nag", "rank", "--model", "tiny-llama", "--out", "{d}/missing/x.parquet"], "missing"),
    (["nag", "deactivate", "--model", "tiny-llama", "--n-random", "0"], "n_random"),
    (["mt", "steer", "--model", "tiny-llama", "--rows", "a,b"], "--rows"),
    (["mt", "heads", "--model", "tiny-llama", "--percent", "1000"], "percentage"),
    (["disagree", "intervene", "--question", "2+2?", "--budget", ""], "budget"),
    (["disagree", "eopd", "--tau", "nan"], "tau"),
    (["disagree", "analyze", "--question", ""], "empty"),
    (["watermark", "evaluate", "--prompts", "-1"], "n_prompts"),
    (["watermark", "attack", "copy-paste", "--text", "Hello there. How are you.", "--other", "{d}/nope.txt"],
     "No such file"),
    (["watermark", "attack", "copy-paste", "--text", "Hello there. How are you.", "--other", "{d}/latin1.txt"],
     "UTF-8"),
    (["models", "generate", "Hi", "--model", "tiny-llama", "--max-new-tokens", "1000000000"], "max_new_tokens"),
    (["runs", "list", "--limit", "-1"], "limit"),
    # issue 46 §5: an answer string of 5,000 digits, 5,000 nested arrays, a negative limit or budget
    (["decode", "compare", "--model", "tiny-llama", "--jsonl", "{d}/digits.jsonl"], "at most 40 digits"),
    (["decode", "run", "--model", "tiny-llama", "--prompt", "hi", "--option", "k=" + "[" * 5000 + "]" * 5000],
     "too deeply nested"),
    (["watermark", "identity", "list", "--model", "1", "--limit", "-1"], "--limit"),
    (["decode", "compare", "--model", "tiny-llama", "--budgets", "-5"], "from 1 to"),
    (["decode", "compare", "--model", "tiny-llama", "--budgets", "0"], "from 1 to"),
    (["watermark", "identity", "add-model", "--name", "acme\n1      forged-row      0"], "line breaks"),
    (["watermark", "identity", "add-user", "--model", "1", "--label", "a\rb"], "line breaks"),
]


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(c[0][:3]) + f" #{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_and_exit_2(argv, words, files, capsys, fresh_store):
    assert main([a.format(d=files) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0], err


def test_a_secret_path_that_is_a_directory(files, capsys, fresh_store, monkeypatch):
    monkeypatch.setenv("DASH_WATERMARK_SECRET_FILE", str(files / "secret-dir"))
    monkeypatch.delenv("DASH_WATERMARK_SECRET", raising=False)
    assert main(["watermark", "identity", "add-model", "--name", "probe-model"]) == 0  # no key needed yet
    capsys.readouterr()
    assert main(["watermark", "detect", "--method", "ipmark", "--text",
                 "One sentence here. Another one there. And a third."]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not a regular file" in errors[0] and str(files) not in err


def test_a_pickle_only_checkpoint_is_refused_with_a_message(tmp_path, capsys, monkeypatch):
    import os
    import shutil

    from tests.conftest import TINY_DIRS

    pickle_only = tmp_path / "pickle-only"
    shutil.copytree(TINY_DIRS["llama"], pickle_only)
    for weights in pickle_only.glob("*.safetensors"):
        weights.rename(weights.with_suffix(".bin"))
    monkeypatch.setenv("DASH_EXTRA_MODELS", os.environ["DASH_EXTRA_MODELS"] + f";pickled={pickle_only}")
    assert main(["models", "info", "--model", "pickled"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "pickle checkpoints" in err


def test_text_limit_holds_for_every_detection_entry_point(capsys, fresh_store, monkeypatch):
    import io

    from backend.watermark.uploads import MAX_CHARS

    long_text = "word " * (MAX_CHARS // 5 + 1)
    assert main(["watermark", "detect", "--text", long_text]) == 2
    assert "limit is 1,000,000" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(long_text + "tail " * 100_000))
    assert main(["watermark", "detect"]) == 2
    assert "limit is 1,000,000" in capsys.readouterr().err


def test_an_error_naming_a_users_text_stays_one_line(files, capsys, fresh_store):
    """`runs export -o` to a folder whose name holds a newline: the message writes the newline out."""
    assert main(["runs", "export", "-o", f"{files}/no\nsuch/x.csv"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:") and "no\\u000asuch" in err, err


def test_a_newline_in_a_stored_name_prints_no_extra_row(fresh_store, capsys):
    """A name stored before names were checked (an older store): `identity list` writes its newline out."""
    from backend.store.identity_tables import identity_tables

    with identity_tables() as tables:  # straight into the table, past the name check
        tables.add_model(7, "acme\n8  forged  0")
    assert main(["watermark", "identity", "list"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2 and "acme\\u000a8" in out[1], out


@pytest.fixture
def no_model(monkeypatch):
    """Any model load fails the test: the refusals below come before one."""
    import backend.internals.cli
    import backend.mt.cli

    def never(*args, **kwargs):
        raise AssertionError("a model was loaded before the input was refused")

    for module in (backend.internals.cli, backend.mt.cli):
        monkeypatch.setattr(module, "load", never)


BAD_UTF8 = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")  # what Python makes of such bytes in sys.argv


# issue 55 §5: bytes that are not UTF-8, out-of-range indices, a contrast equal to the target: one line, exit 2,
# before a model loads (before: a tokenizers TypeError after 12 s; the whole head map, 180 s and 3.6 GB)
@pytest.mark.parametrize("argv, words", [
    (["inspect", "lens", "--prompt", BAD_UTF8], "The value of --prompt holds bytes that are not UTF-8"),
    (["inspect", "dla", "--target=" + BAD_UTF8], "The value of --target holds bytes"),
    (["watermark", "detect", "--text", BAD_UTF8], "The value of --text holds bytes"),
    (["inspect", "lens", "--top-k", "0"], "top_k"),
    (["inspect", "head", "--top-k", "101"], "top_k"),
    (["inspect", "dla", "--target", " Paris", "--contrast", " Paris"], "contrast token is the target token"),
    (["mt", "head", "--example", "100000"], "Prompt 100000 does not exist"),
])
def test_refused_before_a_model_loads(argv, words, no_model, capsys, fresh_store):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and words in err[0], err
