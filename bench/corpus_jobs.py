"""Corpus jobs benchmark, side by side in one run: documents/s of NAG feature extraction over a sharded corpus
on the local path (`rank`, one process), the local engine, and Ray with 1 and 2 workers on this machine; Ray's
overhead at 1 worker; reading and tokenisation throughput (where the bottleneck would move); the watermark
scan of the same corpus (IPMark, 2 models x 100 users registered) locally and on Ray. Writes
bench/results/corpus_jobs.json.

    CORPUS_BENCH_SHARDS=6 CORPUS_BENCH_DOCS=24 .venv/bin/python bench/corpus_jobs.py
Every configuration computes (a private store and jobs folder each); the embedded default model.
"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from backend.corpus.documents import iter_documents  # noqa: E402
from backend.corpus.engine import EngineConfig  # noqa: E402
from backend.corpus.ray_engine import ensure_ray  # noqa: E402
from backend.features import load_all  # noqa: E402
from backend.models import default_model_id, load  # noqa: E402
from backend.nag import samples  # noqa: E402
from backend.nag.corpus_job import feature_job  # noqa: E402
from backend.nag.rank import RankConfig, rank  # noqa: E402
from backend.nag.targets import TargetSet  # noqa: E402

SHARDS = int(os.environ.get("CORPUS_BENCH_SHARDS", "6"))
PER_SHARD = int(os.environ.get("CORPUS_BENCH_DOCS", "24"))
CONFIG = RankConfig(top_k=20, max_length=64)


def _fresh_store() -> None:
    os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="corpus-bench-")) / "store.duckdb")


def _corpus(directory: Path) -> tuple[Path, Path]:
    docs = samples.load_small(samples.pool_path())
    rng = random.Random(0)
    rows = [{"id": f"d{i}", "text": rng.choice(docs).text + f" ({i})"} for i in range(SHARDS * PER_SHARD)]
    shards = directory / "shards"
    shards.mkdir(parents=True)
    for s in range(SHARDS):
        part = rows[s * PER_SHARD:(s + 1) * PER_SHARD]
        (shards / f"part-{s:02d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    single = directory / "all.jsonl"
    single.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return shards, single


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> dict:
    load_all()
    directory = Path(tempfile.mkdtemp(prefix="corpus-bench-data-"))
    shards, single = _corpus(directory)
    n = SHARDS * PER_SHARD
    handle = load(default_model_id())
    targets = [TargetSet("science", tuple(samples.sample_targets("science")[:3]))]
    rank(handle, single, targets, CONFIG)  # warm-up (targets' features, lazy imports), on a throw-away store
    out: dict = {"model": handle.display_name, "documents": n, "shards": SHARDS, "max_length": CONFIG.max_length,
                 "cpus": os.cpu_count(), "load_average_start": round(os.getloadavg()[0], 2)}
    seconds, docs = _timed(lambda: sum(1 for _ in iter_documents(single)))
    out["read_docs_per_s"] = round(docs / seconds, 1)
    texts = [d.text for d in iter_documents(single)]
    seconds, _ = _timed(lambda: handle.tokenizer(texts, add_special_tokens=False))
    out["tokenise_docs_per_s"] = round(n / seconds, 1)
    runs = {}
    _fresh_store()
    seconds, _ = _timed(lambda: rank(handle, single, targets, CONFIG))
    runs["local path (rank)"] = seconds
    _fresh_store()
    seconds, _ = _timed(lambda: feature_job(handle, str(shards), CONFIG, EngineConfig()))
    runs["local engine"] = seconds
    seconds, _ = _timed(lambda: ensure_ray(EngineConfig(engine="ray")))
    out["ray_start_seconds"] = round(seconds, 1)
    for workers in (1, 2):
        _fresh_store()
        seconds, job = _timed(lambda: feature_job(handle, str(shards), CONFIG, EngineConfig(engine="ray",
                                                                                             workers=workers)))
        assert job.rows == n and not job.failed
        runs[f"ray, {workers} worker(s)"] = seconds
    local = runs["local path (rank)"]
    out["runs"] = {name: {"seconds": round(s, 2), "docs_per_s": round(n / s, 2), "vs_local_path": round(s / local, 2)}
                   for name, s in runs.items()}
    out["ray_overhead_1_worker"] = round(runs["ray, 1 worker(s)"] / local, 2)
    out["ray_speedup_2_vs_1_workers"] = round(runs["ray, 1 worker(s)"] / runs["ray, 2 worker(s)"], 2)
    out["per_worker_docs_per_s"] = round(n / runs["ray, 2 worker(s)"] / 2, 2)
    out["watermark_scan"] = _scan_runs(shards, n)
    out["load_average_end"] = round(os.getloadavg()[0], 2)
    return out


def _scan_runs(shards: Path, n: int) -> dict:
    """Each engine on a fresh store (a finished job would be resumed, not rerun) with the same identities: keys
    derive from the master secret and the addresses, so every store holds the same 200 keys."""
    from backend.watermark import identities
    from backend.watermark.scan import ScanConfig, scan

    out_dir = Path(tempfile.mkdtemp(prefix="corpus-bench-scan-"))
    runs = {}
    for label, engine in (("local engine", EngineConfig()), ("ray, 1 worker(s)", EngineConfig(engine="ray", workers=1)),
                          ("ray, 2 worker(s)", EngineConfig(engine="ray", workers=2))):
        _fresh_store()
        for name in ("bench-model-a", "bench-model-b"):
            identities.bulk_add_users(identities.add_model(name).address, 100, "bench")
        target = str(out_dir / f"{len(runs)}.parquet")
        seconds, _ = _timed(lambda: scan(str(shards), ScanConfig(), engine, target))
        runs[label] = {"seconds": round(seconds, 2), "docs_per_s": round(n / seconds, 2)}
    local = runs["local engine"]["seconds"]
    for row in runs.values():
        row["vs_local"] = round(row["seconds"] / local, 2)
    return runs


if __name__ == "__main__":
    result = main()
    text = json.dumps(result, indent=1)
    print(text)
    (ROOT / "bench" / "results" / "corpus_jobs.json").write_text(text + "\n")
