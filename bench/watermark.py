"""Watermark benchmark, in one run on the embedded model (prints JSON, writes bench/results/watermark.json).

1. Identity retrieval latency vs registry size (100 to 100,000 users over round(sqrt(U)) models, in a
   temporary store): hierarchical retrieval vs the flat scan of every (model, user) key, on the same
   signed watermarked document (24 corpus sentences chosen by IPMark's rule for one identity), with
   the attributions compared. Retrieval only: the text is signed once before timing.
2. End-to-end detection of a 2,000-word watermarked document (segmentation, embedding, signatures,
   registry lookup, retrieval; 10,000 registered users) on CPU with the embedder loaded, the
   sentence-embedding cache cleared each time. Wall and CPU time and the load average are recorded:
   the machine is shared.
3. The quality / robustness / attribution evaluation (cached in the store: run
   `python -m backend watermark evaluate --json` first, or let this run compute it).

    .venv/bin/python bench/watermark.py [--skip-eval | --eval-only] [--max-users 100000]
"""
from __future__ import annotations

import argparse
import json
import math
import random
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from backend.features import load_all  # noqa: E402
from publish import publish  # noqa: E402  (bench/, beside this script)
from backend.watermark import identities  # noqa: E402
from backend.models.sentence_embedder import get_embedder  # noqa: E402
from backend.watermark.ipmark.config import IPMarkConfig  # noqa: E402
from backend.watermark.ipmark.detect import detect, detect_signed  # noqa: E402
from backend.watermark.oracle import corpus_sentences, select  # noqa: E402
from backend.watermark.retrieval import flat as flat_scan  # noqa: E402
from backend.watermark.retrieval import hierarchical  # noqa: E402
from backend.watermark.signatures import sign_text  # noqa: E402

CFG = IPMarkConfig()
load_all()  # the evaluation iterates every registered watermark method and attack


def _median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _populate(total_users: int) -> dict[int, list[int]]:
    """round(sqrt(U)) models with the users spread evenly; returns {model: [users]} as the detector loads it."""
    n_models = max(1, round(math.sqrt(total_users)))
    for m in range(n_models):
        model = identities.add_model(f"bench-model-{m + 1}")
        share = total_users // n_models + (1 if m < total_users % n_models else 0)
        identities.bulk_add_users(model.address, share, "bench")
    return {m.address: [] for m in identities.list_models()} | identities.all_users_by_model()


def watermarked_document(model: int, user: int, per_level: int = 12) -> str:
    chosen, _ = select(corpus_sentences(), model, user)
    rows = detect_signed(sign_text(" ".join(chosen), CFG.n_bits), CFG, users={model: [user]},
                         names={model: "m"}).sentences
    picked = [r.text for r in rows if r.level == "model"][:per_level] + \
        [r.text for r in rows if r.level == "user"][:per_level]
    return " ".join(picked)


