"""Train a LoRA adapter on the arithmetic task's step-by-step solutions, resumably, and score it.

Examples are chat-formatted (user = format_prompt(problem), assistant = problem.solution); the loss
covers only the assistant's tokens, its end-of-turn token included, so the model learns to stop.
Batch order is a pure function of (seed, step), and a checkpoint holds the adapter, optimizer and
RNG state, so a killed run resumes where its last checkpoint left off.
"""
from __future__ import annotations

import dataclasses
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from peft import LoraConfig, PeftModel, get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from backend.tasks.arithmetic import Problem, check_answer, format_prompt, generate_problems

IGNORE = -100
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Fields that may change between a checkpoint and its resumption (they do not alter what was trained).
RESUMABLE_CHANGES = frozenset({"max_steps", "checkpoint_every", "log_every", "eval_n", "eval_seed",
                               "eval_batch_size", "max_new_tokens", "output_dir", "run_dir"})
Log = Callable[[str], None]


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    n_train: int = 3000
    difficulty: int | None = None  # None: a uniform mix of 1-3 steps
    family: str = "classic"  # generate_problems' family: classic (12 templates), broad, mixed or extended
    solution_style: str = "plain"  # how the target solutions write each step (worked_arithmetic.SOLUTION_STYLES)
    init_adapter: str = ""  # warm start: an adapter directory whose weights the LoRA starts from
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    target_modules: tuple[str, ...] = ALL_LINEAR
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup_steps: int = 15
    batch_size: int = 8
    grad_accum: int = 1
    max_steps: int = 350
    checkpoint_every: int = 10
    log_every: int = 1
    eval_n: int = 200
    eval_seed: int = 1234
    eval_batch_size: int = 20
    max_new_tokens: int = 256
    run_dir: str = "data/cache/adapter_runs/smollm2-135m-arith-lora"
    output_dir: str = "data/models/smollm2-135m-arith-lora"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["target_modules"] = list(self.target_modules)
        return d


def print_flush(message: str) -> None:
    print(message, flush=True)


# ---------------------------------------------------------------- data

def chat_texts(tokenizer: PreTrainedTokenizerBase, problem: Problem) -> tuple[str, str]:
    """(prompt up to the assistant header, prompt + solution + end-of-turn) as chat-template text."""
    user = [{"role": "user", "content": format_prompt(problem)}]
    prompt = tokenizer.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(user + [{"role": "assistant", "content": problem.solution}],
                                         tokenize=False)
    return prompt, full


def build_example(tokenizer: PreTrainedTokenizerBase, problem: Problem) -> tuple[list[int], list[int]]:
    """input_ids and labels; labels are IGNORE everywhere but the solution and its end-of-turn token."""
    prompt, full = chat_texts(tokenizer, problem)
    if not full.startswith(prompt):
        raise ValueError("the chat template does not extend the generation prompt with the reply")
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids, n_prompt = tokenizer(full, add_special_tokens=False)["input_ids"], len(prompt_ids)
    if ids[:n_prompt] != prompt_ids:
        raise ValueError("the prompt tokenizes differently inside the full chat (a merge across the boundary)")
    eot = ids.index(tokenizer.eos_token_id, n_prompt)  # the reply's end-of-turn token: the last one learnt
    ids = ids[: eot + 1]
    return ids, [IGNORE] * n_prompt + ids[n_prompt:]


