"""Inspect: input attribution against inseq."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table

INTRO = ("`inspect attribute` (captum, f = the target's probability) against inseq's attribution of the same targets (in "
         "a scratch venv; bench/inspect_inseq_side.py): gradient × input against `input_x_gradient`, integrated "
         "gradients ({steps} steps, unk-token baseline on both sides) against `integrated_gradients`, token ablation "
         "against `occlusion` (inseq reports |f(input) − f(occluded)|, so ours is compared in absolute value). Per "
         "prompt: the next token, or a 4-token greedy continuation (each token against the prompt and the tokens "
         "before it). Largest absolute difference over every (target, source) pair, beside the largest score:")
HEADER = ["model", "case", "ours / inseq", "largest difference", "largest score", "same tokens",
          "IG delta (ours, largest of the case)", "seconds ours / inseq"]


def _sci(x: float | None) -> str | None:
    return None if x is None else f"{x:.1e}"


def _row(model: str, x: dict) -> list:
    prompt = x["prompt"] if len(x["prompt"]) <= 30 else x["prompt"][:28] + "…"
    return [model, f"{prompt!r} → {len(x['targets'])} token(s)", f"{x['method']} / {x['inseq_method']}",
            _sci(x["max_abs_diff"]), _sci(x["max_abs_score"]), "yes" if x["same_tokens"] else "no",
            _sci(x["ig_delta"]), f"{sec(x['our_seconds'], 1)} / {sec(x['inseq_seconds'], 1)}"]


def inspect_inseq(ctx: Ctx) -> Body:
    r = ctx.load("inspect_inseq.json")
    compared = r["inseq"]
    rows = [[model, f"inseq failed: {m['error']}"] + [None] * 6 if "error" in m else _row(model, x)
            for model, m in compared.items() for x in m.get("rows", [None])]
    lines = [INTRO.format(steps=r["steps"]), "", *table(HEADER, rows)]
    versions = next((m["versions"] for m in compared.values() if "versions" in m), None)
    if versions:
        lines += [f"inseq {versions['inseq']}, captum {versions['captum']}, torch {versions['torch']}, transformers "
                  f"{versions['transformers']} (load average {r['load_average']:.1f}; seconds are each side's own "
                  "run, one after the other in two processes: indicative, not a race).", ""]
    if any(x["max_abs_diff"] > 1e-3 for m in compared.values() for x in m.get("rows", [])):
        lines += ["Where integrated gradients and ablation differ (Gemma 3) the baselines differ: Gemma's prompt starts "
                  "with `<bos>`, which our baseline keeps (special tokens stay) and inseq's replaces by `<unk>` like "
                  "every token but eos; gradient × input, which has no baseline, agrees there too.", ""]
    return Body(lines, [r["command"]])


SECTIONS = [Section("Input attribution against inseq", ("inspect_inseq.json",), inspect_inseq)]
