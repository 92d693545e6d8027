"""The adapter trainer on a tiny random Llama: label masking, a short run, and resuming from a checkpoint."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerBase

from training.adapter import (IGNORE, TrainConfig, build_example, collate, greedy_completions, micro_batches,
                              score_report, train)
from backend.tasks.arithmetic import generate_problems
from tests.support.tiny import byte_tokenizer

SMOLLM_DIR = Path(__file__).resolve().parents[2] / "data" / "cache" / "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerBase:
    """The real SmolLM2 tokenizer when its cache exists, else the tests' byte tokenizer (same chat markup)."""
    if (SMOLLM_DIR / "tokenizer.json").exists():
        return AutoTokenizer.from_pretrained(SMOLLM_DIR)
    return byte_tokenizer()


def tiny_model(tokenizer: PreTrainedTokenizerBase) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return LlamaForCausalLM(config).eval()


def config(tmp_path: Path, **changes) -> TrainConfig:
    base = dict(n_train=16, batch_size=2, max_steps=2, warmup_steps=1, checkpoint_every=1, lora_r=4, lora_alpha=8,
                run_dir=str(tmp_path / "run"), output_dir=str(tmp_path / "out"))
    return TrainConfig(**{**base, **changes})


def test_labels_cover_only_the_reply_and_its_end_of_turn(tokenizer: PreTrainedTokenizerBase) -> None:
    problem = generate_problems(1, seed=3, difficulty=2)[0]
    ids, labels = build_example(tokenizer, problem)
    assert len(ids) == len(labels)
    learnt = [t for t, lab in zip(ids, labels) if lab != IGNORE]
    assert learnt == [lab for lab in labels if lab != IGNORE]
    assert learnt[-1] == tokenizer.eos_token_id  # the model learns to stop
    assert tokenizer.decode(learnt[:-1]) == problem.solution
    first = labels.index(next(lab for lab in labels if lab != IGNORE))
    assert all(lab == IGNORE for lab in labels[:first])  # the whole prompt is masked, reply contiguous
    assert tokenizer.decode(ids[:first]).endswith("assistant\n")

    batch = collate([(ids, labels), (ids[:5], [IGNORE] * 5)], tokenizer.pad_token_id)
    assert batch["attention_mask"][1].tolist() == [1] * 5 + [0] * (len(ids) - 5)  # right padding
    assert (batch["labels"][1] == IGNORE).all()


def test_batch_order_is_a_function_of_the_step(tmp_path: Path) -> None:
    cfg = config(tmp_path, n_train=10, batch_size=4, grad_accum=2)
    assert micro_batches(3, cfg, 10) == micro_batches(3, cfg, 10)
    assert all(len(b) == 4 for b in micro_batches(3, cfg, 10))


def test_two_steps_then_resume_at_the_right_step(tmp_path: Path, tokenizer: PreTrainedTokenizerBase) -> None:
    logs: list[str] = []
    model, state = train(tiny_model(tokenizer), tokenizer, config(tmp_path), log=logs.append)
    assert state["step"] == 2 and len(state["losses"]) == 2 and state["resumes"] == 0
    assert (tmp_path / "run" / "checkpoint.pt").exists()
    assert any(line.startswith("step 2/2 loss") for line in logs)
    trained = {k: v.clone() for k, v in model.state_dict().items() if "lora_B" in k}
    assert any(v.abs().sum() > 0 for v in trained.values())  # lora_B starts at zero: training moved it

    logs.clear()  # extend the run: it resumes at step 2 with the trained adapter, and runs steps 3-4 only
    model2, state2 = train(tiny_model(tokenizer), tokenizer, config(tmp_path, max_steps=4), log=logs.append)
    assert any("resumed" in line and "at step 2" in line for line in logs)
    assert [line.split()[1] for line in logs if line.startswith("step ")] == ["3/4", "4/4"]
    assert state2["step"] == 4 and state2["resumes"] == 1 and state2["losses"][:2] == state["losses"]

    with pytest.raises(ValueError, match="lr"):  # a different recipe must not silently resume
        train(tiny_model(tokenizer), tokenizer, config(tmp_path, max_steps=6, lr=5e-3), log=logs.append)


def test_exact_match_runs_batched_greedy(tokenizer: PreTrainedTokenizerBase) -> None:
    """The training script's evaluation: greedy replies in batches (the last one short), scored per problem."""
    problems = generate_problems(3, "heldout", seed=0, difficulty=1)
    replies = greedy_completions(tiny_model(tokenizer), tokenizer, problems, max_new_tokens=4, batch_size=2)
    report = score_report(problems, replies)
    assert len(replies) == len(report["correct"]) == report["n"] == 3 and 0.0 <= report["exact_match"] <= 1.0


def test_warm_start_from_a_saved_adapter(tmp_path: Path, tokenizer: PreTrainedTokenizerBase) -> None:
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    model, _ = train(tiny_model(tokenizer), tokenizer, config(tmp_path, family="mixed"), log=lambda _: None)
    saved = {k: v.to(torch.float16) for k, v in get_peft_model_state_dict(model).items()}
    (tmp_path / "adapter").mkdir()
    save_file(saved, tmp_path / "adapter" / "adapter_model.safetensors")

    # zero steps from the warm start: the LoRA holds exactly the saved weights, none of a fresh init
    warm, state = train(tiny_model(tokenizer), tokenizer, config(tmp_path / "warm", max_steps=0,
                                                                init_adapter=str(tmp_path / "adapter")), log=lambda _: None)
    loaded = get_peft_model_state_dict(warm)
    assert state["step"] == 0 and loaded.keys() == saved.keys()
    assert all(torch.equal(loaded[k], saved[k].float()) for k in saved)


def test_a_checkpoint_from_before_a_new_field_still_resumes(tmp_path: Path) -> None:
    from training.adapter import check_resumable

    old = {k: v for k, v in config(tmp_path).to_dict().items() if k not in ("family", "init_adapter")}
    check_resumable(old, config(tmp_path))  # the new fields at their defaults: the same recipe
    with pytest.raises(ValueError, match="family"):
        check_resumable(old, config(tmp_path, family="broad"))
