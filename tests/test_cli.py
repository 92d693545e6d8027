import json
import os
import subprocess
import sys
from pathlib import Path

from backend.__main__ import main

ROOT = Path(__file__).resolve().parents[1]


def test_models_list_json_includes_embedded_default(capsys):
    assert main(["models", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    embedded = [r for r in rows if r["id"] == "smollm2-135m-instruct"]
    assert embedded and embedded[0]["embedded"]
    assert any(r["default"] for r in rows)


def test_models_info_and_generate_on_tiny_model(capsys):
    assert main(["models", "info", "--model", "tiny-qwen3", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["architecture"] == "qwen3" and info["kv_heads"] == 2
    assert main(["--json", "models", "generate", "Hi", "--model", "tiny-qwen3", "--max-new-tokens", "3"]) == 0
    assert "text" in json.loads(capsys.readouterr().out)


def test_user_errors_exit_2_with_a_message(capsys):
    assert main(["models", "info", "--model", "nope"]) == 2
    assert "Unknown model" in capsys.readouterr().err


def test_runs_list_and_export(tmp_path, fresh_store, capsys):
    from dataclasses import dataclass

    from backend.store import ModelRef, cached

    @dataclass(frozen=True)
    class Cfg:
        x: int

    cached("cli", "run", ModelRef("m", "f"), Cfg(1), lambda: 1)
    assert main(["runs", "list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1
    out = tmp_path / "runs.parquet"
    assert main(["runs", "export", "--format", "parquet", "-o", str(out)]) == 0
    assert out.stat().st_size > 0


def test_cli_runs_as_a_module():
    """The one real `python -m backend` process of this file (a process start costs seconds of imports; the other
    tests call `main` in this process)."""
    result = subprocess.run([sys.executable, "-m", "backend", "models", "list"], cwd=ROOT, capture_output=True,
                            text=True, env=os.environ, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "smollm2-135m-instruct" in result.stdout


def _one_line_exit_2_in_process(capsys, args: list[str], words: str) -> None:
    """The same through `main` in this process (a process start costs seconds; the error path is main's)."""
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and words in lines[0], err


def test_bad_runs_arguments_are_one_line_errors(tmp_path, fresh_store, capsys):
    _one_line_exit_2_in_process(capsys, ["runs", "list", "--limit", "-1"], "limit must be in [1, 1000000], got -1")
    _one_line_exit_2_in_process(capsys, ["runs", "export", "-o", str(tmp_path / "missing" / "x.csv")],
                                "does not exist")


def test_bad_environment_settings_are_one_line_errors(capsys, monkeypatch):
    # the settings are read when a command runs, not at import (backend/config.py): `main` here sees them as a
    # new process would
    monkeypatch.setenv("DASH_DEVICE", "tpu")
    _one_line_exit_2_in_process(capsys, ["models", "info", "--model", "tiny-llama"], "DASH_DEVICE")
    monkeypatch.delenv("DASH_DEVICE")
    monkeypatch.setenv("DASH_MAX_PARAMS", "abc")
    _one_line_exit_2_in_process(capsys, ["models", "info", "--model", "tiny-llama"], "DASH_MAX_PARAMS")


def test_generation_length_is_bounded_before_any_work(capsys):
    _one_line_exit_2_in_process(capsys, ["models", "generate", "Hi", "--model", "tiny-llama", "--max-new-tokens",
                                         "1000000000"], "max_new_tokens must be between 1 and 4096")
