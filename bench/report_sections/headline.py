"""The README's headline figures: a few lines read from the same JSONs, each linking to its RESULTS.md section."""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from bench.report import Ctx, pct, sec, slug

Line = Callable[[Ctx], str | None]


def _link(text: str, section: str) -> str:
    return f"- {text} ([details](docs/RESULTS.md#{slug(section)}))"


def _from(name: str) -> Callable[[Callable[[dict], str]], Line]:
    """A line written from one result JSON alone: no line when that JSON is missing or empty."""
    def line_of(write: Callable[[dict], str]) -> Line:
        @wraps(write)
        def line(ctx: Ctx) -> str | None:
            r = ctx.load(name)
            return write(r) if r else None
        return line
    return line_of


@_from("app_rss.json")
def memory(r: dict) -> str:
    home = r["pages"][0]["rss_mb"]
    return _link(f"**Memory**: the server holds {r['peak_rss_mb']:.0f} MB (RSS) once every page has been opened "
                 f"once ({home:.0f} MB with Home alone; a page that opens on its own model loads it).",
                 "App memory (RSS)")


@_from("first_open.json")
def first_open(r: dict) -> str:
    p = r["pages"].values()
    return _link(f"**First open**: every page's first view in ≤ {max(x['first_open_script_idle_s'] for x in p)} s to "
                 f"script idle on a fresh install; a cached reopen in ≤ "
                 f"{max(x['cached_reopen_script_idle_s'] for x in p)} s ({r['cpus']} cores, load average "
                 f"{r['load_average_start']:.1f} at the start, {r['load_average_end']:.1f} at the end).",
                 "First open of every page")


@_from("load.json")
def lab(r: dict) -> str:
    lat, plan = r["stored_view_latency_s"], r["plan"]
    computing = sum(s["role"] != "browse" for s in r["sessions"])
    who = (f"{plan['sessions']} browser sessions for {plan['seconds'] / 60:.0f} min, {computing} of them computing "
           "without pause, beside CLI runs on the same store")
    how = (f"stored views p95 {sec(lat['p95'])} to script idle (n = {lat['n']}), {len(r['errors'])} errors, RSS "
           f"{r['rss_growth_after_warmup']:+.1%} after warm-up")
    return _link(f"**A lab on one server**: {who}: {how}.", "A lab on one server (load)")


@_from("decoding.json")
def decoding(r: dict) -> str:
    rs, mh = r["resampling"], r["asmc_vs_mh"]
    return _link(f"**Decoding**: resampling by reordering KV-cache rows is "
                 f"{rs['speedup_reorder_vs_recompute']['wall_s']:.1f}× faster than recomputing prefixes; ASMC's p95 "
                 f"latency is {mh['p95_ratio_mh_over_asmc']:.1f}× lower than MH power sampling's at an equal token "
                 "budget.", "Decoding speed")


@_from("speed_vs_generate_smollm2-135m-instruct.json")
def generation_speed(r: dict) -> str:
    threads = max(r["by_threads"], key=int)
    g = r["by_threads"][threads]["greedy_batch1"]["contestants"]
    chunks = g["kernel checked chunks"]
    peer = r["by_threads"][threads]["greedy_batch1"].get("best_peer")
    how = (f", {chunks['speed_vs_best_peer']:.2f}× its best speculative peer ({peer.removeprefix('generate ')}), "
           "at fp32 with identical tokens" if peer else " at fp32 with identical tokens (guesses checked in chunks)")
    packed = r["by_threads"][threads]["sampling_x8"]["contestants"].get("kernel packed")
    samples = f"; 8 samples {packed['speed_vs_generate']:.2f}× on the opt-in packed weights" if packed else ""
    return _link(f"**Generation** (SmolLM2, {threads} threads): greedy {chunks['speed_vs_generate']:.2f}× "
                 f"`transformers.generate`{how}{samples}.", "Generation speed against transformers.generate")


@_from("decoding_accuracy_everyday.json")
def accuracy(r: dict) -> str:
    by = {s["label"]: s for s in r["summary"]}
    asmc = max((s for s in r["summary"] if s["strategy"] == "asmc"), key=lambda s: s["budget"])  # largest budget
    p = {c["against"]: c["mcnemar_p"] for c in r["comparisons"] if c["label"] == asmc["label"]}
    return _link(f"**p^alpha sampling** (everyday adapter, {by['Greedy']['problems']} problems): {asmc['label']} "
                 f"{pct(asmc['accuracy'])} against temperature-1 sampling {pct(by['Sampling']['accuracy'])} "
                 f"(McNemar p = {p['Sampling']:.2g}) and greedy {pct(by['Greedy']['accuracy'])} "
                 f"(p = {p['Greedy']:.2g}).",
                 "Decoding accuracy, everyday adapter (the Decoding page's model)")


