import json

from backend.__main__ import main
from backend.watermark.corpus import human_texts
from tests.watermark.test_detection import balanced_text


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


def test_detect_attack_and_generate(fixed_secret, capsys, tmp_path, writer_handle):
    run(capsys, "identity", "add-model", "--name", "m")
    run(capsys, "identity", "add-user", "--model", "1", "--label", "u")
    marked, _ = balanced_text(1, 1)
    code, report = run(capsys, "detect", "--method", "ipmark", "--text", marked)
    assert code == 0 and report["verdict"] == "watermarked" and report["user"] == "1.1"
    assert report["user_label"] == "u" and report["total"]["p_value"] < 1e-6
    assert all(s["sem_bit"] == 1 and s["syn_bit"] == 1 for s in report["sentences"] if s["usable"])
    human = run(capsys, "detect", "--method", "ipmark", "--text", " ".join(human_texts()[:3]))[1]
    assert human["verdict"] == "not watermarked" and human["user"] is None and human["total"]["p_value"] > 1e-3
    text = "The old city was quiet and calm. People walked slowly along the street. A huge market filled the square."
    code, short = run(capsys, "detect", "--method", "ipmark", "--text", text)
    assert code == 0 and short["verdict"] == "too short" and len(short["sentences"]) == 3
    path = tmp_path / "doc.md"
    path.write_text(marked)
    flat = run(capsys, "detect", "--method", "ipmark", "--file", str(path), "--search", "flat")[1]
    assert flat["retrieval"] == "flat" and flat["user"] == "1.1"
    assert run(capsys, "detect", "--file", str(tmp_path / "missing.txt"))[0] == 2
    assert "synonym_substitution" in run(capsys, "attack", "list")[1]
    # the attack changes the text, says by how much, and weakens (here: removes) the evidence
    attacked = run(capsys, "attack", "copy_paste", "--text", marked, "--rate", "0.5", "--other",
                   str(_write(tmp_path / "other.txt", " ".join(human_texts()[3:6]))))[1]
    assert attacked["text"] != marked and attacked["changed"] > 0.2
    diluted = run(capsys, "detect", "--method", "ipmark", "--text", attacked["text"])[1]
    assert diluted["total"]["z"] < report["total"]["z"]
    truncated = run(capsys, "attack", "sentence_truncation", "--text", text, "--rate", "0.5")[1]
    assert truncated["text"].count(".") == 2 and 0 < truncated["changed"] < 1
    # KGW on the tiny writer (its text survives a decode / re-encode round trip; random weights' bytes do not)
    code, gen = run(capsys, "generate", "Write about the sea.", "--method", "kgw", "--identity", "1", "--model-id",
                    "tiny-writer", "--sentences", "3", "--temperature", "1.0")
    assert code == 0 and gen["method"] == "kgw" and 1 <= len(gen["sentences"]) <= 3
    code, kgw = run(capsys, "detect", "--method", "kgw", "--identity", "1", "--model-id", "tiny-writer",
                    "--text", gen["text"])
    assert code == 0 and kgw["verdict"] == "watermarked" and kgw["z"] > 4 and kgw["p_value"] < 1e-4
    plain = run(capsys, "generate", "Write about the sea.", "--method", "none", "--model-id", "tiny-writer",
                "--sentences", "3", "--temperature", "1.0")[1]
    unmarked = run(capsys, "detect", "--method", "kgw", "--identity", "1", "--model-id", "tiny-writer",
                   "--text", plain["text"])[1]
    assert unmarked["verdict"] != "watermarked" and unmarked["z"] < kgw["z"]
    assert run(capsys, "detect", "--method", "kgw", "--text", plain["text"])[0] == 2  # which key to test?
    code, gen = run(capsys, "generate", "Say hi.", "--method", "ipmark", "--identity", "1.1", "--model-id",
                    "tiny-llama", "--sentences", "1", "--candidates", "2")
    assert code == 0 and gen["method"] == "ipmark" and len(gen["sentences"]) == 1
    assert gen["sentences"][0]["n_candidates"] == 2 and gen["sentences"][0]["level"] in ("model", "user")
    assert run(capsys, "generate", "Say hi.", "--identity", "1.x")[0] == 2


def _write(path, text: str):
    path.write_text(text)
    return path


def test_generate_without_an_identity_uses_the_demo_one_and_says_so(capsys):
    """The CLI's first try on a fresh store works as the page's does: the demo identity, named in the output."""
    from backend.watermark import demo

    code = main(["watermark", "generate", "Write about the sea.", "--method", "kgw", "--model-id", "tiny-writer",
                 "--sentences", "2", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    gen = json.loads(captured.out)
    assert gen["identity"] == str(demo.DEMO_MODEL_ADDRESS) and gen["demo"] is True
    assert "demo" in captured.err and "public demo secret" in captured.err
    demo.remove_demo()  # removed on purpose: no silent fallback, a message naming what to do
    assert run(capsys, "generate", "Say hi.", "--method", "ipmark", "--model-id", "tiny-llama")[0] == 2


def test_generate_on_the_int8_copy_and_detect_the_text(writer_handle, capsys):
    """`--precision int8` samples the candidates with the model's int8 copy; the detector scores the text alone."""
    from backend.models import load
    from backend.models.reduced import _copies

    code = main(["watermark", "generate", "Write about the sea.", "--method", "kgw", "--model-id", "tiny-writer",
                 "--sentences", "2", "--precision", "int8", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    gen = json.loads(captured.out)
    assert gen["text"] and ("int8", False) in _copies[load("tiny-writer").model]
