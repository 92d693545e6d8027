"""First-click times of the MT-heads and NAG drill-downs on the embedded models (issue 54 §1: a click on a first
view's object never waits for a model, <= 2 s; on a computed view <= 2 s once it is shown).

A fresh temporary store with the shipped reference artifacts imported (what a fresh install has):

- Reference first view: every head of the MT heads page's first map (Gemma 3 270M, EN->FR language heads) and
  every neuron of the NAG Graph tab's first graph (SmolLM2-135M, targets 'science'), each clicked once, as the page
  calls the verb (store lookup included): the first click on each.
- A computed view, not shipped: the MT translation-heads map and the NAG graph of the second sample domain. The map
  (or the targets' profiles) is computed first, untimed as a click, as the page shows it before any click. Then one
  object is clicked before anything is prepared (what a click costs when it comes before the preparation ends:
  computed alone), then the page's preparation pass (`map_head_details` / `neuron_details`: every object of the view
  in one pass) is timed, then a few objects are clicked: store reads. For MT the preparation runs as the page runs
  it (a background thread at its lowered priority) and another head is clicked while it runs: what a click costs
  when it comes during the preparation (the click computes its own head at once, beside it).

Each computed step also records its CPU seconds: on cores shared with other jobs, CPU seconds / threads is what the
wall time would be on idle cores. The times are of the verb as the page calls it, not of drawing.

Usage: .venv/bin/python bench/drilldowns_mt_nag.py [--threads 2]
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "results" / "drilldowns_mt_nag.json"
CLICKED = 3  # objects of a computed view clicked after its preparation


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


def spread(seconds: list[float], cached: list[bool]) -> dict:
    return {"objects": len(seconds), "cached": sum(cached), "median_s": round(statistics.median(seconds), 4),
            "max_s": round(max(seconds), 4), "min_s": round(min(seconds), 4)}


def clicks(objects: list, click) -> tuple[dict, list[dict]]:
    """Click each object once: (the spread, one row per object)."""
    rows = []
    for obj in objects:
        out, seconds = timed(lambda: click(obj))
        rows.append({"object": obj, "seconds": seconds, "cached": out.cached})
    return spread([r["seconds"] for r in rows], [r["cached"] for r in rows]), rows


def during_preparation(prepare, click, settle_s: float = 3.0) -> tuple:
    """(the preparation's result, its wall seconds, the CPU seconds of the process while it ran (the click's
    included), the click's row): the preparation in a thread at the page's background priority (app.ui.priority),
    the click `settle_s` later, while it runs."""
    from app.ui.priority import background_priority

    box = {}

    def prepare_in_background():
        with background_priority():
            box["out"], box["seconds"] = timed(prepare)

    cpu = time.process_time()
    thread = threading.Thread(target=prepare_in_background)
    thread.start()
    time.sleep(settle_s)  # the preparation is past its store reads, patching
    out, seconds = timed(click)
    running = thread.is_alive()
    thread.join()
    return box["out"], box["seconds"], round(time.process_time() - cpu, 3), {
        "seconds": seconds, "cached": out.cached, "preparation_still_running": running}


def mt_part() -> dict:
    from backend.mt import find_heads
    from backend.mt.head_detail import HeadDetailConfig, head_detail, map_head_details
    from scripts.mt_nag_drilldowns import mt_first_view

    handle, heads, data = mt_first_view()
    first_map = find_heads(handle, heads, data)
    every = [(layer, head) for layer in range(handle.info.n_layers) for head in range(handle.info.n_heads)]
    click = lambda h: lambda obj: head_detail(handle, HeadDetailConfig(heads=h, layer=obj[0], head=obj[1]), data)  # noqa: E731
    reference, _ = clicks(every, click(first_map.value.config))
    other = dataclasses.replace(heads, head_type="translation")
    _, map_s, map_cpu = timed_cpu(lambda: find_heads(handle, other, data))
    computed_map = find_heads(handle, other, data).value.config
    n_layers, n_heads = handle.info.n_layers, handle.info.n_heads
    cold = (n_layers // 2, 1)
    alone, alone_s, alone_cpu = timed_cpu(lambda: click(computed_map)(cold))
    busy = (n_layers - 2, n_heads - 2)
    prepared, prepare_s, prepare_cpu, busy_click = during_preparation(
        lambda: map_head_details(handle, computed_map, data), lambda: click(computed_map)(busy))
    after, after_rows = clicks([(n_layers // 3, 0), (n_layers - 1, n_heads - 1), (1, n_heads // 2)][:CLICKED],
                               click(computed_map))
    print(json.dumps({"mt_reference": reference, "after": after}), file=sys.stderr)
    return {"model": handle.display_name, "first_map": f"{heads.src}->{heads.tgt} language heads, "
                                                      f"{heads.n_prompts} prompts",
            "first_map_cached": first_map.cached, "reference_first_clicks": reference,
            "computed": {"map": f"{heads.src}->{heads.tgt} translation heads", "map_s": map_s, "map_cpu_s": map_cpu,
                         "click_before_preparation": {"object": list(cold), "seconds": alone_s, "cpu_s": alone_cpu,
                                                      "cached": alone.cached},
                         "preparation": {"objects": len(prepared.values), "computed": prepared.computed,
                                         "seconds": prepare_s, "cpu_s": prepare_cpu},
                         "click_during_preparation": {"object": list(busy), **busy_click},
                         "clicks_after": after, "click_rows": after_rows}}


def nag_part() -> dict:
    from app.ui.nag_drilldown import first_graph, neuron_config
    from backend.nag import RankConfig, TargetSet, build_graph, samples, target_profiles
    from backend.nag.neuron import neuron_detail, neuron_details
    from scripts.mt_nag_drilldowns import nag_first_view

    handle, configs, docs, targets = nag_first_view()
    click = lambda ts: lambda c: neuron_detail(handle, c, docs, ts)  # noqa: E731
    reference, _ = clicks(configs, click(targets))
    domain = samples.domains()[1]
    other = [TargetSet(domain, tuple(samples.sample_targets(domain)))]
    rank_config = RankConfig()
    profiles, profiles_s, profiles_cpu = timed_cpu(lambda: target_profiles(handle, other, rank_config.extract))
    graph = build_graph(profiles, 0, first_graph(handle.info.n_layers))
    shown = [neuron_config(int(layer), int(neuron), rank_config)
             for layer, neuron in zip(graph.layers.tolist(), graph.neurons.tolist())]
    cold = shown[len(shown) // 2]
    alone, alone_s, alone_cpu = timed_cpu(lambda: click(other)(cold))
    prepared, prepare_s, prepare_cpu = timed_cpu(lambda: neuron_details(handle, shown, docs, other))
    after, after_rows = clicks([shown[0], shown[-1], shown[len(shown) // 3]][:CLICKED], click(other))
    print(json.dumps({"nag_reference": reference, "after": after}), file=sys.stderr)
    return {"model": handle.display_name, "pool_docs": len(docs), "first_targets": targets[0].name,
            "reference_first_clicks": reference,
            "computed": {"targets": domain, "profiles_s": profiles_s, "profiles_cpu_s": profiles_cpu,
                         "click_before_preparation": {"object": [cold.layer, cold.neuron], "seconds": alone_s,
                                                      "cpu_s": alone_cpu, "cached": alone.cached},
                         "preparation": {"objects": len(prepared.values), "computed": prepared.computed,
                                         "seconds": prepare_s, "cpu_s": prepare_cpu},
                         "clicks_after": after,
                         "click_rows": [{**r, "object": [r["object"].layer, r["object"].neuron]} for r in after_rows]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="drilldowns-")) / "store.duckdb")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from backend.features import load_all
    from backend.store.reference import import_reference

    load_all()
    imported = import_reference()  # a fresh install: the shipped reference artifacts in the store
    load_start = os.getloadavg()[0]
    mt = mt_part()
    nag = nag_part()
    result = {"command": f".venv/bin/python bench/drilldowns_mt_nag.py --threads {args.threads}",
              "threads": args.threads, "cpus": os.cpu_count(), "machine": platform.machine(),
              "reference_rows": imported.imported,
              "load_average_start": round(load_start, 2), "load_average_end": round(os.getloadavg()[0], 2),
              "targets": {"first_click_s": 2.0, "computed_view_s": 5.0}, "mt": mt, "nag": nag}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
