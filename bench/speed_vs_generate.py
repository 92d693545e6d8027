"""The generation kernel against `transformers.generate`, side by side in one process (`bench/kernel.py
--against generate` runs this).

Per torch thread count, interleaved (every rep runs each contestant once, in turn, on the same prompts):
- greedy, batch 1, up to --tokens new tokens per prompt, stopping at the model's stop ids: `model.generate`
  (dynamic cache), `model.generate(cache_implementation="static")`, transformers' own speculative peers
  (`prompt_lookup_num_tokens=3`, and assisted generation with the project's int8 copy as `assistant_model`), the
  kernel step by step, the kernel in checked chunks (backend/models/speculative.py, with its acceptance rate), and
  the kernel on the int8 / bf16 copies (opt-in, reduced precision, each prompt's first divergence from generate).
  Tokens per second over all prompts (every rep's figure kept: the report gives a range where reps move > 15 %),
  and each contestant's share of its bandwidth bound (bench/bandwidth.py: measured bandwidth / weight bytes a step
  reads); the fp32 rows must write generate's tokens exactly.
- sampling, 8 sequences of exactly --tokens tokens from softmax(logits) (temperature 1, no top-k/top-p):
  `generate(num_return_sequences=8)` against the kernel (prefill once, 8 rows), fp32, fp32 with the weights packed
  for 8 rows (the same distribution, sums in another order), and int8, and the kernel's speculative sampling (backend/models/speculative_sampling.py: int8 draft, exact rejection, so fp32's
  distribution; its acceptance rate is recorded).
Then, once, the drift of the reduced-precision copies over --agreement-prompts prompts: the fp32 greedy
continuation (generate's) teacher-forced through each copy, top-1 agreement and the largest logit difference,
plus how far the copy's own greedy run keeps generate's tokens; and whether the checked chunks wrote
generate's tokens on every one of those prompts.
"""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

SUBJECTS = ("photosynthesis", "the moon", "a bicycle", "the French Revolution", "volcanoes", "the human heart",
            "a rainbow", "the Roman Empire", "honey bees", "the internet")
TEMPLATES = ("Explain {} in two sentences.", "Write a short story about {}.", "List three facts about {}.",
             "What is special about {}?", "Describe {} to a child.")
PROMPTS = [t.format(s) for s in SUBJECTS for t in TEMPLATES]  # 50, written here


PEERS = ("generate prompt lookup", "generate assisted by int8")  # transformers' own speculative decoding
READS = {"kernel int8": "int8", "kernel bf16": "bf16"}  # contestant -> the weights its step reads (else fp32)


def _contestants(handle, stops: list[int], tokens: int) -> dict[str, Callable]:
    from backend.models import kernel
    from backend.models.reduced import reduced_copy

    model = handle.model
    pad = min(stops)

    def gen(**options):
        def run(ids):
            out = model.generate(ids, do_sample=False, max_new_tokens=tokens, eos_token_id=stops, pad_token_id=pad,
                                 top_k=None, top_p=None, temperature=None, **options)
            return out[0, ids.shape[1]:].tolist()
        return run

    def ours(precision="reference", speculate=False):
        def run(ids):
            decoder = kernel.start(model, ids, 1, tokens, precision=precision)
            return kernel.decode(decoder, kernel.greedy_policy, tokens, stops, speculate=speculate).row(0)
        return run

    draft = reduced_copy(model, "int8", round_head=True)  # the checked chunks' own draft
    return {"generate": gen(), "generate static cache": gen(cache_implementation="static"),
            PEERS[0]: gen(prompt_lookup_num_tokens=3), PEERS[1]: gen(assistant_model=draft), "kernel": ours(),
            "kernel checked chunks": ours(speculate=True), "kernel int8": ours("int8"), "kernel bf16": ours("bf16")}


def _race(runs: dict[str, Callable], reps: int) -> tuple[dict[str, list[float]], dict]:
    """Wall seconds of each contestant in each of reps interleaved rounds (after one untimed warm-up round, where
    the reduced copies are built), and what each returned in the last round."""
    import torch

    seconds: dict[str, list[float]] = {name: [] for name in runs}
    returned: dict = {}
    with torch.no_grad():
        for run in runs.values():
            run()
        for _ in range(reps):
            for name, run in runs.items():
                start = time.perf_counter()
                returned[name] = run()
                seconds[name].append(time.perf_counter() - start)
    return seconds, returned


