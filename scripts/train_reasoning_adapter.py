"""Train (or resume) the arithmetic LoRA adapter on SmolLM2-135M-Instruct, evaluate base and adapter, write the card.

    .venv/bin/python scripts/train_reasoning_adapter.py            # defaults = the committed recipe
    .venv/bin/python scripts/train_reasoning_adapter.py --max-steps 600   # train longer from the checkpoint

Writes adapter_model.safetensors (fp16), adapter_config.json, eval.json and MODEL_CARD.md to --output-dir.
Re-running after a kill resumes from the last checkpoint in --run-dir; finished evaluations are cached there.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import platform
import shlex
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

from training.adapter import (TrainConfig, greedy_completions, print_flush,  # noqa: E402
                                                   score_report, train)
from backend.models import load  # noqa: E402
from backend.tasks.arithmetic import FAMILIES, generate_problems  # noqa: E402
from backend.tasks.problem_sets import handwritten_problems  # noqa: E402
from backend.tasks.worked_arithmetic import SOLUTION_STYLES  # noqa: E402
from peft import get_peft_model_state_dict  # noqa: E402

MODEL_ID = "smollm2-135m-instruct"


def parse_config(argv: list[str] | None) -> tuple[TrainConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in dataclasses.fields(TrainConfig):
        flag, default = "--" + field.name.replace("_", "-"), field.default
        if field.name == "target_modules":
            parser.add_argument(flag, nargs="+", default=list(default))
        elif field.name == "family":
            parser.add_argument(flag, choices=FAMILIES, default=default)
        elif field.name == "solution_style":
            parser.add_argument(flag, choices=SOLUTION_STYLES, default=default)
        elif field.name == "difficulty":
            parser.add_argument(flag, type=int, choices=(1, 2, 3), default=None)
        else:
            parser.add_argument(flag, type=type(default), default=default)
    parser.add_argument("--eval-base-only", action="store_true",
                        help="only evaluate the base model (fills the run_dir cache; can run beside training)")
    parser.add_argument("--notes-file", type=Path, default=None,
                        help="markdown for the card's Notes section (kept in eval.json for later re-runs)")
    parser.add_argument("--note", default="", help="what this attempt changes (recorded in the card)")
    parser.add_argument("--previous-card", type=Path, default=None,
                        help="the directory whose eval.json holds earlier attempts (default: --output-dir)")
    parser.add_argument("--card-only", action="store_true",
                        help="only re-write MODEL_CARD.md from --output-dir's eval.json (with --notes-file: new notes)")
    parser.add_argument("--record-attempts-from", type=Path, nargs="+", default=[],
                        help="with --card-only: add the latest attempt of these output dirs (later attempts that were "
                             "not shipped) to the card's attempts table")
    parser.add_argument("--train-only", action="store_true",
                        help="train (or resume) and write the adapter, without evaluating (re-run without it to evaluate)")
    args = parser.parse_args(argv)
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)}
    values["target_modules"] = tuple(values["target_modules"])
    return TrainConfig(**values), args


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def save_adapter(peft_model, out: Path) -> int:
    """adapter_model.safetensors in fp16 (half the size, same greedy answers) + adapter_config.json."""
    out.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().to(torch.float16).contiguous() for k, v in get_peft_model_state_dict(
        peft_model, save_embedding_layers=False).items()}
    save_file(weights, out / "adapter_model.safetensors", metadata={"format": "pt"})
    (out / "adapter_model.safetensors").chmod(0o644)
    config = copy.copy(peft_model.peft_config["default"])
    config.base_model_name_or_path = MODEL_ID  # the registry id, not this machine's cache path
    config.target_modules = sorted(config.target_modules)  # a set in peft: fix the order for a stable file
    config.save_pretrained(out)
    return (out / "adapter_model.safetensors").stat().st_size


def cached_eval(path: Path, fingerprint: str, run) -> dict:
    if path.exists() and json.loads(path.read_text()).get("fingerprint") == fingerprint:
        return json.loads(path.read_text())
    start = time.perf_counter()
    result = {**run(), "fingerprint": fingerprint}
    result["eval_seconds"] = round(time.perf_counter() - start, 1)
    write_json(path, result)
    return result


EVAL_SETS = ("classic held-out", "broad held-out", "hand-written")


def eval_sets(cfg: TrainConfig) -> dict[str, list]:
    """The generator's two held-out splits (disjoint from training by the id hash) and the hand-written set
    (wording not from the generator, never trained on)."""
    return {"classic held-out": generate_problems(cfg.eval_n, "heldout", seed=cfg.eval_seed),
            "broad held-out": generate_problems(cfg.eval_n, "heldout", seed=cfg.eval_seed, family="broad"),
            "hand-written": list(handwritten_problems())}


def slug(name: str) -> str:
    return name.replace(" ", "_").replace("-", "")


def evaluate(name: str, model, tokenizer, problems, cfg: TrainConfig) -> dict:
    print_flush(f"evaluating {name} on {len(problems)} problems (greedy, {cfg.max_new_tokens} new tokens)")
    replies = greedy_completions(model, tokenizer, problems, cfg.max_new_tokens, cfg.eval_batch_size)
    report = score_report(problems, replies)
    report["examples"] = [{"question": p.question, "answer": p.answer, "reply": r} for p, r in
                          zip(problems[:3], replies[:3])]
    print_flush(f"{name}: exact match {report['exact_match']:.3f} {report['by_difficulty']}")
    return report


@contextmanager
def merged(peft_model):
    """The LoRA folded into the weights while evaluating: the same function, about twice as fast to generate."""
    peft_model.merge_adapter()
    try:
        yield peft_model
    finally:
        peft_model.unmerge_adapter()


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def attempt_row(i: int, a: dict, shipped: bool) -> str:
    em = a["reasoning_exact_match"]
    em = {"classic held-out": em} if isinstance(em, float) else em  # attempt 1 was scored on the classic split only
    cells = " | ".join(pct(em[name]) if name in em else "-" for name in EVAL_SETS)
    c = a["config"]
    recipe = (f"r={c['lora_r']}, lr={c['lr']}, batch={c['batch_size']}x{c['grad_accum']}, steps={a['steps']}, "
              f"n_train={c['n_train']}, family={c.get('family', 'classic')}"
              + (f", solutions={c['solution_style']}" if c.get("solution_style", "plain") != "plain" else "")
              + (", warm start" if c.get("init_adapter") else ""))
    return f"| {i}{' (this adapter)' if shipped else ''} | {a['note'] or '-'} | {recipe} | {a['train_minutes']:.0f} min | {cells} |"


def model_card(cfg: TrainConfig, record: dict, adapter_dir: Path) -> str:
    evals = record["evaluations"]
    mix = ", ".join(f"{n} of difficulty {d}" for d, n in sorted(record["train_difficulty_counts"].items()))
    summary = "\n".join(f"| {name} | {evals[name]['n']} | {pct(evals[name]['base']['exact_match'])} | "
                        f"**{pct(evals[name]['reasoning']['exact_match'])}** |" for name in EVAL_SETS)
    levels = "\n".join(
        f"| {name} | {d} | {evals[name]['base']['by_difficulty'][d]['n']} | "
        f"{pct(evals[name]['base']['by_difficulty'][d]['exact_match'])} | "
        f"{pct(evals[name]['reasoning']['by_difficulty'][d]['exact_match'])} |"
        for name in EVAL_SETS for d in sorted(evals[name]["base"]["by_difficulty"]))
    attempts = "\n".join(attempt_row(i, a, (a["run_dir"], a["steps"]) == (cfg.run_dir, record["steps"]))
                         for i, a in enumerate(record["attempts"], 1))
    hp = "\n".join(f"| `{k}` | `{v}` |" for k, v in cfg.to_dict().items() if k not in ("run_dir", "output_dir"))
    example = evals["hand-written"]["reasoning"]["examples"][0]
    notes = f"\n## Notes\n\n{record['notes'].strip()}\n" if record.get("notes") else ""
    return f"""# {adapter_dir.name}: an arithmetic reasoning adapter

