"""Ship the drill-downs of every object the MT-heads and NAG first views show (issue 54 §1: a first click never
waits for a model), one reference file per page:

- data/reference/mt_head_drilldowns.jsonl.gz: every head of the MT heads page's first map (the translator model,
  the page's default settings), read on its first prompt (the drill-down's default);
- data/reference/nag_neuron_drilldowns.jsonl.gz: every neuron of the NAG Graph tab's first graph and of the Profile
  tab's first heatmap (the default model, the first sample domain, the page's default ranking settings,
  `FIRST_GRAPH`, `PROFILE_TOP`).

Each is computed the way the page prepares them (`map_head_details`, `neuron_details`: one pass for all), in a
fresh store holding the shipped reference artifacts, whose first-view map and target features must be hits there
(else the first view is not the shipped one and the script stops). Run it after changing either drill-down's code
or a first view's defaults:

    .venv/bin/python scripts/mt_nag_drilldowns.py [--only mt|nag]
"""
from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REFERENCE = ROOT / "data" / "reference"
MT_FILE = REFERENCE / "mt_head_drilldowns.jsonl.gz"
NAG_FILE = REFERENCE / "nag_neuron_drilldowns.jsonl.gz"


def mt_first_view():
    """(handle, the first map's config, data) as the MT heads page opens (pages/mt_heads.py)."""
    from app.model_choice import TRANSLATOR
    from backend.models import load
    from backend.mt import HeadsConfig, builtin, fit_shots
    from backend.params import default_of

    handle, data = load(TRANSLATOR), builtin()
    src = data.languages[0]
    shots = fit_shots(handle, data, src, "fr", default_of(HeadsConfig, "k_shots"))
    return handle, HeadsConfig(src=src, tgt="fr", k_shots=shots), data


def nag_first_view(model_id: str | None = None):
    """(handle, the neuron configs of the first graph then of the first profile heatmap, the pool's first documents,
    target sets) as the NAG page opens on `model_id` (default: the default model)."""
    from app.figures.nag import profile_neurons
    from app.ui.nag_drilldown import first_graph, neuron_config
    from backend.corpus.documents import iter_documents
    from backend.models import default_model_id, load
    from backend.nag import RankConfig, TargetSet, build_graph, samples, target_profiles
    from backend.nag.neuron import NeuronConfig

    handle = load(model_id or default_model_id())
    rank_config = RankConfig()
    targets = [TargetSet(d, tuple(samples.sample_targets(d))) for d in samples.domains()[:1]]
    profiles = target_profiles(handle, targets, rank_config.extract)
    graph = build_graph(profiles, 0, first_graph(handle.info.n_layers))
    shown = list(zip(graph.layers.tolist(), graph.neurons.tolist()))
    shown += [(layer, int(n)) for layer, row in enumerate(profile_neurons(profiles)) for n in row]
    configs = [neuron_config(int(layer), int(neuron), rank_config) for layer, neuron in dict.fromkeys(shown)]
    docs = list(itertools.islice(iter_documents(samples.pool_path()), NeuronConfig().max_docs))
    return handle, configs, docs, targets


def _export(handle, action: str, out: Path) -> None:
    from backend.store.reference import export_reference

    rows = export_reference([handle.fingerprint], out, actions=[action])
    print(f"{out.relative_to(ROOT)}: {rows} rows, {out.stat().st_size / 1e6:.2f} MB", file=sys.stderr)


def ship_mt() -> None:
    from backend.mt import find_heads
    from backend.mt.head_detail import map_head_details

    handle, heads, data = mt_first_view()
    if not find_heads(handle, heads, data).cached:
        sys.exit("the MT heads first map is not a shipped reference artifact: refresh data/reference first")
    start = time.perf_counter()
    done = map_head_details(handle, heads, data)
    print(f"mt: {done.computed} heads in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    _export(handle, "mt:head", MT_FILE)


def ship_nag() -> None:
    from backend.nag.neuron import neuron_details
    from backend.store.artifacts import typical_seconds

    handle, configs, docs, targets = nag_first_view()
    if typical_seconds("nag", "doc-features", handle.fingerprint) is None:
        sys.exit("the NAG first view's target features are not shipped: refresh data/reference first")
    start = time.perf_counter()
    done = neuron_details(handle, configs, docs, targets)
    print(f"nag: {done.computed} neurons in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    _export(handle, "nag:neuron", NAG_FILE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("mt", "nag"), default="")
    args = parser.parse_args()
    os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="mt-nag-drilldowns-")) / "store.duckdb")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from backend.features import load_all
    from backend.store.reference import import_reference

    load_all()
    # the first views' maps and features: hits, as on a fresh install (not this script's own files: a stale row would
    # be exported again beside its fresh one)
    others = Path(tempfile.mkdtemp(prefix="reference-"))
    for path in REFERENCE.glob("*.jsonl.gz"):
        if path not in (MT_FILE, NAG_FILE):
            shutil.copy(path, others)
    import_reference(others)
    if args.only in ("", "mt"):
        ship_mt()
    if args.only in ("", "nag"):
        ship_nag()


if __name__ == "__main__":
    main()