def _against_generate(contestants: dict[str, dict]) -> dict[str, dict]:
    base = contestants["generate"]["tokens_per_s"]
    for row in contestants.values():
        row["speed_vs_generate"] = row["tokens_per_s"] / base
    return contestants


def first_divergence(own: list[int], reference: list[int]) -> int | None:
    """The first position where `own` leaves `reference` (the shorter one's length if one stops early); None when
    they are the same."""
    if own == reference:
        return None
    return next((i for i, (a, b) in enumerate(zip(own, reference)) if a != b), min(len(own), len(reference)))


def chunk_acceptance(handle, prompts, stops, tokens: int) -> dict:
    """The checked chunks' guesses over `prompts` (untimed: the run is deterministic): how many each source
    proposed, the share the reference model kept, and tokens written per checking forward."""
    from backend.models import kernel, speculative

    total = speculative.Checks()
    written = 0
    for ids in prompts:
        decoder = kernel.start(handle.model, ids, 1, tokens)
        out, _, checks = speculative.greedy_in_chunks(decoder, tokens, stops)
        written += len(out)
        total.forwards += checks.forwards
        for source in total.guessed:
            total.guessed[source] += checks.guessed[source]
            total.kept[source] += checks.kept[source]
    return {"acceptance": total.acceptance(), "by_source": {
        s: {"guessed": total.guessed[s], "kept": total.kept[s], "acceptance": total.acceptance(s)}
        for s in total.guessed}, "checking_forwards": total.forwards, "tokens_per_forward": written / max(1, total.forwards)}


def greedy_batch1(handle, prompts, stops, tokens: int, reps: int) -> dict:
    from backend.models.reduced import reduced_copy
    from bench.bandwidth import bytes_per_token, measured_bandwidth

    runs = {name: (lambda run=run: [run(ids) for ids in prompts])
            for name, run in _contestants(handle, stops, tokens).items()}
    bandwidth = measured_bandwidth()
    seconds, written = _race(runs, reps)
    bandwidth = max(bandwidth, measured_bandwidth())  # before and after the race: other load only lowers it
    reference = written["generate"]
    reads = {"fp32": bytes_per_token(handle.model),
             **{p: bytes_per_token(reduced_copy(handle.model, p)) for p in set(READS.values())}}
    contestants = {}
    for name in runs:
        n = sum(len(r) for r in written[name])
        bound = bandwidth / reads[READS.get(name, "fp32")]
        contestants[name] = {
            "wall_s": statistics.median(seconds[name]), "tokens_per_s": n / statistics.median(seconds[name]),
            "tokens_per_s_reps": [n / s for s in seconds[name]], "bandwidth_bound_tokens_per_s": bound,
            "prompts_identical_to_generate": sum(a == b for a, b in zip(written[name], reference)),
            "first_divergence": [first_divergence(own, ref) for own, ref in zip(written[name], reference)]}
        contestants[name]["share_of_bandwidth_bound"] = contestants[name]["tokens_per_s"] / bound
    best_peer = max(PEERS, key=lambda p: contestants[p]["tokens_per_s"])
    contestants["kernel checked chunks"] |= chunk_acceptance(handle, prompts, stops, tokens)
    for row in contestants.values():
        row["speed_vs_best_peer"] = row["tokens_per_s"] / contestants[best_peer]["tokens_per_s"]
    return {"new_tokens": sum(len(r) for r in reference), "prompts": len(prompts), "best_peer": best_peer,
            "bandwidth_bytes_per_s": bandwidth, "weight_bytes_per_token": reads,
            "contestants": _against_generate(contestants)}


