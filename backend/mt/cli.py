"""`python -m backend mt heads|head|steer|ablate|evaluate ... --json`."""
from __future__ import annotations

import math
import sys
from pathlib import Path

from backend.cli.params import add_flags, flag_values, int_list
from backend.mt.selection import head_count
from backend.errors import UserError
from backend.models import default_model_id, load
from backend.mt.data import builtin, parse_upload
from backend.mt.experiments import EXPERIMENTS, ExperimentConfig, run_experiment
from backend.mt.head_detail import HeadDetailConfig, check_example, head_detail
from backend.mt.heads import HeadsConfig, find_heads
from backend.params import default_of, help_of

# field -> flag (the flag names predate the configs; they stay)
HEADS_FLAGS = {"src": "--src", "tgt": "--tgt", "n_prompts": "--prompts", "k_shots": "--shots",
               "attribution": "--attribution", "seed": "--seed"}
EXPERIMENT_FLAGS = {"n_sentences": "--sentences", "strength": "--strength", "steer_mode": "--steer-mode",
                    "steer_positions": "--steer-positions", "steer_layers": "--steer-layers",
                    "ablate_type": "--ablate-type", "n_random": "--random"}


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
    return HeadsConfig(head_type=head_type, **flag_values(args, HeadsConfig, HEADS_FLAGS))


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 4)


def _finite_all(value):
    """Floats rounded, NaN as null, through nested dicts (the headline)."""
    if isinstance(value, dict):
        return {k: _finite_all(v) for k, v in value.items()}
    return _finite(value) if isinstance(value, float) else value


def cmd_heads(args) -> dict:
    head_count(1, 1, args.percent)  # the selection share, checked before minutes of patching
    config = _heads_config(args, args.head_type)
    handle = load(args.model or default_model_id(), progress=_progress)
    out = find_heads(handle, config, _data(args), progress=_progress)
    head_map = out.value
    return {"model": handle.display_name, "head_type": args.head_type, "pair": f"{args.src}->{args.tgt}",
            "provenance": out.provenance, "run_id": out.run_id,
            "selected": [list(h) for h in head_map.selected(args.percent)],
            "rank_correlation": _finite(head_map.rank_correlation),
            "top_k_agreement": _finite(head_map.agreement(args.percent)),
            "patch_seconds": round(head_map.patch_seconds, 1), "attribution_seconds": round(head_map.attribution_seconds, 1),
            "mean_kl": _finite(sum(head_map.kl) / len(head_map.kl)),
            "top_heads": head_map.table(args.top), "patching": head_map.patching.round(4).tolist()}


def cmd_head(args) -> dict:
    """One head's drill-down (the page's click on a map cell)."""
    if args.pair:
        src, _, tgt = args.pair.partition("-")
        if not src or not tgt:
            raise UserError(f"--pair takes two language codes such as en-de, got {args.pair!r}.")
        args.src, args.tgt = src, tgt
    config = HeadDetailConfig(heads=_heads_config(args, args.head_type),
                              **flag_values(args, HeadDetailConfig, DETAIL_FLAGS))  # checked before the model loads
    data = _data(args)
    check_example(config, data)  # the example index too
    handle = load(args.model or default_model_id(), progress=_progress)
    out = head_detail(handle, config, data, progress=_progress)
    return {**out.value.to_json(), "provenance": out.provenance, "run_id": out.run_id}


DETAIL_FLAGS = {"layer": "--layer", "head": "--head", "example": "--example", "top_k": "--top-k"}


def _experiment(kind: str):
    def handler(args) -> dict:
        values = flag_values(args, ExperimentConfig, (*EXPERIMENT_FLAGS, "src", "tgt", "percent", "k_shots", "seed"))
        config = ExperimentConfig(rows=int_list(args.rows, "--rows"),
                                  steer_types=tuple(t for t in args.steer_types.split(",") if t),
                                  heads=_heads_config(args, "language"), **values)  # checked before the model loads
        handle = load(args.model or default_model_id(), progress=_progress)
        out = run_experiment(handle, kind, config, _data(args), progress=_progress)
        result = {"model": handle.display_name, "pair": f"{args.src}->{args.tgt}", "provenance": out.provenance,
                  "seconds": round(out.seconds, 1), "run_id": out.run_id, "table": out.value.table(),
                  "headline": _finite_all(out.value.headline())}
        summary = out.value.ablation_summary()  # empty for an experiment without ablations
        if summary:
            result["ablation"] = summary
        if args.outputs:
            result["outputs"] = [{"condition": c.label, "source": s, "output": o, "detected": d}
                                 for c in out.value.conditions
                                 for s, o, d in zip(c.sources, c.outputs, c.detected)]
        return result

    return handler


def _common(sub) -> None:
    sub.add_argument("--model", help="registry id (default: the configured default model)")
    sub.add_argument("--data", help="TSV/CSV/JSONL of parallel sentences (default: the built-in EN/FR/DE/ES set)")
    add_flags(sub, HeadsConfig, HEADS_FLAGS)
    add_flags(sub, ExperimentConfig, {"percent": "--percent"})


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("mt", help="MT heads: head maps, steering, ablation, evaluation")
    actions = parser.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("heads", help="L x H head map by activation patching + attribution")
    _common(sub)
    add_flags(sub, HeadsConfig, {"head_type": "--head-type"})
    sub.add_argument("--top", type=int, default=10, help="rows of the top-heads table")
    sub.set_defaults(handler=cmd_heads)
    sub = actions.add_parser("head", help="one head of a map: attention, vocabulary projection, patching per prompt")
    _common(sub)
    add_flags(sub, HeadsConfig, {"head_type": "--head-type"})
    add_flags(sub, HeadDetailConfig, DETAIL_FLAGS)
    sub.add_argument("--pair", default="", help="SRC-TGT language codes, e.g. en-de (instead of --src/--tgt)")
    sub.set_defaults(handler=cmd_head)
    for experiment in EXPERIMENTS:
        sub = actions.add_parser(experiment.name, help=experiment.help)
        _common(sub)
        add_flags(sub, ExperimentConfig, EXPERIMENT_FLAGS)
        sub.add_argument("--rows", default="", help=f"{help_of(ExperimentConfig, 'rows')}, comma-separated")
        sub.add_argument("--steer-types", default=",".join(default_of(ExperimentConfig, "steer_types")),
                         help=f"{help_of(ExperimentConfig, 'steer_types')}, comma-separated (default: %(default)s)")
        sub.add_argument("--outputs", action="store_true", help="include every generated sentence")
        sub.set_defaults(handler=_experiment(experiment.name))