@_from("disagreement_decisive.json")
def disagreement(r: dict) -> str:
    acc = r["accuracy"]
    g = next(p for p in acc["guided"] if p["budget"] == 0.2)  # the page's default budget
    rnd = next(p for p in acc["random"] if p["budget"] == g["budget"])
    return _link(f"**Disagreement-guided intervention**: handing single tokens to the reasoning model at a realised "
                 f"{pct(g['realised_rate'])} of steps lifts the base from {pct(acc['base'], 0)} to "
                 f"{pct(g['accuracy'], 0)} (reasoning alone {pct(acc['reasoning'], 0)}; as many random takeovers "
                 f"{pct(rnd['accuracy'], 0)}).", "Disagreement: decisive sweep, first reasoner adapter (the page's pair)")


@_from("data/models/smollm2-135m-arith-lora-everyday/eval.json")
def adapters(r: dict) -> str:
    ev = r["evaluations"]
    sets = ", ".join(f"{name} {pct(ev[name]['reasoning']['exact_match'], 0)}" for name in ev)
    return _link(f"**Arithmetic adapter** (everyday, greedy): {sets}; the base model "
                 f"{pct(min(e['base']['exact_match'] for e in ev.values()), 0)}–"
                 f"{pct(max(e['base']['exact_match'] for e in ev.values()), 0)}.", "Arithmetic reasoning adapters")


def mt(ctx: Ctx) -> str | None:
    gap: dict[str, float] = {}
    for path in ctx.glob("mt_gemma*.json"):
        r = ctx.load(path.name)
        if r["sentences"] < 24:  # the confirming runs, not the 8-sentence design search
            continue
        for pair, p in r["pairs"].items():
            gap.update({pair: s["gap_recovered"] for s in p.get("sweep", []) if _is_preset(s)})
    if not gap:
        return None
    gaps = ", ".join(f"{pair.replace('-', '→').upper()} {pct(g, 0)}" for pair, g in sorted(gap.items()))
    return _link(f"**MT heads** (Gemma-3-270M): steering 2 of its 72 attention heads (the page's preset), with no "
                 f"instruction, recovers this share of the few-shot chrF++ gap: {gaps}.", "MT heads on Gemma-3-270M")


def _is_preset(s: dict) -> bool:
    """The MT page's steering preset for Gemma (backend/mt/presets.py): add, 2.8% of heads, x2, every step,
    first-half layers."""
    return (s["steer_mode"], s["percent"], s["strength"], s["steer_positions"], s["steer_layers"]) == \
        ("add", 2.8, 2.0, "every-step", "first-half")


def watermark(ctx: Ctx) -> str | None:
    r, length = ctx.load("watermark.json"), ctx.load("watermark_length.json")
    if not r:
        return None
    big = max(r["latency"], key=lambda x: x["users"])
    text = (f"**Watermark**: attributing a text among {big['users']:,} registered users takes "
            f"{big['hierarchical_ms']:.0f} ms by hierarchical retrieval, {big['speedup']:.0f}× faster than checking "
            "every key")
    if length:
        at = next((x for x in length["replayed"] if x["user_accuracy"] >= 0.9), None)
        if at:
            text += (f"; the right user is the best guess {pct(at['user_accuracy'], 0)} of the time at "
                     f"{at['sentences']} sentences")
    return _link(text + ".", "Watermark: retrieval, detection, attribution")


@_from("fp8.json")
def fp8(r: dict) -> str:
    w = r["whole_model_bounds"]
    return _link(f"**FP8 bounds**: every attention-logit bound of the {w['layers']}-layer model from its weights in "
                 f"{sec(w['seconds_power'])}; on sample texts the observed logits "
                 f"{'exceeded them' if r['embedded_bounds']['bound_ever_exceeded'] else 'never exceeded them'}.",
                 "FP8 bounds")


LINES: list[Line] = [memory, first_open, lab, generation_speed, decoding, accuracy, disagreement, adapters, mt, watermark, fp8]
