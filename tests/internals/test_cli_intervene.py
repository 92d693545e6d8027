"""`python -m backend inspect patch|ablate|steer`: the JSON shapes of the issue, cached on repeat, and every user
mistake one line with exit 2 and nothing stored."""
import json

import pytest

from backend.__main__ import main
from backend.store.db import connect

CLEAN, CORRUPTED = "The cat sat on the mat", "The dog sat on the mat"


def _json(capsys, *argv):
    assert main(["inspect", *argv, "--model", "tiny-llama", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_patch_shapes_and_cache(capsys, fresh_store):
    patched = _json(capsys, "patch", "--clean", CLEAN, "--corrupted", CORRUPTED, "--target", "a", "--contrast", "e")
    assert patched["site"] == "resid_pre" and patched["tokens"][4] == "c" and patched["corrupted_tokens"][4] == "d"
    assert len(patched["values"]) == 2 and len(patched["values"][0]) == len(CLEAN)
    assert {"clean_logit_diff", "corrupted_logit_diff"} <= set(patched)
    heads = _json(capsys, "patch", "--clean", CLEAN, "--corrupted", CORRUPTED, "--target", "a", "--contrast", "e",
                  "--site", "head")
    assert len(heads["values"]) == 2 and len(heads["values"][1]) == 4
    again = _json(capsys, "patch", "--clean", CLEAN, "--corrupted", CORRUPTED, "--target", "a", "--contrast", "e",
                  "--site", "head")
    assert again["provenance"] == "cached" and again["values"] == heads["values"]


def test_ablate_and_steer_shapes(capsys, fresh_store):
    ablated = _json(capsys, "ablate", "--prompt", CLEAN, "--heads", "1.3,0.0", "--mlps", "1", "--neurons", "0:7",
                    "--mode", "zero", "--generate", "3")
    assert ablated["ablated"] == ["head 1.3", "head 0.0", "MLP 1", "neuron 0:7"] and ablated["mode"] == "zero"
    assert len(ablated["before"]["top"]) == 5 and ablated["before"]["generation"] and ablated["after"]["generation"]
    steered = _json(capsys, "steer", "--plus", "Love", "--minus", "Hate", "--layer", "1", "--coefficients", "0,4,8",
                    "--prompt", "I think you are", "--max-new-tokens", "4")
    assert [run["coefficient"] for run in steered["runs"]] == [0.0, 4.0, 8.0]
    assert len(steered["runs"][2]["lens"]) == 3 and steered["vector_norm"] > 0


def test_plain_text(capsys, fresh_store):
    assert main(["inspect", "patch", "--clean", CLEAN, "--corrupted", CORRUPTED, "--target", "a", "--contrast", "e",
                 "--model", "tiny-gpt2"]) == 0
    assert "largest effects" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["patch", "--clean", CLEAN, "--corrupted", "The cat sat"], "22 tokens and the corrupted one 11"),
    (["patch", "--clean", CLEAN, "--corrupted", CORRUPTED, "--target", "ab"], "is 2 tokens"),
    (["ablate", "--prompt", CLEAN, "--heads", "2.0"], "Layer 2 does not exist"),
    (["ablate", "--prompt", CLEAN, "--heads", "1.9"], "Head 9 does not exist"),
    (["ablate", "--prompt", CLEAN, "--heads", "1-2"], "LAYER.HEAD"),
    (["ablate", "--prompt", CLEAN], "Nothing to ablate"),
    (["ablate", "--prompt", CLEAN, "--neurons", "0:100000"], "Neuron 0:100000 does not exist"),
    (["ablate", "--prompt", CLEAN, "--mlps", "0", "--reference", " "], "reference texts are empty"),
    (["steer", "--layer", "1", "--coefficients", "0,nan"], "not a finite number"),
    (["steer", "--layer", "1", "--coefficients", "x"], "is not one"),
    (["steer", "--layer", "5"], "Layer 5 does not exist"),
    (["steer", "--layer", "1", "--prompt", "x" * 300], "context"),
    (["patch", "--clean", "x" * 300, "--corrupted", "y" * 300], "context"),
])
def test_bad_input_is_one_line_exit_2_nothing_stored(capsys, fresh_store, argv, words):
    assert main(["inspect", *argv, "--model", "tiny-llama", "--json"]) == 2
    err = capsys.readouterr().err
    assert words in err and err.startswith("error:") and err.count("\n") == 1
    with connect() as con:
        assert con.execute("select count(*) from artifacts").fetchone()[0] == 0
