"""`python -m backend inspect ...`: the JSON shapes of the issue, and one-line errors with exit 2."""
import json

import pytest

from backend.__main__ import main

PROMPT = "The cat sat on the mat"


def _json(capsys, *argv):
    assert main(["inspect", *argv, "--model", "tiny-llama", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_shapes(capsys, fresh_store):
    lens = _json(capsys, "lens", "--prompt", PROMPT, "--top-k", "3", "--track", "t")
    assert lens["tracked"]["token"] == "t" and len(lens["tracked"]["rank_by_layer"]) == 3
    assert len(lens["tokens"]) == len(PROMPT) and [layer["layer"] for layer in lens["layers"]] == [0, 1, 2]
    assert len(lens["layers"][2]["positions"][0]["top"]) == 3 and lens["final"]["position"] == len(PROMPT) - 1
    dla = _json(capsys, "dla", "--prompt", PROMPT, "--target", "a", "--contrast", "b")
    assert len(dla["heads"]) == 2 and len(dla["heads"][0]) == 4 and len(dla["mlps"]) == 2
    assert dla["total"] == pytest.approx(dla["logit"], abs=1e-4) and dla["target"]["token"] == "a"
    att = _json(capsys, "attention", "--prompt", PROMPT, "--layer", "1", "--head", "2")
    assert len(att["pattern"]) == len(PROMPT) and sum(att["pattern"][-1]) == pytest.approx(1.0, abs=1e-5)
    head = _json(capsys, "head", "--prompt", PROMPT, "--layer", "0", "--head", "1", "--top-k", "4")
    assert len(head["promoted"]) == 4 and len(head["suppressed"]) == 4
    again = _json(capsys, "head", "--prompt", PROMPT, "--layer", "0", "--head", "1", "--top-k", "4")
    assert again["provenance"] == "cached" and again["promoted"] == head["promoted"]


def test_attribute_json_shape(capsys, fresh_store):
    one = _json(capsys, "attribute", "--prompt", PROMPT, "--method", "integrated_gradients", "--steps", "8")
    assert set(one) >= {"tokens", "targets", "scores", "delta"} and len(one["targets"]) == 1
    assert len(one["scores"]) == 1 and len(one["scores"][0]) == len(one["tokens"]) == len(PROMPT)
    assert isinstance(one["delta"], float)
    cont = _json(capsys, "attribute", "--prompt", PROMPT, "--generate", "3", "--method", "ablation")
    assert len(cont["targets"]) == len(cont["scores"]) == 3 and cont["delta"] is None
    assert len(cont["tokens"]) == len(PROMPT) + 2 and cont["scores"][0][-1] is None
    again = _json(capsys, "attribute", "--prompt", PROMPT, "--generate", "3", "--method", "ablation")
    assert again["provenance"] == "cached" and again["scores"] == cont["scores"]


def test_plain_text_output(capsys, fresh_store):
    assert main(["inspect", "dla", "--prompt", PROMPT, "--model", "tiny-gpt2"]) == 0
    assert "sum of parts" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["lens", "--prompt", "   "], "empty"),
    (["lens", "--prompt", "x" * 300], "context"),
    (["lens", "--prompt", PROMPT, "--position", "40"], "outside the prompt"),
    (["lens", "--prompt", PROMPT, "--top-k", "0"], "top_k"),
    (["attention", "--prompt", PROMPT, "--layer", "2"], "Layer 2 does not exist"),
    (["attention", "--prompt", PROMPT, "--head", "4"], "Head 4 does not exist"),
    (["head", "--prompt", PROMPT, "--layer", "-1"], "Layer -1"),
    (["dla", "--prompt", PROMPT, "--target", "ab"], "is 2 tokens"),
    (["dla", "--prompt", PROMPT, "--contrast", "\u4e2d"], "contrast token"),
    (["lens", "--prompt", PROMPT, "--track", "ab"], "tracked token"),
    (["attribute", "--prompt", PROMPT, "--target", "a", "--generate", "2"], "not both"),
    (["attribute", "--prompt", PROMPT, "--target", "ab"], "is 2 tokens"),
    (["attribute", "--prompt", PROMPT, "--generate", "33"], "generate"),
    (["attribute", "--prompt", PROMPT, "--steps", "1"], "steps"),
    (["attribute", "--prompt", "x" * 250, "--generate", "20"], "context"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, fresh_store, argv, words):
    assert main(["inspect", *argv, "--model", "tiny-llama", "--json"]) == 2
    err = capsys.readouterr().err
    assert words in err and err.startswith("error:") and err.count("\n") == 1


def test_graph_node_heads_grid_json_shapes(capsys, fresh_store):
    graph = _json(capsys, "graph", "--prompt", PROMPT, "--threshold", "0.01")
    assert graph["tokens"] == list(PROMPT) and graph["position"] == len(PROMPT) - 1
    assert {"layer": 2, "position": len(PROMPT) - 1, "stage": "post"} in graph["nodes"]
    assert graph["edges"] and set(graph["edges"][0]) == {"from", "to", "from_stage", "to_stage", "kind", "head",
                                                         "weight", "heads"}
    assert all(e["kind"] in ("attn", "ffn", "resid") and e["head"] is None and e["weight"] >= 0.01
               for e in graph["edges"])
    per_head = _json(capsys, "graph", "--prompt", PROMPT, "--position", "4", "--per-head", "--threshold", "0.001")
    assert any(e["kind"] == "attn" and isinstance(e["head"], int) for e in per_head["edges"])
    assert all(len(e["heads"]) == (4 if e["kind"] == "attn" else 0) for e in graph["edges"])
    assert all(e["to"][1] <= 4 for e in per_head["edges"])
    node = _json(capsys, "node", "--prompt", PROMPT, "--layer", "1", "--stage", "mid", "--top-k", "3")
    assert len(node["lens"]) == 3 and set(node["lens"][0]) == {"token", "id", "prob"} and node["writer"] == "attention"
    heads = _json(capsys, "heads", "--prompt", PROMPT, "--score", "induction", "--repeat", "8")
    assert heads["score"] == "induction" and len(heads["scores"]) == 2 and len(heads["scores"][0]) == 4
    grid = _json(capsys, "grid", "--prompt", PROMPT, "--layer", "1")
    assert len(grid["patterns"]) == 4 and len(grid["patterns"][0]) == len(PROMPT) and grid["heads"][3] == [1, 3]
    top = _json(capsys, "grid", "--prompt", PROMPT, "--score", "sink", "--top-k", "5")
    assert len(top["heads"]) == 5 and top["layer"] == -1
    again = _json(capsys, "graph", "--prompt", PROMPT, "--threshold", "0.01")
    assert again["provenance"] == "cached" and again["edges"] == graph["edges"]


@pytest.mark.parametrize("argv, words", [
    (["graph", "--prompt", PROMPT, "--threshold", "0"], "threshold"),
    (["graph", "--prompt", PROMPT, "--position", "-40"], "outside the prompt"),
    (["graph", "--prompt", ""], "empty"),
    (["node", "--prompt", PROMPT, "--layer", "3"], "residual states are 0..2"),
    (["node", "--prompt", PROMPT, "--layer", "0", "--stage", "mid"], "from layer 1 on"),
    (["heads", "--prompt", "abc", "--score", "duplicate"], "no token occurs twice"),
    (["grid", "--prompt", PROMPT, "--layer", "5"], "Layer 5 does not exist"),
])
def test_bad_graph_input_is_one_line_and_exit_2(capsys, fresh_store, argv, words):
    assert main(["inspect", *argv, "--model", "tiny-llama", "--json"]) == 2
    err = capsys.readouterr().err
    assert words in err and err.startswith("error:") and err.count("\n") == 1