def collate(examples: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded input_ids / attention_mask / labels."""
    width = max(len(ids) for ids, _ in examples)
    out = {"input_ids": torch.full((len(examples), width), pad_id), "labels": torch.full((len(examples), width), IGNORE),
           "attention_mask": torch.zeros((len(examples), width), dtype=torch.long)}
    for row, (ids, labels) in enumerate(examples):
        out["input_ids"][row, : len(ids)] = torch.tensor(ids)
        out["labels"][row, : len(ids)] = torch.tensor(labels)
        out["attention_mask"][row, : len(ids)] = 1
    return out


def micro_batches(step: int, cfg: TrainConfig, n: int) -> list[list[int]]:
    """Example indices of optimizer step `step`: a pure function of (seed, step), hence resumable."""
    per_epoch = max(1, n // cfg.batch_size)
    out = []
    for j in range(cfg.grad_accum):
        m = step * cfg.grad_accum + j
        epoch, pos = divmod(m, per_epoch)
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(cfg.seed * 1_000_003 + epoch))
        out.append(perm[pos * cfg.batch_size: (pos + 1) * cfg.batch_size].tolist())
    return out


# ---------------------------------------------------------------- training

def attach_lora(model: PreTrainedModel, cfg: TrainConfig) -> PeftModel:
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=list(cfg.target_modules), task_type="CAUSAL_LM", bias="none")
    return get_peft_model(model, lora)


def batch_loss(model: PeftModel, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean next-token loss over labelled positions; the LM head runs only on those positions."""
    base = model.get_base_model()
    hidden = base.get_decoder()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    targets = batch["labels"][:, 1:]
    keep = targets != IGNORE
    logits = base.get_output_embeddings()(hidden[:, :-1][keep])
    return F.cross_entropy(logits.float(), targets[keep])


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Linear warmup to 1, then linear decay to 0 at max_steps."""
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    return max(0.0, (cfg.max_steps - step) / max(1, cfg.max_steps - cfg.warmup_steps))


def save_checkpoint(path: Path, model: PeftModel, optimizer: torch.optim.Optimizer, state: dict) -> None:
    """Atomic: a kill mid-write leaves the previous checkpoint intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {**state, "adapter": get_peft_model_state_dict(model), "optimizer": optimizer.state_dict(),
               "torch_rng": torch.get_rng_state(), "python_rng": random.getstate()}
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def load_adapter_weights(model: PeftModel, directory: Path) -> None:
    """Set the LoRA weights from a saved adapter (same r and target modules), cast to the model's dtype."""
    from safetensors.torch import load_file

    weights = load_file(directory / "adapter_model.safetensors")
    dtype = next(p for p in model.parameters() if p.requires_grad).dtype
    result = set_peft_model_state_dict(model, {k: v.to(dtype) for k, v in weights.items()})
    missing = [k for k in result.missing_keys if "lora_" in k]
    if missing:
        raise ValueError(f"{directory} does not match this LoRA configuration: {len(missing)} LoRA weights missing")


def check_resumable(saved: dict, cfg: TrainConfig) -> None:
    now = cfg.to_dict()
    defaults = TrainConfig().to_dict()  # a field added after the checkpoint was written had its default then
    changed = sorted(k for k in now if k not in RESUMABLE_CHANGES and saved.get(k, defaults[k]) != now[k])
    if changed:
        raise ValueError(f"checkpoint was trained with different {changed}; use another run_dir or the same values")


def train(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, cfg: TrainConfig,
          log: Log = print_flush) -> tuple[PeftModel, dict]:
    """Attach LoRA to `model` (in place), train or resume up to cfg.max_steps; returns (model, run state)."""
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    problems = generate_problems(cfg.n_train, "train", seed=cfg.seed, difficulty=cfg.difficulty, family=cfg.family,
                                 style=cfg.solution_style)
    examples = [build_example(tokenizer, p) for p in problems]
    peft_model = attach_lora(model, cfg)
    if cfg.init_adapter:  # a checkpoint below, when there is one, overrides this start
        load_adapter_weights(peft_model, Path(cfg.init_adapter))
    params = [p for p in peft_model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    ckpt = Path(cfg.run_dir) / "checkpoint.pt"
    state = {"step": 0, "train_seconds": 0.0, "losses": [], "config": cfg.to_dict(), "resumes": 0}
    if ckpt.exists():
        saved = torch.load(ckpt, weights_only=False)
        check_resumable(saved["config"], cfg)
        set_peft_model_state_dict(peft_model, saved["adapter"])
        optimizer.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["torch_rng"])
        random.setstate(saved["python_rng"])
        state = {k: saved[k] for k in ("step", "train_seconds", "losses", "resumes")}
        state.update(config=cfg.to_dict(), resumes=state["resumes"] + (state["step"] < cfg.max_steps))
        log(f"resumed from {ckpt} at step {state['step']} ({state['train_seconds'] / 60:.1f} min trained)")
    n_trainable = sum(p.numel() for p in params)
    log(f"training {n_trainable:,} LoRA parameters on {len(examples)} examples, steps {state['step']}->{cfg.max_steps}")
    peft_model.train()
    while state["step"] < cfg.max_steps:
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        for group in optimizer.param_groups:  # the schedule is a function of the step: resumes need no state
            group["lr"] = cfg.lr * lr_factor(state["step"], cfg)
        loss_sum = 0.0
        for indices in micro_batches(state["step"], cfg, len(examples)):
            loss = batch_loss(peft_model, collate([examples[i] for i in indices], tokenizer.pad_token_id))
            (loss / cfg.grad_accum).backward()
            loss_sum += loss.item() / cfg.grad_accum
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        elapsed = time.perf_counter() - start
        state["step"] += 1
        state["train_seconds"] += elapsed
        state["losses"].append(round(loss_sum, 5))
        if state["step"] % cfg.log_every == 0 or state["step"] == cfg.max_steps:
            eta = elapsed * (cfg.max_steps - state["step"]) / 60
            log(f"step {state['step']}/{cfg.max_steps} loss {loss_sum:.4f} lr {optimizer.param_groups[0]['lr']:.2e} "
                f"{elapsed:.1f} s/step ETA {eta:.1f} min")
        if state["step"] % cfg.checkpoint_every == 0 or state["step"] == cfg.max_steps:
            save_checkpoint(ckpt, peft_model, optimizer, state)
    peft_model.eval()
    return peft_model, state


# ---------------------------------------------------------------- evaluation

@torch.no_grad()
def greedy_completions(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, problems: Sequence[Problem],
                       max_new_tokens: int = 256, batch_size: int = 20) -> list[str]:
    """Batched greedy replies (left padding + attention mask), special tokens stripped."""
    model.eval()
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    out: list[str] = []
    try:
        for i in range(0, len(problems), batch_size):
            prompts = [chat_texts(tokenizer, p)[0] for p in problems[i: i + batch_size]]
            enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
            gen = model.generate(**enc, do_sample=False, max_new_tokens=max_new_tokens,
                                 pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
            out += tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    finally:
        tokenizer.padding_side = side
    return out


def score_report(problems: Sequence[Problem], replies: Sequence[str]) -> dict:
    """Exact match overall and per difficulty, with n."""
    correct = [check_answer(p, r) for p, r in zip(problems, replies)]
    by_level: dict[str, dict] = {}
    for level in sorted({p.difficulty for p in problems}):
        hits = [c for p, c in zip(problems, correct) if p.difficulty == level]
        by_level[str(level)] = {"n": len(hits), "exact_match": round(sum(hits) / len(hits), 4)}
    return {"n": len(problems), "exact_match": round(sum(correct) / max(1, len(problems)), 4),
            "by_difficulty": by_level, "correct": correct}