def latency(sizes: list[int]) -> list[dict]:
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["DASH_STORE"] = str(Path(tmp) / "bench.duckdb")
            start = time.perf_counter()
            users = _populate(size)
            populate_s = time.perf_counter() - start
            target_model = max(users)  # the last model, so the flat scan cannot stop early by luck of order
            target_user = users[target_model][len(users[target_model]) // 2]
            sigs = sign_text(watermarked_document(target_model, target_user), CFG.n_bits)
            load_s, _ = _median_time(lambda: identities.all_users_by_model(), 3)
            hier_s, hier = _median_time(lambda: hierarchical(sigs, users, CFG.w_sem, CFG.w_syn, CFG.alpha).best, 5)
            flat_s, flat = _median_time(lambda: flat_scan(sigs, users, CFG.w_sem, CFG.w_syn, CFG.alpha).best,
                                        1 if size >= 50_000 else 3)
            same = (hier.model_address, hier.user_address) == (flat.model_address, flat.user_address)
            rows.append({"users": size, "models": len(users), "sentences": len(sigs),
                         "hierarchical_ms": round(hier_s * 1000, 2), "flat_ms": round(flat_s * 1000, 2),
                         "speedup": round(flat_s / hier_s, 1), "same_attribution": same,
                         "keys_hierarchical": hierarchical(sigs, users, CFG.w_sem, CFG.w_syn, CFG.alpha).keys_evaluated,
                         "keys_flat": sum(len(u) for u in users.values()) + len(users),
                         "attributed_correctly": (hier.model_address, hier.user_address) == (target_model, target_user),
                         "user_significant": hier.user_significant,
                         "registry_load_ms": round(load_s * 1000, 1), "populate_s": round(populate_s, 2)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def document_detection(words: int = 2000, users: int = 10_000) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DASH_STORE"] = str(Path(tmp) / "doc.duckdb")
        registry_users = _populate(users)
        model = max(registry_users)
        user = registry_users[model][0]
        chosen, _ = select(corpus_sentences(), model, user)
        # The corpus holds ~56 sentences that carry this identity's bits: repeat them (reshuffled) up to the
        # length; repeats cost the same embedding work and count once in the score. Filling with the other
        # corpus sentences would not do: they are exactly those whose bits are not both 1 (biased to 0).
        rng = random.Random(0)
        parts, count = [], 0
        while count < words:
            batch = chosen[:]
            rng.shuffle(batch) if parts else None
            for sentence in batch:
                if count >= words:
                    break
                parts.append(sentence)
                count += len(sentence.split())
        document = " ".join(parts)
        embedder = get_embedder()

        def run():
            embedder.clear_memo()  # time real embedding work, not the cache
            return detect(document, CFG)

        by_threads = {}
        default_threads = torch.get_num_threads()
        for threads in sorted({default_threads, 1}, reverse=True):
            torch.set_num_threads(threads)
            run()  # warm-up: tokenizer and kernels
            cpu_start = time.process_time()
            seconds, report = _median_time(run, 3)
            by_threads[str(threads)] = {"seconds": round(seconds, 3),
                                        "cpu_seconds_per_run": round((time.process_time() - cpu_start) / 3, 3),
                                        "signature_seconds": round(report.signature_seconds, 3),
                                        "retrieval_seconds": round(report.retrieval_seconds, 4),
                                        "load_average": os.getloadavg()[0]}
        torch.set_num_threads(default_threads)
        slowest = max(v["seconds"] for v in by_threads.values())
        return {"words": len(document.split()), "sentences": report.n_sentences, "registry_users": users,
                "by_torch_threads": by_threads, "verdict": report.verdict,
                "attributed": [report.model_address, report.user_address], "expected": [model, user],
                "target_under_2s": slowest < 2.0}


def evaluation() -> dict:
    from backend.models import load
    from backend.watermark.evaluation import EvalConfig, evaluate, generation_costs

    handle = load("smollm2-135m-instruct")
    done = evaluate(handle, EvalConfig(), progress=lambda f, m: print(f"[{f:4.0%}] {m}", file=sys.stderr))
    v = done.value

    return {"model": v.model_name, "provenance": done.provenance, "config": "EvalConfig() defaults",
            "quality": [q.__dict__ for q in v.quality],
            "detection": [{k: (round(x, 3) if isinstance(x, float) else x) for k, x in d.__dict__.items()}
                          for d in v.detection],
            "attribution": [a.__dict__ for a in v.attribution],
            "generation_costs": generation_costs(handle, EvalConfig())}


def main() -> dict:
    parser = argparse.ArgumentParser()
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--skip-eval", action="store_true", help="keep the stored evaluation, re-time the rest")
    modes.add_argument("--eval-only", action="store_true",
                       help="refresh the evaluation only, keeping the stored latency and document figures")
    parser.add_argument("--max-users", type=int, default=100_000)
    args = parser.parse_args()
    path = ROOT / "bench" / "results" / "watermark.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    if args.eval_only:
        out = {**previous, "evaluation": evaluation()}
        path.write_text(json.dumps(out, indent=1, default=str) + "\n")
        publish(path)
        print(json.dumps(out["evaluation"], indent=1, default=str))
        return out
    real_store = os.environ.get("DASH_STORE")
    sizes = [s for s in (100, 1_000, 10_000, 100_000) if s <= args.max_users]
    out = {"machine": {"cpus": os.cpu_count(), "load_average_start": os.getloadavg()}}
    out["latency"] = latency(sizes)
    out["document_2000_words"] = document_detection()
    if real_store is None:
        os.environ.pop("DASH_STORE", None)
    else:
        os.environ["DASH_STORE"] = real_store
    if not args.skip_eval:
        out["evaluation"] = evaluation()
    out["machine"]["load_average_end"] = os.getloadavg()
    if args.skip_eval and "evaluation" in previous:
        out["evaluation"] = previous["evaluation"]
    path.write_text(json.dumps(out, indent=1, default=str) + "\n")
    publish(path)
    print(json.dumps(out, indent=1, default=str))
    return out


if __name__ == "__main__":
    main()