A LoRA adapter for **SmolLM2-135M-Instruct** (the dashboard's embedded `{MODEL_ID}`, Q4_1 weights dequantised to
fp32), trained by this project on its own arithmetic word problems (`backend/tasks/arithmetic.py`,
`backend/tasks/word_problems.py`) to answer with step-by-step solutions ending in `Answer: <number>`.

## Result: greedy exact match

Greedy decoding, at most {cfg.max_new_tokens} new tokens, the same chat prompt for both models, scored with
`check_answer`:
- **classic held-out**: `generate_problems({cfg.eval_n}, "heldout", seed={cfg.eval_seed})`, the 12 classic templates;
- **broad held-out**: `generate_problems({cfg.eval_n}, "heldout", seed={cfg.eval_seed}, family="broad")`, the composed
  scenarios with varied wording (held-out ids are disjoint from training ids by construction);
- **hand-written**: `data/arith/handwritten.jsonl`, {evals['hand-written']['n']} problems written by hand, in wording that does
  not come from the generator, never trained on.

| set | n | base (SmolLM2-135M-Instruct) | reasoning (base + this adapter) |
|---|---|---|---|
{summary}

| set | steps | n | base | reasoning |
|---|---|---|---|---|
{levels}

Example (hand-written): *{example['question']}* (answer {example['answer']})

