"""`python -m backend runs list|export|delete`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from backend.store import RunFilter, delete_runs, export_runs, list_runs, preview_delete
from backend.cli.params import add_flags
from backend.errors import UserError
from backend.store.runs import EXPORT_FORMATS


def _filter(args: argparse.Namespace) -> RunFilter:
    return RunFilter(feature=args.feature, model_id=args.model, limit=args.limit)


def cmd_list(args: argparse.Namespace) -> list[dict]:
    frame = list_runs(_filter(args))
    frame["created"] = frame["created"].astype(str)
    return frame.drop(columns=["params"]).to_dict(orient="records") if not args.json else frame.to_dict(orient="records")


def cmd_export(args: argparse.Namespace) -> dict:
    data = export_runs(list_runs(_filter(args)), args.format)
    if args.output == "-":
        sys.stdout.buffer.write(data)
        return {}
    target = Path(args.output)
    if not target.parent.is_dir():
        raise UserError(f"Cannot write {args.output}: the folder {target.parent} does not exist.")
    try:
        target.write_bytes(data)
    except OSError as err:
        raise UserError(f"Cannot write {args.output}: {err.strerror}.") from None
    return {"written": args.output, "bytes": len(data)}


def cmd_delete(args: argparse.Namespace) -> dict:
    """Any session's runs (the CLI has none of its own); an unknown id deletes nothing."""
    plan = preview_delete(args.run_id)
    if plan.missing:
        raise UserError(f"No run {', '.join(plan.missing)} in the store; nothing was deleted "
                        "(`python -m backend runs list` shows the run ids).")
    return (plan if args.dry_run else delete_runs(args.run_id)).to_json()


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("runs", help="run history of the artifact store")
    actions = parser.add_subparsers(dest="action", required=True)
    for name, handler in (("list", cmd_list), ("export", cmd_export)):
        sub = actions.add_parser(name)
        sub.add_argument("--feature")
        sub.add_argument("--model")
        add_flags(sub, RunFilter, ["limit"])
        if name == "export":
            sub.add_argument("--format", choices=EXPORT_FORMATS, default="csv")
            sub.add_argument("--output", "-o", required=True, help="file path, or - for stdout")
        sub.set_defaults(handler=handler)
    sub = actions.add_parser("delete", help="delete runs and the computed results only they used (never "
                                            "reference or imported artifacts, never what another run uses)")
    sub.add_argument("--run-id", action="append", required=True, help="a run id (repeatable)")
    sub.add_argument("--dry-run", action="store_true", help="say what would be deleted, delete nothing")
    sub.set_defaults(handler=cmd_delete)
