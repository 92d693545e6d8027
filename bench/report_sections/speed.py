"""The kernel against transformers.generate (bench/kernel.py --against generate)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, clean_command, num, pct, table, times

TARGETS = {"greedy": 1.5, "sampling": 1.2, "reduced": 2.0, "agreement": 0.95, "int8_bound_share": 0.6}
SPECULATIVE = "kernel speculative (int8 draft)"  # the sampling row that also records its acceptance rate
PACKED = "kernel packed"  # the fp32 weights packed for the rows (opt-in): fp32's distribution, sums in another order
SPREAD = 1.15  # reps further apart than this are reported as a range, not one figure


def _speed(c: dict) -> str:
    """tokens/s: the median, or the range of the reps where they moved by more than SPREAD."""
    reps = c.get("tokens_per_s_reps") or [c["tokens_per_s"]]
    if max(reps) > SPREAD * min(reps):
        return f"{min(reps):.1f}–{max(reps):.1f}"
    return num(c["tokens_per_s"], 1)


def _note(name: str, c: dict) -> str:
    """Beside the speed: the checked chunks' acceptance, a reduced copy's first divergences."""
    if c.get("acceptance") is not None:
        sources = ", ".join(f"{source} {pct(v['acceptance'], 0)} of {v['guessed']}"
                            for source, v in c["by_source"].items() if v["guessed"])
        return (f"{pct(c['acceptance'], 0)} of guesses kept ({sources}); {c['tokens_per_forward']:.2f} tokens per "
                "checking forward")
    diverged = [d for d in c.get("first_divergence", []) if d is not None]
    return f"first divergence at token {', '.join(map(str, diverged))}" if diverged else ""


def _greedy_rows(greedy: dict) -> list[list]:
    rows = []
    for name, c in greedy["contestants"].items():
        rows.append([name, _speed(c), times(c["speed_vs_generate"]), times(c.get("speed_vs_best_peer")),
                     pct(c.get("share_of_bandwidth_bound"), 0),
                     f"{c['prompts_identical_to_generate']}/{greedy['prompts']}", _note(name, c)])
    return rows


def _verdict(what: str, value: float, target: float) -> str:
    return f"{what} {value:.2f}× (target {target:g}×): " + (
        "met" if value >= target else f"missed by {100 * (1 - value / target):.0f}%")


def _verdicts(r: dict) -> list[str]:
    out = []
    for threads, t in r["by_threads"].items():
        g = t["greedy_batch1"]["contestants"]
        chunks, kernel = g["kernel checked chunks"], g["kernel"]["tokens_per_s"]
        same = chunks["prompts_identical_to_generate"] == t["greedy_batch1"]["prompts"]
        peer = t["greedy_batch1"].get("best_peer")
        out.append(_verdict(f"{threads} thread(s): greedy at fp32{'' if same else ' (NOT identical)'} against "
                            f"{'the best peer (' + peer + ')' if peer else 'generate'}",
                            chunks["speed_vs_best_peer" if peer else "speed_vs_generate"], TARGETS["greedy"]))
        sampled = t["sampling_x8"]["contestants"]
        out.append(_verdict(f"{threads} thread(s): sampling ×8", sampled["kernel"]["speed_vs_generate"],
                            TARGETS["sampling"]))
        if PACKED in sampled:
            out.append(_verdict(f"{threads} thread(s): sampling ×8 on the packed weights (same distribution)",
                                sampled[PACKED]["speed_vs_generate"], TARGETS["sampling"]))
        if SPECULATIVE in sampled:
            out.append(_verdict(f"{threads} thread(s): sampling ×8, speculative (same distribution)",
                                sampled[SPECULATIVE]["speed_vs_generate"], TARGETS["sampling"]))
        out.append(_verdict(f"{threads} thread(s): int8 against the fp32 kernel",
                            g["kernel int8"]["tokens_per_s"] / kernel, TARGETS["reduced"]))
        share = g["kernel int8"].get("share_of_bandwidth_bound")
        if share is not None:
            out.append(f"{threads} thread(s): int8 at {pct(share, 0)} of its bandwidth bound (target "
                       f"{pct(TARGETS['int8_bound_share'], 0)}): "
                       + ("met" if share >= TARGETS["int8_bound_share"] else "missed"))
    agreement = r["drift"]["int8"]["teacher_forced_top1_agreement"]
    out.append(f"int8 top-1 agreement {pct(agreement)} (target {pct(TARGETS['agreement'], 0)}): "
               + ("met" if agreement >= TARGETS["agreement"] else "missed"))
    return out


def _int8_trial(d: dict | None) -> str:
    """One sentence on the native int8 kernel trial (bench/int8_decode.py's end-to-end run), or none without it."""
    if d is None:
        return ""
    c = d["contestants"]
    native, op = c["kernel int8, native kernel"], c["kernel int8, torch _weight_int8pack_mm"]
    share, speedup = native["share_of_bandwidth_bound"], native["tokens_per_s"] / op["tokens_per_s"]
    verdict = "meets" if share >= TARGETS["int8_bound_share"] else "still misses"
    return (f"A native AVX-512 int8 kernel, tried for issue 57 and kept in bench/ only (not used by the app: \"The "
            f"int8 copy's matrix product\" says why), made the int8 step {times(speedup)} PyTorch's op end to end "
            f"({native['tokens_per_s']:.1f} against {op['tokens_per_s']:.1f} tokens/s, {d['threads']} threads); at "
            f"{pct(share, 0)} of its bandwidth bound it {verdict} the §4 target of "
            f"{pct(TARGETS['int8_bound_share'], 0)}. ")


def speed(ctx: Ctx) -> Body:
    lines, cmds = [], []
    for path in ctx.glob("speed_vs_generate_*.json"):
        r = ctx.load(path.name)
        load = (f" Load average {r['load_average_start'][0]:.1f} at the start, {r['load_average_end'][0]:.1f} at "
                "the end." if "load_average_start" in r else "")
        lines += [f"**{r['model']}** ({r['dtype']}, {r['machine']['cores']} cores): up to {r['tokens']} new tokens "
                  f"per prompt, median of {r['reps']} interleaved repetitions in one process (a range where they "
                  f"moved by more than {100 * (SPREAD - 1):.0f} %). Greedy stops at the model's stop ids; the fp32 "
                  f"rows must write `generate`'s tokens exactly.{load}", ""]
        for threads, t in r["by_threads"].items():
            g, s = t["greedy_batch1"], t["sampling_x8"]
            bound = ""
            if "bandwidth_bytes_per_s" in g:
                reads = g["weight_bytes_per_token"]
                bound = (f" Measured memory bandwidth {g['bandwidth_bytes_per_s'] / 1e9:.1f} GB/s; a step reads "
                         + ", ".join(f"{reads[k] / 1e6:.0f} MB at {k}" for k in reads)
                         + " of weights, so the bound is bandwidth / those bytes (fp32 rows against the fp32 bound).")
            lines += [f"{threads} torch thread(s), load average {t['load_average'][0]:.1f}: greedy, batch 1, "
                      f"{g['prompts']} prompts, {g['new_tokens']} tokens.{bound}", ""]
            lines += table(["contestant", "tokens/s", "vs generate", "vs best peer", "of bandwidth bound",
                            "prompts identical to generate", "acceptance / divergence"], _greedy_rows(g))
            lines += [f"Sampling, {s['rows']} sequences × {s['new_tokens_per_row']} tokens (temperature 1, no "
                      "top-k/top-p):", ""]
            lines += table(["contestant", "tokens/s", "vs generate", "draft tokens kept"],
                           [[n, _speed(c), times(c["speed_vs_generate"]),
                             pct(c["acceptance_rate"], 1) if "acceptance_rate" in c else ""]
                            for n, c in s["contestants"].items()])
            kernel = g["contestants"]["kernel"]["tokens_per_s"]
            for precision in ("int8", "bf16"):
                c = g["contestants"].get(f"kernel {precision}")
                if c:
                    lines.append(f"- {precision} copy vs the fp32 kernel, greedy batch 1: "
                                 f"{times(c['tokens_per_s'] / kernel)} (target ≥ {TARGETS['reduced']:g}×)")
            lines.append("")
        d = r["drift"]
        lines += [f"Drift from fp32 over {d['prompts']} prompts, {d['new_tokens']} new tokens each "
                  f"({d['torch_threads']} threads): generate's greedy continuation teacher-forced through the copy "
                  f"(target ≥ {pct(TARGETS['agreement'], 0)} top-1 agreement), and the copy's own greedy run. "
                  f"Checked chunks wrote generate's tokens on {d['checked_chunks_identical_prompts']}/{d['prompts']} "
                  "prompts.", ""]
        lines += table(["copy", "top-1 agreement", "largest logit difference", "prompts written identically",
                        "median identical prefix (tokens)"],
                       [[p, pct(d[p]["teacher_forced_top1_agreement"], 1), num(d[p]["max_abs_logit_diff"], 2),
                         f"{d[p]['prompts_fully_identical']}/{d['prompts']}", num(d[p]["median_identical_prefix_tokens"], 0)]
                        for p in ("int8", "bf16")])
        lines += ["", "Targets (issues 47, 57): greedy batch 1 ≥ 1.5× the best of transformers' own peers (prompt "
                  "lookup, assisted generation) at fp32 with identical tokens; sampling ×8 ≥ 1.2×; the "
                  "reduced-precision path ≥ 2× fp32 with ≥ 95 % greedy token agreement, and int8 at ≥ 60 % of its "
                  "bandwidth bound. Against them:", ""]
        lines += [f"- {line}" for line in _verdicts(r)] + [""]
        cmds.append(clean_command(r["command"], ctx.root))
    lines += ["What was tried, beside the rows above: transformers' static cache (its row: no faster on CPU); "
              "`torch.compile` of the forward (compiling SmolLM2's had not finished after 10 minutes on this 2-core "
              "machine, so it cannot pay for a page's run here); MKL's packed weight layout: at 1 row it is kept for the "
              "reduced copies' fp32 head only (no faster for the fp32 body, and its numbers differ in the last bits, "
              "which greedy at fp32 must not), and at 8 rows it is the opt-in `packed` weights of the sampling table "
              "(a plain product over a few rows repacks the whole weight on every call: the packed one was about 2× "
              "faster per SmolLM2 matrix at 8 rows); dynamic int8 with rounded activations "
              "(fast, but the greedy text diverged within a few tokens; fbgemm's per-channel dynamic int8, tried again "
              "for issue 57 as a faster int8 matrix product, kept the teacher-forced top-1 below 85 % even with "
              "`down_proj` left weight-only, against about 97 % for the weight-only copy, so neither the int8 path "
              "nor the draft takes it). At 8 sampled rows the step is MKL's small-M "
              "fp32 matrix product, which no loop change reaches; the plain kernel's saving there is the single "
              "prefill broadcast to the rows, the packed weights' the product itself. Speculative sampling (its row; opt-in, `generate_text(speculative=True)`) keeps "
              "the distribution exactly (rejection sampling; tested by χ² against plain sampling) but not the seeded "
              "tokens. The int8 draft keeps most guesses (its row's last column), yet at 8 rows an int8 draft step "
              "costs well over half an fp32 step (about 0.6, measured under load) and checking k+1 positions more "
              "than one (about 1.4 at k = 3), so k draft steps and one check barely beat the k+1 plain steps they "
              "replace; a cheaper draft step (the int8 kernel nearer its bandwidth bound) is what it waits for. "
              + _int8_trial(ctx.load("int8_decode.json"))
              + "Drafts that skip layers of the int8 copy kept under 30 % of the guesses. Greedy in checked chunks "
              "spends about half its time in the int8 draft's steps and the rest in the checking forwards; its "
              "lookahead and the draft's confidence stop were tuned on counted runs (backend/models/speculative.py), "
              "repeated text guesses for free, and checking at one fixed width on the packed weights (padding the "
              "guesses, so the packing fits every check) was no faster in a trial, so the 1.5× target waits on a "
              "cheaper draft step too.", ""]
    return Body(lines, cmds)


SECTIONS = [Section("Generation speed against transformers.generate", ("speed_vs_generate_*.json",), speed,
                    also=("int8_decode.json",))]
