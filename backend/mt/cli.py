"""`python -m backend mt heads|steer|ablate|evaluate ... --json`."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from backend.errors import UserError
from backend.models import default_model_id, load
from backend.mt.attribution import ATTRIBUTIONS
from backend.mt.data import builtin, parse_upload
from backend.mt.experiments import ExperimentConfig, run_experiment
from backend.mt.heads import HeadsConfig, find_heads
from backend.mt.prompts import HEAD_TYPES
from backend.mt.steering import STEER_MODES


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def _data(args):
    if not args.data:
        return builtin()
    path = Path(args.data)
    if not path.is_file():
        raise UserError(f"No such file: {path}")
    data = parse_upload(path.read_bytes(), path.name)
    for notice in data.notices:
        print(f"note: {notice}", file=sys.stderr)
    return data


def _heads_config(args, head_type: str) -> HeadsConfig:
    return HeadsConfig(src=args.src, tgt=args.tgt, head_type=head_type, n_prompts=args.prompts, k_shots=args.shots,
                       attribution=args.attribution, seed=args.seed)


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 4)


def cmd_heads(args) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    out = find_heads(handle, _heads_config(args, args.head_type), _data(args), progress=_progress)
    head_map = out.value
    return {"model": handle.display_name, "head_type": args.head_type, "pair": f"{args.src}->{args.tgt}",
            "provenance": out.provenance, "run_id": out.run_id,
            "selected": [list(h) for h in head_map.selected(args.percent)],
            "rank_correlation": _finite(head_map.rank_correlation),
            "top_k_agreement": _finite(head_map.agreement(args.percent)),
            "patch_seconds": round(head_map.patch_seconds, 1), "attribution_seconds": round(head_map.attribution_seconds, 1),
            "mean_kl": _finite(sum(head_map.kl) / len(head_map.kl)),
            "top_heads": head_map.table(args.top), "patching": head_map.patching.round(4).tolist()}


def _experiment(kind: str):
    def handler(args) -> dict:
        handle = load(args.model or default_model_id(), progress=_progress)
        rows = tuple(int(r) for r in args.rows.split(",")) if args.rows else ()
        config = ExperimentConfig(src=args.src, tgt=args.tgt, n_sentences=args.sentences, rows=rows,
                                  percent=args.percent, strength=args.strength,
                                  steer_types=tuple(t for t in args.steer_types.split(",") if t),
                                  steer_mode=args.steer_mode,
                                  ablate_type=args.ablate_type, n_random=args.random, k_shots=args.shots,
                                  heads=_heads_config(args, "language"), seed=args.seed)
        out = run_experiment(handle, kind, config, _data(args), progress=_progress)
        result = {"model": handle.display_name, "pair": f"{args.src}->{args.tgt}", "provenance": out.provenance,
                  "seconds": round(out.seconds, 1), "run_id": out.run_id, "table": out.value.table()}
        if kind in ("ablate", "evaluate"):
            result["ablation"] = out.value.ablation_summary()
        if args.outputs:
            result["outputs"] = [{"condition": c.label, "source": s, "output": o, "detected": d}
                                 for c in out.value.conditions
                                 for s, o, d in zip(c.sources, c.outputs, c.detected)]
        return result

    return handler


def _common(sub) -> None:
    sub.add_argument("--model", help="registry id (default: the configured default model)")
    sub.add_argument("--data", help="TSV/CSV/JSONL of parallel sentences (default: the built-in EN/FR/DE/ES set)")
    sub.add_argument("--src", default="en")
    sub.add_argument("--tgt", default="fr")
    sub.add_argument("--prompts", type=int, default=8, help="head-finding prompts")
    sub.add_argument("--shots", type=int, default=5, help="demonstrations per few-shot prompt")
    sub.add_argument("--attribution", default="attribution-patching", choices=list(ATTRIBUTIONS))
    sub.add_argument("--percent", type=float, default=1.0, help="share of all heads selected (0-5)")
    sub.add_argument("--seed", type=int, default=0)


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("mt", help="MT heads: head maps, steering, ablation, evaluation")
    actions = parser.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("heads", help="L x H head map by activation patching + attribution")
    _common(sub)
    sub.add_argument("--head-type", default="language", choices=list(HEAD_TYPES))
    sub.add_argument("--top", type=int, default=10, help="rows of the top-heads table")
    sub.set_defaults(handler=cmd_heads)
    for kind, text in (("steer", "instruction-free vs steered vs instruction baseline"),
                       ("ablate", "few-shot with selected heads vs random heads zeroed"),
                       ("evaluate", "the full evaluation table on held-out sentences")):
        sub = actions.add_parser(kind, help=text)
        _common(sub)
        sub.add_argument("--sentences", type=int, default=10, help="held-out sentences (first n of 'evaluate')")
        sub.add_argument("--rows", default="", help="explicit comma-separated data rows instead")
        sub.add_argument("--strength", type=float, default=3.0)
        sub.add_argument("--steer-types", default="language,translation")
        sub.add_argument("--steer-mode", default="add", choices=list(STEER_MODES))
        sub.add_argument("--ablate-type", default="language", choices=list(HEAD_TYPES))
        sub.add_argument("--random", type=int, default=3, help="random-head control draws")
        sub.add_argument("--outputs", action="store_true", help="include every generated sentence")
        sub.set_defaults(handler=_experiment(kind))
