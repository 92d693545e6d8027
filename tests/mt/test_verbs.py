"""The cached verbs and the CLI, end to end on tiny-llama with the tiny parallel set; the verbs registered, their
derived code versions independent of the process."""
import json

import numpy as np
import pytest

from backend.__main__ import main
from backend.errors import UserError
from backend.models import load
from backend.mt import ConditionConfig, ExperimentConfig, HeadsConfig, evaluate, find_heads, run_condition
from tests.mt.conftest import TINY_TSV
from tests.support.verb_versions import verbs_of, versions_in_a_fresh_process

HEADS = HeadsConfig(n_prompts=2, k_shots=2, max_answer_tokens=3)
EXP = ExperimentConfig(n_sentences=2, k_shots=2, max_new_tokens=4, n_random=2, percent=5.0, heads=HEADS)


@pytest.fixture(scope="module")
def handle():
    return load("tiny-llama")


def test_find_heads_maps_and_cache(handle, tiny_data):
    first = find_heads(handle, HEADS, tiny_data)
    head_map = first.value
    assert head_map.patching.shape == head_map.attribution.shape == (2, 4)
    assert head_map.mean_clean.shape == (2, 4, 16)
    assert len(head_map.rows) == 2 and head_map.other_language == "de"
    assert all(k >= 0 for k in head_map.kl)
    assert head_map.config.dataset == tiny_data.digest
    assert len(head_map.selected(5.0)) == 1 and len(head_map.table()) == 1
    again = find_heads(handle, HEADS, tiny_data)
    assert again.cached and np.array_equal(again.value.patching, head_map.patching)


def test_head_types_give_different_maps(handle, tiny_data):
    lang = find_heads(handle, HEADS, tiny_data).value
    trans = find_heads(handle, HeadsConfig(**{**HEADS.__dict__, "head_type": "translation"}), tiny_data).value
    assert not np.array_equal(lang.patching, trans.patching)


def test_conditions_score_outputs(handle, tiny_data):
    out = run_condition(handle, ConditionConfig(prompt="instruction-free", n_sentences=2, max_new_tokens=4),
                        tiny_data).value
    assert len(out.outputs) == 2 and out.rows == tuple(tiny_data.rows("evaluate")[:2])
    assert 0 <= out.target_rate <= 1 and 0 <= out.chrf <= 100
    steered = run_condition(handle, ConditionConfig(prompt="instruction-free", n_sentences=2, max_new_tokens=4,
                                                    steer=(HEADS,), percent=5.0), tiny_data).value
    assert len(steered.heads) == 1 and "steering" in steered.label
    patched = run_condition(handle, ConditionConfig(prompt="instruction-free", n_sentences=2, max_new_tokens=4,
                                                    steer=(HEADS,), steer_mode="patch", percent=5.0), tiny_data).value
    assert "patch" in patched.label and patched.heads == steered.heads
    with pytest.raises(UserError, match="steer_mode must be one of add, patch"):
        ConditionConfig(steer_mode="sideways")  # a config that exists is valid


def test_evaluate_runs_every_condition(handle, tiny_data):
    result = evaluate(handle, EXP, tiny_data).value
    labels = [row["condition"] for row in result.table()]
    assert labels[:3] == ["instruction", "few-shot", "instruction-free"]
    assert any("steering" in label for label in labels)
    assert sum("random heads" in label for label in labels) == 2
    summary = result.ablation_summary()
    assert set(summary) == {"language", "translation", "random"} and summary["random"]["draws"] == 2
    selected = result.find("few-shot − language heads")[0].heads
    for c in result.find("few-shot − random heads"):
        assert len(c.heads) == len(selected) and not set(c.heads) & set(selected)


def test_bad_parameters_are_user_errors(handle, tiny_data):
    with pytest.raises(UserError):
        find_heads(handle, HeadsConfig(tgt="es"), tiny_data)
    with pytest.raises(UserError):
        find_heads(handle, HeadsConfig(head_type="syntax"), tiny_data)
    with pytest.raises(UserError):
        run_condition(handle, ConditionConfig(prompt="poem"), tiny_data)
    with pytest.raises(UserError, match="context"):
        find_heads(handle, HeadsConfig(k_shots=5, n_prompts=1, tgt="fr"), None)  # built-in prompts > 256 tokens


def test_cli_heads_and_steer(tmp_path, capsys):
    path = tmp_path / "pairs.tsv"
    path.write_text(TINY_TSV)
    code = main(["mt", "heads", "--model", "tiny-llama", "--data", str(path), "--prompts", "2", "--shots", "2",
                 "--percent", "5", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "tiny-llama" and len(out["selected"]) == 1 and len(out["patching"]) == 2
    code = main(["mt", "steer", "--model", "tiny-llama", "--data", str(path), "--prompts", "2", "--shots", "2",
                 "--percent", "5", "--sentences", "1", "--outputs", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["condition"].split(" ")[0] for row in out["table"]] == ["instruction-free", "instruction-free",
                                                                       "few-shot", "instruction"]
    assert len(out["outputs"]) == 4
    assert out["headline"]["reference"] == "few-shot" and "gap_recovered" in out["headline"]["steering"]


def test_cli_bad_upload_exits_2(tmp_path, capsys):
    path = tmp_path / "one.tsv"
    path.write_text("en\nhello\n")
    assert main(["mt", "heads", "--model", "tiny-llama", "--data", str(path)]) == 2
    assert "one language" in capsys.readouterr().err


def test_the_maps_the_drill_down_the_conditions_and_the_experiments_are_registered_verbs():
    assert set(verbs_of("mt")) == {"heads", "head", "condition", "steer", "ablate", "evaluate"}


def test_unedited_code_keeps_its_version_in_another_process():
    here = {name: v.code_version for name, v in verbs_of("mt").items()}
    assert versions_in_a_fresh_process("mt") == here


def test_an_experiment_hands_its_table_so_far_to_a_watcher_line_by_line(handle, tiny_data, fresh_store):
    from backend.mt import run_experiment
    from tests.support.partials import PartialsSeen

    seen = PartialsSeen()
    done = run_experiment(handle, "steer", EXP, tiny_data, seen).value
    sentences = [[len(c.outputs) for c in p.value.conditions] for p in seen.partials]
    # each condition's sentences as they are written, then the condition finished; four conditions of two sentences
    assert sentences[:3] == [[1], [2], [2]] and sentences[-1] == [2, 2, 2, 2]
    assert [p.done for p in seen.partials if p.done == len(p.value.conditions)] == [1, 2, 3, 4]
    assert all(p.total == 4 and p.unit == "conditions" for p in seen.partials)
    assert seen.partials[-1].value.table() == done.table()
