"""Write the drill-downs of the shipped first views (data/reference/*_drilldowns.jsonl.gz), so a click on any object
of a page's first view on a fresh install is a store read.

For each page, the first view's shipped rows are imported into a private store, the view is read back from it
(keyed exactly as the page asks), and every object it shows gets its drill-down computed in one pass and exported:
- inspect: every head of the attribution map and every state and edge-head of the contribution graph
  (backend.internals.drilldowns; embedded default model, example prompt);
- fp8: every head of the bounds heatmap (backend.fp8.head.store_heads);
- disagreement: every position of both rollouts of the shipped trace (one teacher-forced pass per model,
  `position-topk`, then each position read from it).

    HF_HUB_OFFLINE=1 nice -n 15 .venv/bin/python scripts/first_view_drilldowns.py [--only inspect,fp8,disagreement]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
_TMP = Path(tempfile.mkdtemp(prefix="first-view-drilldowns-"))
os.environ["DASH_STORE"] = str(_TMP / "store.duckdb")  # a private store: only the drill-downs are exported from it

import torch  # noqa: E402

from backend.features import load_all  # noqa: E402
from backend.models import default_model_id, load  # noqa: E402
from backend.store.codec import loads  # noqa: E402
from backend.store.reference import export_reference, import_reference  # noqa: E402
from backend.store.reference_files import REFERENCE_DIR, read_reference  # noqa: E402

OUT = {name: REFERENCE_DIR / f"{name}_drilldowns.jsonl.gz" for name in ("inspect", "fp8", "disagreement")}


def _printed(name: str):
    last = [-1.0]

    def progress(fraction: float, message: str) -> None:
        if fraction - last[0] >= 0.1 or fraction >= 1.0:
            last[0] = fraction
            print(f"  {name} [{fraction:.0%}] {message}", file=sys.stderr)
    return progress


def _shipped(computed):
    """A first view's result, which must come from the shipped rows (else the page's defaults and the reference
    set disagree, and drill-downs of another view would be written)."""
    if not computed.cached:
        raise SystemExit("a first view is not in the shipped reference set: refresh it first (bench/first_open.py "
                         "--export-reference, docs/architecture.md)")
    return computed.value


def inspect_drilldowns() -> dict:
    from backend.internals import EXAMPLE_PROMPT, DlaConfig, GraphConfig, dla, graph
    from backend.internals.drilldowns import dla_drilldowns, graph_drilldowns, store_drilldowns

    handle = load(default_model_id())
    info = handle.info
    shown = _shipped(graph(handle, GraphConfig())), _shipped(dla(handle, DlaConfig()))
    wanted = (graph_drilldowns(EXAMPLE_PROMPT, shown[0], info.n_heads)
              + dla_drilldowns(EXAMPLE_PROMPT, DlaConfig().position, info.n_layers, info.n_heads))
    done = store_drilldowns(handle, wanted, _printed("inspect"))
    written = export_reference([handle.fingerprint], OUT["inspect"], actions=["inspect:head", "inspect:node"])
    return {"heads": len(wanted.heads), "states": len(wanted.nodes), **done.to_json(), "written": written}


def fp8_drilldowns() -> dict:
    from backend.fp8 import BoundsConfig
    from backend.fp8.bounds import bounds
    from backend.fp8.head import HeadConfig, store_heads

    handle = load(default_model_id())
    result = _shipped(bounds(handle, BoundsConfig()))
    layers, heads = result.bound.shape
    done = store_heads(handle, [HeadConfig(layer, h, BoundsConfig()) for layer in range(layers) for h in range(heads)],
                       _printed("fp8"))
    written = export_reference([handle.fingerprint], OUT["fp8"], actions=["fp8:head"])
    return {"heads": layers * heads, "hits": done.hits, "computed": done.computed, "written": written}


def disagreement_drilldowns() -> dict:
    from backend.disagreement import TraceConfig, load_pair, trace
    from backend.disagreement.eopd import EopdParams
    from backend.disagreement.pair import DEFAULT_REASONING_ID
    from backend.disagreement.position import PositionConfig, TopKKey, position, rollout_topk

    pair = load_pair(default_model_id(), DEFAULT_REASONING_ID)
    wanted = ("disagreement", "trace", pair.ref.fingerprint)
    shipped = [row for path in REFERENCE_DIR.glob("*.jsonl.gz") for row in read_reference(path)
               if (row["feature"], row["action"], row["fingerprint"]) == wanted]
    positions = 0
    for row in shipped:
        params = json.loads(row["params"])
        config = TraceConfig(params["question"], params["answer"], params["max_new_tokens"],
                             EopdParams(**params["eopd"]))
        assert trace.store_key(pair, config) == row["key"], "the shipped trace is keyed as the page asks"
        traced = loads(row["payload"])
        for rollout in (traced.base, traced.reasoning):
            rollout_topk(pair, TopKKey(config, rollout.source, 10), _printed(f"trace {rollout.source}"))
            for i in range(rollout.length):  # each read from the stored top-k: no forward
                position(pair, PositionConfig(config, i, rollout.source, top_k=10))
            positions += rollout.length
    written = export_reference([pair.ref.fingerprint], OUT["disagreement"],
                               actions=["disagreement:position", "disagreement:position-topk"])
    return {"traces": len(shipped), "positions": positions, "written": written}


PARTS = {"inspect": inspect_drilldowns, "fp8": fp8_drilldowns, "disagreement": disagreement_drilldowns}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated pages (default: all)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: steady under a shared CPU)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load_all()
    # the shipped first views (not the drill-downs written before), read back exactly as a fresh install has them
    views = _TMP / "views"
    views.mkdir()
    for path in REFERENCE_DIR.glob("*.jsonl.gz"):
        if path not in OUT.values():
            shutil.copy(path, views / path.name)
    import_reference(views)
    report = {}
    for name in args.only.split(","):
        start = time.perf_counter()
        report[name] = {**PARTS[name](), "seconds": round(time.perf_counter() - start, 1),
                        "kB": round(OUT[name].stat().st_size / 1024, 1)}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
