"""Inspect's drill-downs prepared with the map, against one forward per click (issue 54 §1).

On the embedded default model at 2 torch threads, a fresh store, a prompt that is not the shipped first view (a
computed view), for the attribution map (every head) and the contribution graph (every state, every head behind an
attention edge):
- the map computed (what the page shows first);
- a click computed on its own (the per-click verb, before anything was prepared: one forward each);
- every object's drill-down in one pass (`store_drilldowns`: what the page runs right after the map);
- a click after that (a store read).
And the shipped first view (example prompt, reference set imported): whether every drill-down is stored, and a
click's read. Writes bench/results/inspect_drilldowns.json.

    .venv/bin/python bench/inspect_drilldowns.py
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="inspect-drilldowns-")) / "store.duckdb")

import torch  # noqa: E402

from bench.output import write_result  # noqa: E402
from backend.features import load_all  # noqa: E402
from backend.internals import (EXAMPLE_PROMPT, DlaConfig, Drilldowns, GraphConfig, dla, dla_drilldowns,  # noqa: E402
                               drilldowns_stored, graph, graph_drilldowns, head, node, store_drilldowns)
from backend.models import default_model_id, load  # noqa: E402
from backend.store.reference import import_reference  # noqa: E402

THREADS = 2
PROMPT = "When Mary and John went to the store, John gave a drink to"
OUT = ROOT / "bench" / "results" / "inspect_drilldowns.json"
CLICKS = 3  # clicks timed each way


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def _click(handle, drilldowns: Drilldowns, i: int):
    """The i-th object's click: a head's or a state's verb, as the page calls it."""
    if i < len(drilldowns.heads):
        return head(handle, drilldowns.heads[i])
    return node(handle, drilldowns.nodes[i - len(drilldowns.heads)])


def view(handle, name: str, map_call, wanted_of) -> dict:
    map_s, shown = timed(map_call)
    wanted = wanted_of(shown.value)
    picks = [round(k * (len(wanted) - 1) / (2 * CLICKS)) for k in range(CLICKS)]  # the first half: computed alone
    alone = []
    for i in picks:
        seconds, done = timed(lambda i=i: _click(handle, wanted, i))
        assert not done.cached
        alone.append(seconds)
    pass_s, stored = timed(lambda: store_drilldowns(handle, wanted))
    after = []
    for i in [len(wanted) - 1 - p for p in picks]:  # the second half: prepared by the pass
        seconds, done = timed(lambda i=i: _click(handle, wanted, i))
        assert done.cached, "a prepared object's click computed"
        after.append(seconds)
    click_s = statistics.median(alone)
    return {"view": name, "objects": len(wanted), "heads": len(wanted.heads), "states": len(wanted.nodes),
            "map_s": round(map_s, 3), "click_computed_median_s": round(click_s, 3),
            "pass_s": round(pass_s, 3), "pass_computed": stored.computed,
            "pass_per_object_s": round(pass_s / max(1, stored.computed), 4),
            "one_forward_per_click_over_pass": round(click_s * stored.computed / pass_s, 1),
            "click_after_pass_max_s": round(max(after), 3)}


def main() -> dict:
    torch.set_num_threads(THREADS)
    load_all()
    handle = load(default_model_id())
    info = handle.info
    load_start = os.getloadavg()[0]
    views = [view(handle, "direct logit attribution (every head)", lambda: dla(handle, DlaConfig(prompt=PROMPT)),
                  lambda r: dla_drilldowns(PROMPT, -1, info.n_layers, info.n_heads)),
             view(handle, "contribution graph (every state, every edge's heads)",
                  lambda: graph(handle, GraphConfig(prompt=PROMPT)),
                  lambda r: graph_drilldowns(PROMPT, r, info.n_heads))]
    import_reference()
    shown = graph(handle, GraphConfig()).value
    first = (graph_drilldowns(EXAMPLE_PROMPT, shown, info.n_heads)
             + dla_drilldowns(EXAMPLE_PROMPT, -1, info.n_layers, info.n_heads))
    reads = [timed(lambda i=i: _click(handle, first, i)) for i in (0, len(first.heads) - 1, len(first) - 1)]
    assert all(done.cached for _, done in reads)
    return write_result(OUT, {
        "command": ".venv/bin/python bench/inspect_drilldowns.py", "model": handle.id, "torch_threads": THREADS,
        "cores": len(os.sched_getaffinity(0)), "load_average_start": round(load_start, 2),
        "load_average_end": round(os.getloadavg()[0], 2), "prompt": PROMPT, "views": views,
        "first_view": {"objects": len(first), "all_stored": drilldowns_stored(handle, first),
                       "click_max_s": round(max(s for s, _ in reads), 3)}})


if __name__ == "__main__":
    main()
