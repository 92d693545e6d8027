import json

from backend.__main__ import main


def run(capsys, *argv) -> tuple[int, object]:
    code = main(["watermark", *argv, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def test_identity_commands(capsys):
    assert run(capsys, "identity", "add-model", "--name", "cli-model")[1] == {"address": 1, "name": "cli-model"}
    assert run(capsys, "identity", "add-user", "--model", "1", "--label", "alice")[1]["address"] == "1.1"
    assert run(capsys, "identity", "bulk-users", "--model", "1", "--count", "50")[1]["added"] == 50
    listing = run(capsys, "identity", "list")[1]
    assert listing == [{"address": 1, "name": "cli-model", "users": 51}]
    assert len(run(capsys, "identity", "list", "--model", "1", "--limit", "5")[1]) == 5
    code, _ = run(capsys, "identity", "add-user", "--model", "9", "--label", "x")
    assert code == 2


def test_detect_attack_and_generate(capsys, tmp_path):
    run(capsys, "identity", "add-model", "--name", "m")
    run(capsys, "identity", "add-user", "--model", "1", "--label", "u")
    text = "The old city was quiet and calm. People walked slowly along the street. A huge market filled the square."
    code, report = run(capsys, "detect", "--text", text)
    assert code == 0 and report["verdict"] == "too short to decide" and len(report["sentences"]) == 3
    path = tmp_path / "doc.md"
    path.write_text(text)
    assert run(capsys, "detect", "--file", str(path), "--search", "flat")[1]["retrieval"] == "flat"
    assert run(capsys, "detect", "--file", str(tmp_path / "missing.txt"))[0] == 2
    assert "synonym_substitution" in run(capsys, "attack", "list")[1]
    attacked = run(capsys, "attack", "sentence_truncation", "--text", text, "--rate", "0.5")[1]["text"]
    assert attacked.count(".") == 2
    code, gen = run(capsys, "generate", "Say hi.", "--method", "ipmark", "--identity", "1.1", "--model-id",
                    "tiny-llama", "--sentences", "1", "--candidates", "2")
    assert code == 0 and gen["method"] == "ipmark" and len(gen["sentences"]) == 1
    code, kgw = run(capsys, "detect", "--method", "kgw", "--identity", "1", "--model-id", "tiny-llama",
                    "--text", gen["text"] or "x")
    assert code == 0 and "z" in kgw
    assert run(capsys, "generate", "Say hi.", "--identity", "1.x")[0] == 2