```
{example['reply']}
```

## Training recipe

- Data: {cfg.n_train} training-split problems, `generate_problems({cfg.n_train}, "train", seed={cfg.seed},
  difficulty={cfg.difficulty}, family="{cfg.family}")`: {mix}. Each is a chat (default SmolLM2 system prompt,
  user = `format_prompt(problem)`, assistant = `problem.solution`); loss only on the assistant tokens, its
  `<|im_end|>` included.
- {"Warm start: the LoRA starts from `" + cfg.init_adapter + "`, the adapter of the previous attempt." if cfg.init_adapter else "The LoRA starts from peft's initialisation (B = 0)."}
- LoRA (peft) r={cfg.lora_r}, alpha={cfg.lora_alpha}, dropout={cfg.lora_dropout} on
  {', '.join(cfg.target_modules)} of all 30 layers: {record['trainable_parameters']:,} trainable parameters
  (stored in fp16: {record['adapter_bytes'] / 1e6:.1f} MB).
- AdamW lr={cfg.lr}, weight decay={cfg.weight_decay}, linear warmup {cfg.warmup_steps} steps then linear decay to 0,
  batch {cfg.batch_size} x {cfg.grad_accum} accumulation, {record['steps']} steps
  ({record['epochs']:.2f} epochs), gradient clipping 1.0, fp32, right padding.
- Training loss: {record['loss_first10']:.3f} (mean of the first 10 steps) -> {record['loss_last10']:.3f} (last 10).
- Hardware and time: {record['hardware']}; training took {record['train_minutes']:.1f} min wall time
  ({record['resumes']} resume(s) from checkpoint); evaluation {record['eval_minutes']:.1f} min.

All hyperparameters (`TrainConfig`):

| field | value |
|---|---|
{hp}

## Attempts

Reasoning-model exact match per set ("-": not measured for that attempt).

| # | change | recipe | training time | {' | '.join(EVAL_SETS)} |
|---|---|---|---|{'---|' * len(EVAL_SETS)}
{attempts}

## Use and reproduce

```python
from peft import PeftModel
from backend.models import load
model = PeftModel.from_pretrained(load("{MODEL_ID}").model, "{_shown(adapter_dir)}")
```

Reproduce (re-running the same command after a kill resumes from the last checkpoint; a finished run only
re-writes this card and eval.json, from the cached evaluations):

```
{record['command']}
```
{notes}"""


def merge_attempts(attempts: list[dict], more: list[dict]) -> list[dict]:
    """attempts + more, one entry per (run_dir, steps), the later one kept, in order of first appearance."""
    merged: dict[tuple[str, int], dict] = {}
    for a in [*attempts, *more]:
        merged[(a["run_dir"], a["steps"])] = a
    return list(merged.values())


def _shown(path: Path) -> str:
    """The adapter directory as the card shows it: relative to the repository when inside it."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def rewrite_card(out: Path, notes_file: Path | None, attempts_from: list[Path] = ()) -> None:
    """The card again from a finished run's eval.json, e.g. after its notes were revised or later attempts
    (not shipped) were added to its table; no model is loaded."""
    record = json.loads((out / "eval.json").read_text())
    if notes_file is not None:
        record["notes"] = notes_file.read_text()
    later = [json.loads((d / "eval.json").read_text())["attempts"][-1] for d in attempts_from]
    record["attempts"] = merge_attempts(record["attempts"], later)
    if notes_file is not None or later:
        write_json(out / "eval.json", record)
    values = {**record["config"], "target_modules": tuple(record["config"]["target_modules"])}
    (out / "MODEL_CARD.md").write_text(model_card(TrainConfig(**values), record, out))


