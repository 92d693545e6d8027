"""The int8 copy on its native kernel against the same copy on PyTorch's `_weight_int8pack_mm`, end to end, side
by side in one process (issue 57 §4; bench/int8_matmul.py measures the kernels one Linear at a time).

Interleaved reps, greedy batch 1, the same prompts (chat-template ids) and --tokens new tokens each:
- the fp32 kernel step by step (the reference every other row is compared with);
- the int8 copy step by step, on each kernel: tokens/s, share of its bandwidth bound (bench/bandwidth.py), and each
  prompt's first divergence from the fp32 tokens;
- checked chunks (backend/models/speculative.py) with each int8 copy (head rounded too) as the draft: tokens/s, the
  share of the draft's guesses kept, and whether the fp32 tokens came out (they must: the draft only guesses);
- speculative sampling ×8 (backend/models/speculative_sampling.py) with each draft, and plain fp32 sampling ×8.
The native kernel is a trial kept in bench/ (bench/int8_native.py): the app's int8 copy runs PyTorch's op. For the
native rows this bench builds copies whose Linear layers run on it (bench.int8_native.native_int8_copy) and swaps
them into reduced.py's per-model cache for those rows only, restoring the app's copies after each, so every
contestant runs the project's own decoding code paths.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@contextlib.contextmanager
def _copies_on(model, copies: dict):
    """reduced_copy(model, ...) returns `copies[(precision, round_head)]` inside the block."""
    from backend.models import reduced

    kept = dict(reduced._copies.get(model, {}))
    reduced._copies.setdefault(model, {}).update(copies)
    try:
        yield
    finally:
        reduced._copies[model].clear()
        reduced._copies[model].update(kept)


def _native_copies(model) -> dict:
    """The int8 copies (head kept, head rounded) with their Linear layers on the trial native kernel."""
    from bench.int8_native import native_int8_copy

    return {("int8", round_head): native_int8_copy(model, round_head) for round_head in (False, True)}


def run(model_name: str, threads: int, tokens: int, reps: int, n_prompts: int, sample_tokens: int) -> dict:
    import torch

    from backend.features import load_all
    from backend.models import kernel, load, speculative
    from backend.models.generate import encode_prompt
    from backend.models.reduced import reduced_copy
    from backend.models.speculative_sampling import sample_in_chunks
    from bench.bandwidth import bytes_per_token, measured_bandwidth
    from backend.models.rules import stop_ids
    from bench.speed_vs_generate import PROMPTS, first_divergence

    torch.set_num_threads(threads)
    load_all()
    handle = load(model_name)
    model = handle.model
    stops = sorted(stop_ids(handle))
    encoded = [encode_prompt(handle, p) for p in PROMPTS]
    prompts = encoded[::max(1, len(encoded) // n_prompts)][:n_prompts]  # bench/speed_vs_generate.py's choice
    new = _native_copies(model)  # raises where the trial kernel cannot be built: nothing to compare
    old = {key: reduced_copy(model, *key) for key in new}  # the app's: PyTorch's op
    checks: dict[str, speculative.Checks] = {}

    def greedy(precision="reference", chunks=False, name=""):
        def go():
            written = []
            total = checks.setdefault(name, speculative.Checks())
            for ids in prompts:
                decoder = kernel.start(model, ids, 1, tokens, precision=precision)
                if chunks:
                    out, _, c = speculative.greedy_in_chunks(decoder, tokens, stops)
                    for source in total.guessed:
                        total.guessed[source] += c.guessed[source]
                        total.kept[source] += c.kept[source]
                    written.append(list(out))
                else:
                    written.append(kernel.decode(decoder, kernel.greedy_policy, tokens, stops).row(0))
            return written
        return go

    def sampled(speculative_draft: bool):
        def go():
            decoder = kernel.start(model, prompts[0], 8, sample_tokens)
            if speculative_draft:
                return sample_in_chunks(decoder, sample_tokens, torch.Generator().manual_seed(0)).acceptance_rate
            kernel.decode(decoder, kernel.sampling_policy(1.0, torch.Generator().manual_seed(0)), sample_tokens,
                          stop_at_eos=False)
            return None
        return go

    contestants = {  # name -> (copies it runs on, work)
        "kernel fp32": (new, greedy()),
        "kernel int8, native kernel": (new, greedy("int8")),
        "kernel int8, torch _weight_int8pack_mm": (old, greedy("int8")),
        "checked chunks, native int8 draft": (new, greedy(chunks=True, name="native")),
        "checked chunks, torch-op int8 draft": (old, greedy(chunks=True, name="torch op")),
        "sampling x8 fp32": (new, sampled(False)),
        "speculative sampling x8, native int8 draft": (new, sampled(True)),
        "speculative sampling x8, torch-op int8 draft": (old, sampled(True)),
    }
    bandwidth = measured_bandwidth()
    seconds = {name: [] for name in contestants}
    returned = {}
    with torch.no_grad():
        for name, (copies, work) in contestants.items():  # warm-up
            with _copies_on(model, copies):
                work()
        checks.clear()
        for _ in range(reps):
            for name, (copies, work) in contestants.items():
                with _copies_on(model, copies):
                    start = time.perf_counter()
                    returned[name] = work()
                    seconds[name].append(time.perf_counter() - start)
    bandwidth = max(bandwidth, measured_bandwidth())
    reference = returned["kernel fp32"]
    int8_bytes = bytes_per_token(new[("int8", False)])
    rows = {}
    for name, s in seconds.items():
        sampling = name.startswith(("sampling", "speculative"))
        n = 8 * sample_tokens if sampling else sum(len(r) for r in returned[name])
        row = {"wall_s": statistics.median(s), "tokens_per_s": n / statistics.median(s),
               "tokens_per_s_reps": [n / x for x in s]}
        if not sampling:
            row["prompts_identical_to_fp32"] = sum(a == b for a, b in zip(returned[name], reference))
            row["first_divergence"] = [first_divergence(a, b) for a, b in zip(returned[name], reference)]
        if name.startswith("kernel int8"):
            row["share_of_bandwidth_bound"] = row["tokens_per_s"] / (bandwidth / int8_bytes)
        if name.startswith("speculative"):
            row["acceptance_rate"] = returned[name]
        rows[name] = row
    for name, key in (("checked chunks, native int8 draft", "native"),
                      ("checked chunks, torch-op int8 draft", "torch op")):
        rows[name]["draft_acceptance"] = checks[key].acceptance("draft")
        rows[name]["acceptance"] = checks[key].acceptance()
    return {"bench": "int8_decode", "model": model_name, "threads": threads, "tokens": tokens, "reps": reps,
            "prompts": n_prompts, "sample_tokens": sample_tokens, "bandwidth_bytes_per_s": bandwidth,
            "int8_weight_bytes_per_token": int8_bytes, "fp32_weight_bytes_per_token": bytes_per_token(model),
            "contestants": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=2)
    ap.add_argument("--sample-tokens", type=int, default=32)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "int8_decode.json"))
    args = ap.parse_args()
    load_start = os.getloadavg()[0]
    out = run(args.model, args.threads, args.tokens, args.reps, args.prompts, args.sample_tokens)
    out |= {"load_average_start": load_start, "load_average_end": os.getloadavg()[0],
            "command": f".venv/bin/python bench/int8_decode.py --model {args.model} --threads {args.threads} "
                       f"--tokens {args.tokens} --reps {args.reps} --prompts {args.prompts} "
                       f"--sample-tokens {args.sample_tokens}"}
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
