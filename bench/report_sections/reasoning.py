"""The arithmetic reasoning adapters: training attempts, where the misses are, how close the training wording is."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, clean_command, pct, table

TRAIN = "scripts/train_reasoning_adapter.py"
SETS = ("classic held-out", "broad held-out", "hand-written")


def _train_command(config: dict, ctx: Ctx) -> str:
    """The attempt's recorded config as flags; an output that went to data/models/ (a shipped adapter's place
    now) goes beside its run instead, so reproducing it overwrites nothing."""
    config = dict(config)
    if config.get("output_dir", "").startswith("data/models/"):
        config["output_dir"] = config["run_dir"] + "/out"
    flags = []
    for key, value in config.items():
        if value is None or key == "target_modules" or value == "":
            continue
        flags.append(f"--{key.replace('_', '-')} {value}")
    return clean_command(f"{PY} {TRAIN} " + " ".join(flags), ctx.root)


def adapters(ctx: Ctx) -> Body:
    shipped = {}
    for path in ctx.glob("data/models/*/eval.json"):
        r = ctx.load(str(path.relative_to(ctx.root)))
        shipped[r["config"]["run_dir"]] = (path.parent.name, r)
    latest = max(shipped.values(), key=lambda nr: len(nr[1].get("attempts", [])))[1]
    rows, cmds = [], []
    for i, a in enumerate(latest.get("attempts", []), 1):
        em = a["reasoning_exact_match"]
        em = em if isinstance(em, dict) else {"classic held-out": em}
        name, r = shipped.get(a["config"]["run_dir"], (None, None))
        rows.append([i, f"`{name}`" if name else "not shipped", a["note"], a["steps"], f"{a['train_minutes']:.0f} min",
                     *[pct(em.get(s)) for s in SETS]])
        cmd = clean_command(r["command"], ctx.root) if r else _train_command(a["config"], ctx)
        cmds.append(f"# attempt {i}\n{cmd}")
    base = latest["evaluations"]
    lines = [f"SmolLM2-135M-Instruct + a rank-{latest['config']['lora_r']} LoRA trained on the project's generated "
             f"problems; greedy exact match, {latest['config']['max_new_tokens']} new tokens (attempt 1: its own "
             f"evaluation). {latest['hardware']}. Base model: "
             + ", ".join(f"{s} {pct(base[s]['base']['exact_match'])}" for s in SETS if s in base)
             + ". Targets: ≥ 60% on the broad held-out split and ≥ 40% on the hand-written set.", ""]
    lines += table(["attempt", "shipped as", "recipe", "steps", "training", *SETS], rows)
    by_diff = []
    for name, r in sorted(shipped.values(), key=lambda nr: nr[0]):
        for s in SETS:
            d = r["evaluations"].get(s, {}).get("reasoning", {}).get("by_difficulty", {})
            by_diff.append([f"`{name}`", s, *[pct(d.get(k, {}).get("exact_match"), 0) for k in ("1", "2", "3")]])
    lines += ["By number of steps (shipped adapters):", ""]
    lines += table(["adapter", "set", "1 step", "2 steps", "3 steps"], by_diff)
    lines += ["Attempts build on each other: `--init-adapter` names the previous attempt's output (attempt 2 starts "
              "from a copy of attempt 1's in `data/cache/adapter_runs/arith-lora-v1`); a shipped one is then copied "
              "into `data/models/`. Each run is resumable. Per-attempt notes: `data/models/*/MODEL_CARD.md`.", ""]
    return Body(lines, cmds)


def errors(ctx: Ctx) -> Body:
    rows, cmds = [], []
    for path in ctx.glob("reasoning_errors*.json"):
        r = ctx.load(path.name)
        for name, part in r["sets"].items():
            if not part["n"]:
                continue
            a = part["all"]
            rows.append([f"`{r['model_id']}`", name, part["n"], a["right"],
                         f"{a['arithmetic slip']} ({part['slips_in_right_plans']})", a["too few steps"],
                         a["wrong plan"], a["no answer"]])
        cmds.append(clean_command(r["command"], ctx.root))
    lines = ["Each wrong greedy answer classified: an arithmetic slip (a written equation is false; in brackets, "
             "those in a plan that reaches the answer once computed correctly), too few steps, a wrong plan.", ""]
    return Body(lines + table(["model", "set", "n", "right", "arithmetic slip (in a right plan)", "too few steps",
                               "wrong plan", "no answer"], rows), cmds)


def overlap(ctx: Ctx) -> Body:
    r = ctx.load("handwritten_overlap.json")
    lines = [f"Share of the {r['handwritten']} hand-written questions' word {r['gram']}-grams (digits left out) that "
             f"{r['train_problems']} training problems of each family also contain.", ""]
    lines += table(["family", "mean share", "questions sharing more than half"],
                   [[f, pct(v["mean_share"]), len(v["above_half"])] for f, v in r["families"].items()])
    return Body(lines, [clean_command(r["command"], ctx.root)])


SECTIONS = [
    Section("Arithmetic reasoning adapters", ("data/models/*/eval.json",), adapters),
    Section("Where the reasoning models miss", ("reasoning_errors*.json",), errors),
    Section("Hand-written set vs training wording", ("handwritten_overlap.json",), overlap),
]
