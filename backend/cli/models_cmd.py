"""`python -m backend models list|info|prepare`."""
from __future__ import annotations

import argparse
import sys
import time

from backend.errors import UserError
from backend.models import embedded, list_models, load
from backend.models.generate import generate_text
from backend.models.allowlist import EMBEDDED_PREFIX, default_model_id
from backend.store.db import StoreUnavailable
from backend.store.reference import import_reference


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def cmd_list(args: argparse.Namespace) -> list[dict]:
    default = default_model_id()
    rows = []
    for spec in list_models():
        ready = embedded.is_prepared(spec.source[len(EMBEDDED_PREFIX):]) if spec.is_embedded else spec.is_local_dir
        rows.append({**spec.to_dict(), "default": spec.id == default, "embedded": spec.is_embedded,
                     "ready_offline": ready})
    return rows


def cmd_info(args: argparse.Namespace) -> dict:
    return load(args.model or default_model_id(), progress=_progress).summary()


def cmd_prepare(args: argparse.Namespace) -> dict | list[dict]:
    """One model, or (without --model) every embedded model then the default: a missing optional embedded model
    is reported with its install command and fallback, and does not fail the others."""
    if args.model:
        handle = load(args.model, progress=_progress)
        return {"prepared": handle.id, "fingerprint": handle.fingerprint}
    rows = []
    for name in embedded.EMBEDDED:
        start = time.perf_counter()
        try:
            embedded.prepare(name, progress=_progress)
            rows.append({"embedded": name, "ready": True, "seconds": round(time.perf_counter() - start, 1)})
        except UserError as err:
            if not embedded.source(name).fallback:
                raise
            print(f"warning: {err}", file=sys.stderr)
            rows.append({"embedded": name, "ready": False, "error": str(err)})
    handle = load(default_model_id(), progress=_progress)
    return [*rows, {"prepared": handle.id, "fingerprint": handle.fingerprint}, _import_reference()]


def _import_reference() -> dict:
    """The shipped reference artifacts (first views of the heavy pages); a store that cannot take them is
    not an error here: the pages compute instead."""
    try:
        done = import_reference()
    except StoreUnavailable as err:
        print(f"warning: reference artifacts not imported: {err}", file=sys.stderr)
        return {"reference_artifacts": 0}
    _progress(1.0, f"Reference artifacts: {done.imported} new in the store ({done.offered} shipped)")
    return {"reference_artifacts": done.imported, "shipped": done.offered, "refused": done.refused}


def cmd_generate(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    out = generate_text(handle, args.prompt, max_new_tokens=args.max_new_tokens, temperature=args.temperature)
    return {"model": handle.display_name, "prompt": out.prompt, "text": out.text}


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list, inspect and prepare allowlisted models")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="allowlisted models").set_defaults(handler=cmd_list)
    for name, handler, text in (("info", cmd_info, "load a model and describe it"),
                                ("prepare", cmd_prepare, "dequantise/download a model for offline use (default: every embedded model)")):
        sub = actions.add_parser(name, help=text)
        sub.add_argument("--model", help="registry id (default: the configured default model)")
        sub.set_defaults(handler=handler)
    sub = actions.add_parser("generate", help="generate text from a prompt")
    sub.add_argument("prompt")
    sub.add_argument("--model")
    sub.add_argument("--max-new-tokens", type=int, default=48)
    sub.add_argument("--temperature", type=float, default=0.0)
    sub.set_defaults(handler=cmd_generate)