def main(argv: list[str] | None = None) -> None:
    cfg, args = parse_config(argv)
    if args.card_only:
        rewrite_card(Path(cfg.output_dir), args.notes_file, args.record_attempts_from)
        return
    handle = load(MODEL_ID)
    sets = eval_sets(cfg)
    tag = f"n{cfg.eval_n}_seed{cfg.eval_seed}_tok{cfg.max_new_tokens}"
    run_dir, out = Path(cfg.run_dir), Path(cfg.output_dir)

    def base_cache(name: str) -> Path:
        return run_dir / f"eval_base_{slug(name)}_{tag}.json"

    if args.eval_base_only:
        for name, problems in sets.items():
            cached_eval(base_cache(name), handle.fingerprint,
                        lambda: evaluate(f"base / {name}", handle.model, handle.tokenizer, problems, cfg))
        return
    print_flush(f"config {json.dumps(cfg.to_dict())}")
    peft_model, state = train(handle.model, handle.tokenizer, cfg)
    adapter_bytes = save_adapter(peft_model, out)
    print_flush(f"adapter written to {out} ({adapter_bytes / 1e6:.1f} MB)")
    if args.train_only:
        return

    evaluations, correct, eval_seconds = {}, {}, 0.0
    for name, problems in sets.items():
        with merged(peft_model):
            tuned = cached_eval(run_dir / f"eval_adapter_step{state['step']}_{slug(name)}_{tag}.json", handle.fingerprint,
                                lambda: evaluate(f"reasoning / {name}", peft_model, handle.tokenizer, problems, cfg))
        with peft_model.disable_adapter():  # the base model: same weights, LoRA bypassed
            base = cached_eval(base_cache(name), handle.fingerprint,
                               lambda: evaluate(f"base / {name}", peft_model, handle.tokenizer, problems, cfg))
        evaluations[name] = {"n": len(problems), "base": {k: v for k, v in base.items() if k != "correct"},
                             "reasoning": {k: v for k, v in tuned.items() if k != "correct"}}
        correct[name] = {"ids": [p.id for p in problems], "base": base["correct"], "reasoning": tuned["correct"]}
        eval_seconds += base["eval_seconds"] + tuned["eval_seconds"]

    train_problems = generate_problems(cfg.n_train, "train", seed=cfg.seed, difficulty=cfg.difficulty, family=cfg.family,
                                       style=cfg.solution_style)
    losses = state["losses"]
    given = list(argv if argv is not None else sys.argv[1:])
    if "--notes-file" in given:  # card text, not part of the recipe
        del given[given.index("--notes-file"): given.index("--notes-file") + 2]
    command = "cd /work/main && .venv/bin/python scripts/train_reasoning_adapter.py " + shlex.join(given)
    attempt = {"note": args.note, "config": cfg.to_dict(), "steps": state["step"],
               "train_minutes": round(state["train_seconds"] / 60, 1),
               "reasoning_exact_match": {name: e["reasoning"]["exact_match"] for name, e in evaluations.items()},
               "base_exact_match": {name: e["base"]["exact_match"] for name, e in evaluations.items()},
               "run_dir": cfg.run_dir}
    previous_path = Path(args.previous_card or out) / "eval.json"
    previous = json.loads(previous_path.read_text()) if previous_path.exists() else {}
    notes = args.notes_file.read_text() if args.notes_file else previous.get("notes", "")
    attempts = merge_attempts(previous.get("attempts", []), [attempt])
    record = {
        "model": MODEL_ID, "base_fingerprint": handle.fingerprint, "config": cfg.to_dict(), "steps": state["step"],
        "epochs": state["step"] * cfg.batch_size * cfg.grad_accum / cfg.n_train, "resumes": state["resumes"],
        "trainable_parameters": sum(p.numel() for p in peft_model.parameters() if p.requires_grad),
        "adapter_bytes": adapter_bytes, "train_minutes": state["train_seconds"] / 60, "eval_minutes": eval_seconds / 60,
        "train_difficulty_counts": {str(k): v for k, v in sorted(Counter(p.difficulty for p in train_problems).items())},
        "loss_first10": sum(losses[:10]) / len(losses[:10]), "loss_last10": sum(losses[-10:]) / len(losses[-10:]),
        "loss_every_10_steps": losses[::10], "hardware": f"{os.cpu_count()} CPU cores ({platform.machine()}), no GPU, torch {torch.__version__}",
        "evaluations": evaluations, "correct": correct, "attempts": attempts, "command": command, "notes": notes,
    }
    write_json(out / "eval.json", record)
    (out / "MODEL_CARD.md").write_text(model_card(cfg, record, out))
    print_flush("; ".join(f"{name}: base {e['base']['exact_match']:.3f} -> reasoning {e['reasoning']['exact_match']:.3f}"
                          for name, e in evaluations.items()) + f"; card in {out / 'MODEL_CARD.md'}")


if __name__ == "__main__":
    main()