def sampling_x8(handle, prompt, tokens: int, reps: int, rows: int = 8) -> dict:
    import torch

    from backend.models import kernel
    from backend.models.speculative_sampling import eligible, sample_in_chunks

    model = handle.model

    def gen():
        model.generate(prompt, do_sample=True, num_return_sequences=rows, min_new_tokens=tokens,
                       max_new_tokens=tokens, top_k=0, top_p=1.0, temperature=1.0,
                       pad_token_id=handle.tokenizer.eos_token_id or 0)

    def ours(precision="reference"):
        def run():
            decoder = kernel.start(model, prompt, rows, tokens, precision=precision)
            policy = kernel.sampling_policy(1.0, torch.Generator().manual_seed(0))
            kernel.decode(decoder, policy, tokens, stop_at_eos=False)
        return run

    def speculative():  # the same distribution as the fp32 rows (exact rejection sampling), other seeded tokens
        decoder = kernel.start(model, prompt, rows, tokens)
        return sample_in_chunks(decoder, tokens, torch.Generator().manual_seed(0))

    runs = {"generate": gen, "kernel": ours(), "kernel packed": ours("packed"), "kernel int8": ours("int8")}
    if eligible(kernel.start(model, prompt, rows, tokens)):  # not a sliding-window model (Gemma 3)
        runs["kernel speculative (int8 draft)"] = speculative
    seconds, returned = _race(runs, reps)
    contestants = {name: {"wall_s": statistics.median(s), "tokens_per_s": rows * tokens / statistics.median(s),
                          "tokens_per_s_reps": [rows * tokens / x for x in s]} for name, s in seconds.items()}
    if "kernel speculative (int8 draft)" in returned:
        contestants["kernel speculative (int8 draft)"]["acceptance_rate"] = \
            returned["kernel speculative (int8 draft)"].acceptance_rate
    return {"rows": rows, "new_tokens_per_row": tokens, "contestants": _against_generate(contestants)}


def drift(handle, prompts, stops, tokens: int) -> dict:
    """Reduced precision against fp32 on generate's own greedy continuations; checked chunks' identity."""
    import torch

    from backend.models.reduced import reduced_copy

    model = handle.model
    runs = _contestants(handle, stops, tokens)
    stats = {p: {"agree": 0, "positions": 0, "max_logit_diff": 0.0, "free_run_prefix": [], "identical": 0,
                "first_divergence": []}
             for p in ("int8", "bf16")}
    chunks_same = 0
    with torch.no_grad():
        for ids in prompts:
            reference = runs["generate"](ids)
            chunks_same += runs["kernel checked chunks"](ids) == reference
            if not reference:
                continue
            full = torch.cat([ids, torch.tensor([reference])], dim=1)
            fp32 = model(input_ids=full).logits[0, ids.shape[1] - 1:-1].float()
            for precision, s in stats.items():
                low = reduced_copy(model, precision)(input_ids=full).logits[0, ids.shape[1] - 1:-1].float()
                s["agree"] += int((low.argmax(-1) == fp32.argmax(-1)).sum())
                s["positions"] += fp32.shape[0]
                s["max_logit_diff"] = max(s["max_logit_diff"], float((low - fp32).abs().max()))
                own = runs[f"kernel {precision}"](ids)
                diverged = first_divergence(own, reference)
                s["first_divergence"].append(diverged)
                s["free_run_prefix"].append(min(len(own), len(reference)) if diverged is None else diverged)
                s["identical"] += own == reference
    out = {"prompts": len(prompts), "new_tokens": tokens, "checked_chunks_identical_prompts": chunks_same}
    for precision, s in stats.items():
        out[precision] = {"teacher_forced_top1_agreement": s["agree"] / max(1, s["positions"]),
                          "positions": s["positions"], "max_abs_logit_diff": s["max_logit_diff"],
                          "median_identical_prefix_tokens": statistics.median(s["free_run_prefix"]),
                          "prompts_fully_identical": s["identical"], "first_divergence": s["first_divergence"]}
    return out


def run(model_name: str, threads: list[int], tokens: int, reps: int, timing_prompts: int,
        agreement_prompts: int, agreement_tokens: int) -> dict:
    import torch

    from backend.features import load_all
    from backend.models import load
    from backend.models.generate import encode_prompt
    from backend.models.rules import stop_ids

    load_all()
    handle = load(model_name)
    stops = sorted(stop_ids(handle))
    encoded = [encode_prompt(handle, p) for p in PROMPTS]
    timing = encoded[::max(1, len(encoded) // timing_prompts)][:timing_prompts]
    result = {"model": model_name, "dtype": str(handle.model.dtype), "tokens": tokens, "reps": reps, "by_threads": {},
              "load_average_start": list(os.getloadavg())}
    for n in threads:
        torch.set_num_threads(n)
        result["by_threads"][str(n)] = {
            "greedy_batch1": greedy_batch1(handle, timing, stops, tokens, reps),
            "sampling_x8": sampling_x8(handle, timing[0], tokens, reps),
            "load_average": list(os.getloadavg())}
    torch.set_num_threads(max(threads))
    result["drift"] = drift(handle, encoded[:agreement_prompts], stops, agreement_tokens)
    result["drift"]["torch_threads"] = max(threads)
    result["load_average_end"] = list(os.getloadavg())
    return result
