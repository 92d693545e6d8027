"""`python -m backend store stats|import|reference-export|reference-import`: what the store holds, and artifact files
(the reference artifacts shipped in data/reference/, or a user's own)."""
from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from backend.errors import UserError
from backend.store.db import release
from backend.store.reference import export_reference, import_artifacts, import_reference, reference_dir
from backend.store.stats import status


def cmd_export(args: argparse.Namespace) -> dict:
    out = Path(args.output)
    if not out.name.endswith(".jsonl.gz"):
        raise UserError(f"{args.output}: a reference file is gzip JSON lines named *.jsonl.gz.")
    store = Path(args.store) if args.store else None
    if store is not None and not store.is_file():
        raise UserError(f"No store at {args.store}.")
    return {"written": str(out), "artifacts": export_reference(args.fingerprint, out, store, args.only or ())}


def _folder(name: str) -> Path:
    directory = Path(name)
    if not directory.is_dir():
        raise UserError(f"{name} is not a folder.")
    return directory


def cmd_import(args: argparse.Namespace) -> dict:
    return asdict(import_reference(_folder(args.directory)))


def cmd_import_own(args: argparse.Namespace) -> dict:
    return asdict(import_artifacts(_folder(args.directory)))


def cmd_stats(args: argparse.Namespace) -> dict:
    release()  # this process's writes checkpointed into the file first: the size is the file's, not a pending log's
    return status().to_json()


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("store", help="the artifact store: counts, reference and imported artifacts")
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
    sub = actions.add_parser("import", help="add the artifacts of your own *.jsonl.gz files (as written by "
                                            "reference-export) that the store lacks, marked imported")
    sub.add_argument("--directory", required=True)
    sub.set_defaults(handler=cmd_import_own)
    sub = actions.add_parser("stats", help="artifact counts by origin and by feature, run counts")
    sub.set_defaults(handler=cmd_stats)
