"""NAG benchmark on the embedded model, side by side in one run; prints JSON and writes bench/results/nag.json.

1. Feature extraction throughput: the batched path vs a one-document-at-a-time loop, same documents,
   same model, same top-K features (checked), at torch's default thread count and on one thread.
2. Per-document feature cache: re-ranking the pool against a new target runs the model on no pool document.
3. Precision@k with each sample domain as target: NAG vs random (mean of 5 seeds) vs embedding cosine.
4. Deactivation: held-out loss increase after zeroing the top NAG neurons vs as many random neurons.

    NAG_BENCH_THREADS=1 .venv/bin/python bench/nag.py   # sections 2-4 on one thread (shared CPU)
Runs on a private temporary store, so every number is computed, not served from an earlier cache.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DASH_STORE", str(Path(tempfile.mkdtemp(prefix="nag-bench-")) / "store.duckdb"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.models import default_model_id, load  # noqa: E402
from backend.nag import samples  # noqa: E402
from backend.nag.evaluate import DEFAULT_KS, deactivation_check, precision_curve  # noqa: E402
from backend.nag.extract import ExtractConfig, extract_batched, extract_naive  # noqa: E402
from backend.nag.featurecache import features_for  # noqa: E402
from backend.nag.rank import RankConfig, rank  # noqa: E402
from backend.nag.targets import TargetSet  # noqa: E402

N_THROUGHPUT = int(os.environ.get("NAG_BENCH_DOCS", "16"))
RANDOM_SEEDS = 5


def _time_paths(handle, texts: list[str], config: ExtractConfig) -> tuple[dict, list, list]:
    extract_batched(handle, texts[:2], config)  # warm-up (allocator, kernels)
    start = time.perf_counter()
    naive = extract_naive(handle, texts, config)
    t_naive = time.perf_counter() - start
    start = time.perf_counter()
    batched = extract_batched(handle, texts, config)
    t_batched = time.perf_counter() - start
    tokens = sum(f.used_tokens for f in batched)
    return ({"naive": {"seconds": round(t_naive, 2), "docs_per_s": round(len(texts) / t_naive, 2),
                       "tokens_per_s": round(tokens / t_naive, 1)},
             "batched": {"seconds": round(t_batched, 2), "docs_per_s": round(len(texts) / t_batched, 2),
                         "tokens_per_s": round(tokens / t_batched, 1)},
             "speedup": round(t_naive / t_batched, 2)}, naive, batched)


def throughput(handle, texts: list[str], default_threads: int) -> dict:
    """Both paths at torch's default thread count (what the app uses) and on a single thread."""
    config = ExtractConfig()
    out: dict = {"documents": len(texts), "default_threads": default_threads, "by_threads": {},
                 "load_average_start": os.getloadavg()[0]}
    for threads in sorted({default_threads, 1}, reverse=True):
        torch.set_num_threads(threads)
        out["by_threads"][str(threads)], naive, batched = _time_paths(handle, texts, config)
        print(f"  {threads} thread(s): {out['by_threads'][str(threads)]}", file=sys.stderr)
    k = config.top_k
    out["tokens"] = sum(f.used_tokens for f in batched)
    out["identical_top20_layer_sets"] = round(float(np.mean(
        [[set(a.top[l, :k]) == set(b.top[l, :k]) for l in range(a.top.shape[0])] for a, b in zip(naive, batched)])), 4)
    out["speedup_default_threads"] = out["by_threads"][str(default_threads)]["speedup"]
    return out


def main() -> None:
    default_threads = torch.get_num_threads()
    handle = load(default_model_id())
    pool_docs = samples.load_small(samples.pool_path())
    domains = samples.domains()
    targets = {d: TargetSet(d, tuple(samples.sample_targets(d))) for d in domains}
    out: dict = {"model": handle.display_name, "pool_documents": len(pool_docs), "domains": domains}

    print("throughput …", file=sys.stderr)
    out["throughput"] = throughput(handle, [d.text for d in pool_docs[:N_THROUGHPUT]], default_threads)
    # the rest on NAG_BENCH_THREADS threads (1 is fastest on a shared, oversubscribed CPU)
    torch.set_num_threads(int(os.environ.get("NAG_BENCH_THREADS", default_threads)))
    out["torch_threads_rest"] = torch.get_num_threads()

    print("features of the whole pool (cold cache) …", file=sys.stderr)
    start = time.perf_counter()
    cold = features_for(handle, pool_docs, ExtractConfig())
    out["pool_features"] = {"seconds": round(time.perf_counter() - start, 2), "cache_hits": cold.hits}

    print("precision@k per target domain …", file=sys.stderr)
    precision: dict = {}
    rerank = []
    for domain in domains:
        start = time.perf_counter()
        nag = rank(handle, samples.pool_path(), [targets[domain]], RankConfig(method="nag")).value
        rerank.append({"target": domain, "seconds": round(time.perf_counter() - start, 2),
                       "pool_cache_hits": nag.cache_hits, "pool_documents": len(nag.ids)})
        emb = rank(handle, samples.pool_path(), [targets[domain]], RankConfig(method="embedding")).value
        rnd = [precision_curve(rank(handle, samples.pool_path(), [targets[domain]],
                                    RankConfig(method="random", seed=s)).value) for s in range(RANDOM_SEEDS)]
        precision[domain] = {"nag": precision_curve(nag), "embedding": precision_curve(emb),
                             "random": {k: round(float(np.mean([r[k] for r in rnd])), 4) for k in DEFAULT_KS}}
    out["rerank_new_target"] = rerank
    out["precision_at_k"] = precision
    out["precision_at_k_mean"] = {m: {k: round(float(np.mean([precision[d][m][k] for d in domains])), 4)
                                      for k in DEFAULT_KS} for m in ("nag", "embedding", "random")}

    print("deactivation per target domain …", file=sys.stderr)
    heldout = samples.heldout()
    deact = {}
    for domain in domains:
        deact[domain] = deactivation_check(handle, [targets[domain]], heldout).value.summary()
        print(f"  {domain}: {deact[domain]}", file=sys.stderr)
    out["deactivation"] = deact
    ratios = [v["ratio_target"] for v in deact.values()]
    out["deactivation_summary"] = {
        "ratio_target_median": round(float(np.median(ratios)), 2), "ratio_target_min": round(float(min(ratios)), 2),
        "nag_target_mean": round(float(np.mean([v["nag_target"] for v in deact.values()])), 4),
        "nag_other_mean": round(float(np.mean([v["nag_other"] for v in deact.values()])), 4),
        "random_target_mean": round(float(np.mean([v["random_target"] for v in deact.values()])), 4)}
    text = json.dumps(out, indent=1)
    print(text)
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / "nag.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
