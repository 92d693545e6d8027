import json

from backend.__main__ import main


def test_bounds_and_simulate_json(capsys, fresh_store):
    assert main(["fp8", "bounds", "--model", "tiny-llama", "--texts", "1", "--max-tokens", "16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["bound_ever_exceeded"] is False and len(out["layers"]) == 2
    assert out["summary"]["check_max_rel_error"] < 1e-4
    assert main(["--json", "fp8", "simulate", "--model", "tiny-gpt2", "--steps", "6", "--spike-step", "3",
                 "--texts", "1", "--max-tokens", "16", "--steps-table"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["overflows_geometry"] == 0 and len(out["steps"]) == 6
    assert main(["fp8", "concentration", "--model", "tiny-qwen3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["r"] == 16


def test_user_errors_exit_2(capsys, fresh_store):
    assert main(["fp8", "bounds", "--model", "tiny-llama", "--calibration", "0", "--json"]) == 2
    assert "calibration" in capsys.readouterr().err
    assert main(["fp8", "simulate", "--model", "tiny-llama", "--layer", "9", "--json"]) == 2
    assert "out of range" in capsys.readouterr().err
