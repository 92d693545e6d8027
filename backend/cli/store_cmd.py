"""`python -m backend store reference-export|reference-import`: the reference artifacts shipped in data/reference/."""
from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from backend.errors import UserError
from backend.store.reference import export_reference, import_reference, reference_dir


def cmd_export(args: argparse.Namespace) -> dict:
    out = Path(args.output)
    if not out.name.endswith(".jsonl.gz"):
        raise UserError(f"{args.output}: a reference file is gzip JSON lines named *.jsonl.gz.")
    store = Path(args.store) if args.store else None
    if store is not None and not store.is_file():
        raise UserError(f"No store at {args.store}.")
    return {"written": str(out), "artifacts": export_reference(args.fingerprint, out, store, args.only or ())}


def cmd_import(args: argparse.Namespace) -> dict:
    directory = Path(args.directory)
    if not directory.is_dir():
        raise UserError(f"{args.directory} is not a folder.")
    return asdict(import_reference(directory))


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("store", help="reference artifacts for the embedded models")
    actions = parser.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("reference-export", help="write a store's artifacts of some models to a reference file")
    sub.add_argument("--fingerprint", action="append", required=True, help="model fingerprint (repeatable)")
    sub.add_argument("--store", help="the store to read (default: the configured store)")
    sub.add_argument("--only", action="append", metavar="FEATURE:ACTION",
                     help="export only artifacts of this kind, e.g. disagreement:sweep (repeatable)")
    sub.add_argument("--output", "-o", required=True, help="e.g. data/reference/embedded.jsonl.gz")
    sub.set_defaults(handler=cmd_export)
    sub = actions.add_parser("reference-import", help="add the shipped reference artifacts the store lacks "
                                                      "(`models prepare` does this)")
    sub.add_argument("--directory", default=str(reference_dir()))
    sub.set_defaults(handler=cmd_import)
