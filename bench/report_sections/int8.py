"""The int8 copy's matrix product (issue 57 §4): candidate kernels per Linear (bench/int8_matmul.py), and the native
kernel against PyTorch's op end to end (bench/int8_decode.py)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, clean_command, num, pct, table, times

CURRENT = "int8pack_mm (bf16 x, current)"
NATIVE = "native int8 (fp32 x, backend/models/int8_linear.cpp)"
# One SmolLM2-135M decode step: per layer q, o (576->576), k, v (576->192), gate, up (576->1536), down (1536->576)
STEP = {"q/o 576->576": 2, "k/v 576->192": 2, "gate/up 576->1536": 2, "down 1536->576": 1}
LAYERS = 30
HEAD = "head 576->49152"


def _step_us(results: list[dict], kernel: str, rows: int, threads: int) -> tuple[float, float] | None:
    """(µs of the 210 layer products of one step, µs of the head) for one kernel, or None if not measured."""
    at = {r["shape"]: r["us_per_call"] for r in results
          if r["kernel"] == kernel and r["rows"] == rows and r["threads"] == threads}
    if not all(s in at for s in [*STEP, HEAD]):
        return None
    return LAYERS * sum(n * at[s] for s, n in STEP.items()), at[HEAD]


def _kernel_rows(r: dict) -> tuple[list[list], list[str]]:
    results = r["results"]
    kernels = list(dict.fromkeys(x["kernel"] for x in results))
    configs = sorted({(x["threads"], x["rows"]) for x in results})
    rows = []
    for kernel in kernels:
        cells = []
        for threads, m in configs:
            current, ours = _step_us(results, CURRENT, m, threads), _step_us(results, kernel, m, threads)
            cells.append(None if ours is None else f"{ours[0] / 1e3:.1f} ms ({times(current[0] / ours[0])})")
        errors = [x["relative_error"] for x in results if x["kernel"] == kernel]
        rows.append([kernel, *cells, f"{max(errors):.0e}"])
    header = ["kernel", *(f"{m} row(s), {t} thread(s)" for t, m in configs), "largest error / largest output"]
    return rows, header


def _per_shape(r: dict, rows_m: int, threads: int) -> tuple[list[list], list[str]]:
    at = {(x["shape"], x["kernel"]): x for x in r["results"] if x["rows"] == rows_m and x["threads"] == threads}
    shapes = list(dict.fromkeys(x["shape"] for x in r["results"]))
    out = []
    for kernel in (CURRENT, NATIVE, "fp32 F.linear"):
        cells = [f"{at[s, kernel]['us_per_call']:.0f} µs, {at[s, kernel]['gb_per_s']:.1f} GB/s"
                 if (s, kernel) in at else None for s in shapes]
        out.append([kernel, *cells])
    return out, shapes


def _decode(d: dict) -> list[str]:
    c = d["contestants"]
    fp32 = c["kernel fp32"]["tokens_per_s"]
    rows = []
    for name, row in c.items():
        if "first_divergence" in row:
            diverged = [x for x in row["first_divergence"] if x is not None]
            same = f"{row['prompts_identical_to_fp32']}/{d['prompts']}" + (
                f" (first divergence at token {', '.join(map(str, diverged))})" if diverged else "")
        else:
            same = "– (sampled)"
        kept = row.get("draft_acceptance", row.get("acceptance_rate"))
        rows.append([name, num(row["tokens_per_s"], 1), times(row["tokens_per_s"] / fp32) if "sampling" not in name
                     else None, pct(row.get("share_of_bandwidth_bound"), 0), same, pct(kept, 0)])
    lines = [f"End to end ({d['model']}, {d['threads']} torch threads, load average {d['load_average_start']:.1f} at "
             f"the start, {d['load_average_end']:.1f} at the end; {d['prompts']} prompts × up to {d['tokens']} greedy "
             f"tokens, sampling 8 rows × {d['sample_tokens']} tokens; median of {d['reps']} interleaved reps; "
             f"measured bandwidth {d['bandwidth_bytes_per_s'] / 1e9:.1f} GB/s, an int8 step reads "
             f"{d['int8_weight_bytes_per_token'] / 1e6:.0f} MB, its fp32 head included):", ""]
    lines += table(["contestant", "tokens/s", "vs fp32 kernel (greedy)", "of int8 bandwidth bound",
                    "prompts identical to fp32", "draft guesses kept"], rows)
    return lines


def int8(ctx: Ctx) -> Body:
    r = ctx.load("int8_matmul.json")
    bandwidth = ", ".join(f"{b:.1f} GB/s at {t} thread(s)" for t, b in r["bandwidth_gb_per_s"].items())
    lines = [f"One Linear at a time, SmolLM2-135M's shapes, each kernel cycling through {r['footprint_mb']} MB of int8 "
             f"weight copies (more bytes for wider formats) so it reads memory as a decode step does; candidates "
             f"interleaved, median of {r['rounds']} rounds; torch {r['torch']}, load average "
             f"{r['load_average_start']:.1f} at the start, {r['load_average_end']:.1f} at the end (a shared 2-core "
             f"machine: compare within a column only); `torch.sum` streamed {bandwidth}. A cell is one decode "
             f"step's {LAYERS} × 7 layer products summed (the fp32 head aside), and its speed against the current op "
             "(`_weight_int8pack_mm`). The error column is against the dequantized fp32 product.", ""]
    rows, header = _kernel_rows(r)
    lines += table(header, rows)
    per_shape, shapes = _per_shape(r, 1, 1)
    lines += ["One row, one thread, per shape (µs per call, weight bytes read per second):", ""]
    lines += table(["kernel", *shapes], per_shape)
    compiled = ctx.load("int8_matmul_compiled.json")
    if compiled:
        c = {(x["kernel"], x["rows"]): x for x in compiled["results"]
             if x["threads"] == 1 and x["shape"] == "gate/up 576->1536"}
        best = min((x for (k, _), x in c.items() if k.startswith("compiled")), key=lambda x: x["us_per_call"])
        lines += [f"`torch.compile` of one dequantize-then-multiply function (`F.linear(x, w.to(bf16)) * scale`, the "
                  f"pattern inductor matches), default and max-autotune, on gate/up at one thread: at best "
                  f"{best['us_per_call']:.0f} µs per call against {c[CURRENT, best['rows']]['us_per_call']:.0f} µs for "
                  f"the current op ({best['rows']} row(s); {compiled['load_average_start']:.1f} load), after "
                  "tens of seconds of compiling per shape and row count: slower, so not taken.", ""]
    decode = ctx.load("int8_decode.json")
    if decode:
        lines += _decode(decode)
    lines += [
        "What was tried for the int8 product, beside the table (issue 57 §4):",
        "- PyTorch's `_weight_int8pack_mm` (the copy's op until now): about 5 GMAC/s per core even with the "
        "weights in cache, so it stays far from the bandwidth bound; fed fp32 activations it is 3-10× slower still.",
        "- bf16 weights (`F.linear` and oneDNN's prepacked `_linear_pointwise`, AMX): oneDNN's is the faster bf16 "
        "path but reads twice the int8 bytes; neither beats the native int8 kernel at one row.",
        "- int4 groupwise (`_weight_int4pack_mm_for_cpu`, group 64): the fastest per call at one row, but its "
        "error is ~30× int8's (the error column), i.e. a different, coarser copy; as a draft it would need its own "
        "acceptance measured, and it does not make the int8 path faster. Not taken.",
        "- `torch.compile` of the dequantize-multiply pattern: see above. Dynamic int8 with rounded activations "
        "(fbgemm, oneDNN `qlinear`): rejected earlier for accuracy (the section above).",
        "- Taken: a native AVX-512 kernel (backend/models/int8_linear.cpp, built once per machine by torch's "
        "cpp_extension): int8 rows widened to fp32 in registers, 8 weight rows × up to 4 input rows of "
        "accumulators, the next tiles prefetched. It multiplies fp32 activations, so it is also closer to the "
        "dequantized product than the bf16-activation op; without AVX-512 or a compiler the copy keeps PyTorch's op.",
        ""]
    return Body(lines, [clean_command(r.get("command", ".venv/bin/python bench/int8_matmul.py"), ctx.root),
                        *([clean_command(decode["command"], ctx.root)] if decode else [])])


SECTIONS = [Section("The int8 copy's matrix product", ("int8_matmul.json",), int8,
                    also=("int8_matmul_compiled.json", "int8_decode.json"))]
