"""Entry point of `python -m backend`."""
from __future__ import annotations

import argparse
import csv
import importlib
import sys

from backend.cli import models_cmd, runs_cmd, store_cmd, verbs_cmd
from backend.cli.output import emit
from backend.errors import UserError
from backend.features import FEATURES, load_all
from backend.store.db import release as release_store, store_notice
from backend.unicode_text import visible


def command_modules() -> list:
    """The core commands, then each feature's `cli` module (backend.features.FEATURES), which contributes
    `add_commands(subparsers)`."""
    return [models_cmd, runs_cmd, store_cmd, verbs_cmd, *(importlib.import_module(f.cli) for f in FEATURES)]


def build_parser() -> argparse.ArgumentParser:
    load_all()  # flags list every registered variant
    parser = argparse.ArgumentParser(prog="python -m backend", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    features = parser.add_subparsers(dest="feature", required=True)
    for module in command_modules():
        module.add_commands(features)
    return parser


def _file_problem(err: Exception) -> str:
    if isinstance(err, OSError) and err.filename:
        return f"{err.strerror or type(err).__name__}: {err.filename}"
    if isinstance(err, UnicodeDecodeError):
        return f"a file is not UTF-8 text (byte 0x{err.object[err.start]:02x} at position {err.start}); save it as UTF-8."
    if isinstance(err, UnicodeError):
        return "the text contains characters that cannot be encoded (invalid bytes on the command line?)."
    return f"a file could not be read ({err})."


def check_utf8(argv: list[str]) -> None:
    """Refuse an argument holding bytes that are not UTF-8 before any work: Python hands them over as lone
    surrogates (surrogateescape), which a tokenizer rejects with a TypeError only after the model has loaded."""
    for i, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            flag = next((a for a in reversed(argv[:i]) if a.startswith("--")), None) if not arg.startswith("--") \
                else arg.partition("=")[0]
            where = f"The value of {visible(flag)}" if flag and flag != arg else f"Argument {i + 1}"
            raise UserError(f"{where} holds bytes that are not UTF-8 text; pass the text encoded as UTF-8.")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--json" in argv:  # accept --json anywhere on the line, as the docs show it last
        argv.remove("--json")
        argv.insert(0, "--json")
    try:
        check_utf8(argv)
        args = build_parser().parse_args(argv)  # defaults read the settings (DASH_* variables)
        result = args.handler(args)
        notice = store_notice()
    except UserError as err:
        print(f"error: {visible(err)}", file=sys.stderr)  # one line: a name's newline or U+202E written out
        return 2
    except KeyboardInterrupt:  # the store recorded the run as stopped and kept nothing partial
        print("stopped: nothing partial was stored; an interrupted computation is listed as a stopped run",
              file=sys.stderr)
        return 130
    except (OSError, UnicodeError, csv.Error) as err:  # a file named on the command line: missing, unreadable, not text
        print(f"error: {visible(_file_problem(err))}", file=sys.stderr)
        return 2
    finally:
        release_store()  # a finished command leaves the store file to others at once
    if result != {}:
        emit(result, args.json)
    if notice:
        print(f"warning: {notice}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
