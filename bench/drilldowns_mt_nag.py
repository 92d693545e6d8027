"""Drill-down times of the MT-heads and NAG pages on the embedded models (issue 44 §2: cached <= 2 s, computed
<= 10 s on 2 CPU cores).

- MT head (`backend.mt.head_detail`) on Gemma 3 270M, the page's default map (EN->FR language heads, 8 prompts,
  the demonstrations that fit; computed first, untimed, as the page has it stored when a head is clicked): three
  heads, each opened computed and then cached.
- NAG neuron (`backend.nag.neuron`) on SmolLM2-135M over the first 40 documents of the sample pool, targets the
  sample 'science' domain (their document features warmed first, as the page's ranking leaves them): three neurons
  of an early, a middle and the last layer, computed then cached.

The times are of the verb as the page calls it (store lookup included), not of drawing. The store is a fresh
temporary file, so "computed" is computed.

Each computed open also records its CPU seconds: on cores shared with other jobs, CPU seconds / threads is what
the wall time would be on idle cores.

Usage: .venv/bin/python bench/drilldowns_mt_nag.py [--threads 2] [--heads 6.0,9.1] [--neurons 2.100] [--store S]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "results" / "drilldowns_mt_nag.json"


def timed(call):
    start = time.perf_counter()
    out = call()
    return out, round(time.perf_counter() - start, 3)


def timed_cpu(call):
    """(result, wall seconds, CPU seconds of this process): on a machine shared with other jobs the CPU seconds
    divided by the threads are what the wall time would be on idle cores."""
    cpu = time.process_time()
    out, wall = timed(call)
    return out, wall, round(time.process_time() - cpu, 3)


def pairs(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in part.split(".")) for part in text.split(",") if part]


def mt_rows(chosen: list[tuple[int, int]]) -> tuple[str, list[dict], float]:
    from backend.models import load
    from backend.mt import HeadsConfig, builtin, fit_shots
    from backend.mt.head_detail import HeadDetailConfig, head_detail

    handle = load("gemma-3-270m")
    data = builtin()
    template = HeadsConfig(src="en", tgt="fr", k_shots=fit_shots(handle, data, "en", "fr", 5))
    from backend.mt import find_heads

    _, map_s = timed(lambda: find_heads(handle, template, data))  # the map the page shows (stored there)
    n_layers = handle.info.n_layers
    rows = []
    for layer, head in chosen or [(n_layers // 3, 0), (n_layers // 2, 1), (n_layers - 1, 3)]:
        config = HeadDetailConfig(heads=template, layer=layer, head=head)
        first, computed_s, cpu_s = timed_cpu(lambda: head_detail(handle, config, data))
        again, cached_s = timed(lambda: head_detail(handle, config, data))
        detail = first.value
        rows.append({"layer": layer, "head": head, "computed_s": computed_s, "computed_cpu_s": cpu_s,
                     "cached_s": cached_s,
                     "provenance": [first.provenance, again.provenance], "prompts": len(detail.patching),
                     "prompt_tokens": len(detail.tokens), "mean_patching": round(detail.mean_patching, 5),
                     "target_share": detail.target_share,
                     "promoted": [e.token for e in detail.promoted[:5]]})
        print(json.dumps(rows[-1]), file=sys.stderr)
    return handle.display_name, rows, map_s


def nag_rows(chosen: list[tuple[int, int]]) -> tuple[str, list[dict], float]:
    import itertools

    from backend.corpus.documents import iter_documents
    from backend.models import load
    from backend.nag import TargetSet, samples
    from backend.nag.neuron import NeuronConfig, neuron_detail
    from backend.nag.targets import target_profiles

    handle = load("smollm2-135m-instruct")
    config = NeuronConfig()
    targets = [TargetSet("science", tuple(samples.sample_targets("science")))]
    _, warm_s = timed(lambda: target_profiles(handle, targets, config.extract))
    pool = list(itertools.islice(iter_documents(samples.pool_path()), config.max_docs))
    n_layers, width = handle.info.n_layers, handle.info.intermediate_size
    rows = []
    for layer, neuron in chosen or [(2, 100), (n_layers // 2, width // 2), (n_layers - 1, width - 7)]:
        cfg = NeuronConfig(layer=layer, neuron=neuron)
        first, computed_s, cpu_s = timed_cpu(lambda: neuron_detail(handle, cfg, pool, targets))
        again, cached_s = timed(lambda: neuron_detail(handle, cfg, pool, targets))
        detail = first.value
        rows.append({"layer": layer, "neuron": neuron, "computed_s": computed_s, "computed_cpu_s": cpu_s,
                     "cached_s": cached_s,
                     "provenance": [first.provenance, again.provenance], "scanned_docs": detail.scanned_docs,
                     "scanned_tokens": detail.scanned_tokens,
                     "top_context": detail.contexts[0].token if detail.contexts else None,
                     "promoted": [e.token for e in detail.promoted[:5]]})
        print(json.dumps(rows[-1]), file=sys.stderr)
    return handle.display_name, rows, warm_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--heads", default="", help="LAYER.HEAD,... (default: three of the early, middle, last layers)")
    parser.add_argument("--neurons", default="", help="LAYER.NEURON,... (default: three, early to last layer)")
    parser.add_argument("--store", default="", help="reuse this store (its map and target features are then hits; "
                                                    "pick heads and neurons it has not opened)")
    args = parser.parse_args()
    os.environ["DASH_STORE"] = args.store or str(Path(tempfile.mkdtemp(prefix="drilldowns-")) / "store.duckdb")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from backend.features import load_all

    load_all()
    from backend.nag.neuron import NeuronConfig

    load_start = os.getloadavg()[0]
    mt_model, mt, map_s = mt_rows(pairs(args.heads))
    nag_model, nag, warm_s = nag_rows(pairs(args.neurons))
    chosen = "".join(f" --{k} {getattr(args, k)}" for k in ("heads", "neurons") if getattr(args, k))
    result = {"command": f".venv/bin/python bench/drilldowns_mt_nag.py --threads {args.threads}{chosen}",
              "threads": args.threads, "cpus": os.cpu_count(), "machine": platform.machine(),
              "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2),
              "targets": {"cached_s": 2.0, "computed_s": 10.0},
              "mt": {"model": mt_model, "map": "en->fr language heads, 8 prompts", "map_computed_s": map_s, "rows": mt},
              "nag": {"model": nag_model, "pool_docs": NeuronConfig().max_docs, "targets": "science",
                      "target_features_warm_s": warm_s, "rows": nag}}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
