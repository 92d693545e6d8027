"""`python -m backend nag extract|rank|graph|neuron|deactivate|methods ... --json`.

Targets: `--target-domain D` (the shipped sample targets of domain D; repeat for multi-target) and/or
`--targets FILE` (one target set per file, named by the file stem). The pool defaults to the shipped
sample pool; `rank` writes a Parquet of scores (`--out`).
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

from backend.cli.params import add_flags, flag_values
from backend.corpus.cli import ENGINE_FLAGS, add_engine_flags
from backend.corpus.documents import chunks, iter_documents
from backend.models import default_model_id, load
from backend.nag import samples
from backend.nag.deactivate import DeactivationConfig
from backend.nag.evaluate import DEFAULT_KS, deactivation_check, precision_curve
from backend.nag.extract import ExtractConfig
from backend.nag.featurecache import features_for
from backend.nag.graph import GraphConfig, build_graph
from backend.nag.impact import IMPACTS
from backend.nag.neuron import NeuronConfig, neuron_detail
from backend.nag.rank import SLICE_DOCS, RankConfig, rank
from backend.nag.scorers import SCORERS
from backend.nag.targets import TargetSet, target_profiles


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def _target_sets(args: argparse.Namespace) -> list[TargetSet]:
    sets = [TargetSet(d, tuple(samples.sample_targets(d))) for d in args.target_domain or []]
    for path in args.targets or []:
        sets.append(TargetSet(Path(path).stem, tuple(iter_documents(path))))
    if not sets:
        sets = [TargetSet(samples.domains()[0], tuple(samples.sample_targets(samples.domains()[0])))]
    return sets


EXTRACT_FLAGS = ("impact", "top_k", "max_length")
RANK_FLAGS = ("method", "budget", "quality_weight", "seed")
GRAPH_FLAGS = {"layer_min": "--layer-min", "layer_max": "--layer-max", "min_weight": "--min-weight",
               "min_edge_weight": "--min-edge-weight", "max_nodes_per_layer": "--max-nodes",
               "max_nodes": "--max-nodes-total"}
DEACTIVATION_FLAGS = ("share", "n_random", "seed")



def _extract_config(args: argparse.Namespace) -> ExtractConfig:
    return ExtractConfig(**flag_values(args, ExtractConfig, EXTRACT_FLAGS))


def cmd_list(args: argparse.Namespace) -> dict:
    return {"impacts": {m.name: m.help for m in IMPACTS}, "rankers": {s.name: s.help for s in SCORERS},
            "sample_domains": samples.domains()}


def cmd_extract(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = _extract_config(args)
    start, n_docs, tokens, hits, rows = time.perf_counter(), 0, 0, 0, []
    for part in chunks(iter_documents(args.corpus), SLICE_DOCS):
        batch = features_for(handle, part, config, _progress)
        n_docs, hits = n_docs + len(part), hits + batch.hits
        tokens += sum(f.used_tokens for f in batch.features)
        if args.out:
            rows += [{"id": d.id, "layer": layer, "rank": r, "neuron": int(n)}
                     for d, f in zip(part, batch.features) for layer in range(f.top.shape[0])
                     for r, n in enumerate(f.top[layer, :config.top_k])]
    seconds = time.perf_counter() - start
    if args.out:
        import pandas as pd

        pd.DataFrame(rows).to_parquet(args.out, index=False)
    return {"model": handle.display_name, "documents": n_docs, "tokens_read": tokens, "cache_hits": hits,
            "seconds": round(seconds, 2), "docs_per_s": round(n_docs / max(seconds, 1e-9), 2),
            "out": args.out}


def cmd_rank(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = RankConfig(**flag_values(args, RankConfig, EXTRACT_FLAGS + RANK_FLAGS))
    job = None
    if args.engine == "local":
        result = rank(handle, args.pool, _target_sets(args), config, progress=_progress)
    else:  # features as a corpus job on Ray (resumable), then ranked from its Parquet shards
        from backend.corpus.engine import EngineConfig
        from backend.nag.corpus_job import feature_job, rank_job

        job = feature_job(handle, args.pool, config, EngineConfig(**flag_values(args, EngineConfig, ENGINE_FLAGS)),
                          args.batch_size, _progress)
        result = rank_job(handle, job.job_id, _target_sets(args), config, _progress)
    ranking = result.value
    frame = ranking.to_frame()
    frame.to_parquet(args.out, index=False)
    out = {"model": ranking.model, "method": config.method, "targets": list(ranking.target_names),
           "documents": len(ranking.ids), "selected": int((ranking.selected_by >= 0).sum()),
           "budget_tokens": ranking.budget_tokens, "used_tokens": list(ranking.used_tokens),
           "provenance": result.provenance, "scores_parquet": args.out, "notices": list(ranking.notices),
           "top": frame.head(args.show).drop(columns=["preview"]).to_dict(orient="records")}
    if ranking.labelled and set(ranking.target_names) & set(ranking.domains):
        out["precision_at_k"] = precision_curve(ranking, DEFAULT_KS)
    if job is not None:
        out["job"] = job.to_json()
    return out


def cmd_graph(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    profiles = target_profiles(handle, _target_sets(args), _extract_config(args), _progress)
    graph = build_graph(profiles, args.target, GraphConfig(**flag_values(args, GraphConfig, GRAPH_FLAGS)))
    nodes = [{"layer": int(l), "neuron": int(n), "weight": round(float(w), 4)}
             for l, n, w in zip(graph.layers, graph.neurons, graph.weights)]
    return {"model": handle.display_name, "target": graph.target, "target_documents": graph.n_targets,
            "nodes": len(nodes), "edges": len(graph.edge_src),
            "heaviest": sorted(nodes, key=lambda r: -r["weight"])[:args.show], "notices": list(profiles.notices)}


NEURON_FLAGS = {"layer": "--layer", "neuron": "--neuron", "max_docs": "--docs", "contexts": "--contexts",
                "window": "--window", "top_tokens": "--top-tokens", "bins": "--bins"}


def cmd_neuron(args: argparse.Namespace) -> dict:
    """One neuron's drill-down (the page's click on a graph node or a profile cell)."""
    config = NeuronConfig(**flag_values(args, NeuronConfig, (*NEURON_FLAGS, *EXTRACT_FLAGS)))
    handle = load(args.model or default_model_id(), progress=_progress)
    pool = list(itertools.islice(iter_documents(args.pool), config.max_docs))
    out = neuron_detail(handle, config, pool, _target_sets(args), _progress)
    return {**out.value.to_json(), "provenance": out.provenance, "run_id": out.run_id}


def cmd_deactivate(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    heldout = list(iter_documents(args.heldout)) if args.heldout else samples.heldout()
    result = deactivation_check(handle, _target_sets(args), heldout, _extract_config(args),
                                DeactivationConfig(**flag_values(args, DeactivationConfig, DEACTIVATION_FLAGS)),
                                args.target, _progress)
    d = result.value
    return {"model": d.model, **d.summary(), "provenance": result.provenance,
            "per_domain": [{"domain": dom, "base": round(float(b), 4), "nag": round(float(n), 4),
                            "random": round(float(r), 4)}
                           for dom, b, n, r in zip(d.domains, d.base, d.nag, d.random.mean(axis=0))]}


def _common(sub: argparse.ArgumentParser, targets: bool = True) -> None:
    sub.add_argument("--model", help="registry id (default: the configured default model)")
    add_flags(sub, ExtractConfig, EXTRACT_FLAGS)
    if targets:
        sub.add_argument("--target-domain", action="append", help="sample target domain (repeat: multi-target)")
        sub.add_argument("--targets", action="append", help="target examples file (repeat: multi-target)")


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("nag", help="neuron-activated graph ranking for target-oriented data selection")
    actions = parser.add_subparsers(dest="action", required=True)
    # "list", as every feature lists its variants; "methods" stays as an alias for earlier command lines.
    actions.add_parser("list", aliases=["methods"], help="impact types, ranking methods, sample domains").set_defaults(
        handler=cmd_list)
    sub = actions.add_parser("extract", help="top-K neurons per layer of every document (cached per document)")
    _common(sub, targets=False)
    sub.add_argument("--corpus", default=str(samples.pool_path()), help="JSONL/CSV/Parquet/TXT")
    sub.add_argument("--out", help="write (id, layer, rank, neuron) rows to this Parquet file")
    sub.set_defaults(handler=cmd_extract)
    sub = actions.add_parser("rank", help="rank a pool against target sets, select a token budget")
    _common(sub)
    sub.add_argument("--pool", default=str(samples.pool_path()),
                     help="candidate corpus (JSONL/CSV/Parquet/TXT); with --engine ray also a directory or a glob of "
                          "JSONL/Parquet/TXT shards")
    add_flags(sub, RankConfig, RANK_FLAGS)
    add_engine_flags(sub)
    sub.add_argument("--out", default="nag-scores.parquet", help="Parquet file of scores")
    sub.add_argument("--show", type=int, default=10, help="rows of the ranking in the output")
    sub.set_defaults(handler=cmd_rank)
    sub = actions.add_parser("graph", help="the neuron-activated graph of a target set")
    _common(sub)
    sub.add_argument("--target", type=int, default=0, help="which target set (multi-target)")
    add_flags(sub, GraphConfig, GRAPH_FLAGS)
    sub.add_argument("--show", type=int, default=10)
    sub.set_defaults(handler=cmd_graph)
    sub = actions.add_parser("neuron", help="one neuron: top-activating pool contexts, histogram, logit effects, "
                                            "where it fires among the targets")
    _common(sub)
    sub.add_argument("--pool", default=str(samples.pool_path()), help="candidate corpus (JSONL/CSV/Parquet/TXT)")
    add_flags(sub, NeuronConfig, NEURON_FLAGS)
    sub.set_defaults(handler=cmd_neuron)
    sub = actions.add_parser("deactivate", help="loss increase after zeroing NAG vs random neurons")
    _common(sub)
    sub.add_argument("--target", type=int, default=0)
    sub.add_argument("--heldout", help="labelled held-out documents (default: the sample held-out set)")
    add_flags(sub, DeactivationConfig, DEACTIVATION_FLAGS)
    sub.set_defaults(handler=cmd_deactivate)
