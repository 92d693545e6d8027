"""`python -m backend verbs`: every cached computation the features declare (backend.verbs), with its config
type, the config's fields and its derived code version."""
from __future__ import annotations

import argparse

from backend.verbs import all_verbs


def cmd_verbs(args: argparse.Namespace) -> list[dict]:
    return [{"feature": v.feature, "verb": v.name, "config": v.config.__name__, "fields": " ".join(v.fields()),
             "code_version": v.code_version, "help": v.help}
            for v in all_verbs() if args.feature in (None, v.feature)]


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    sub = subparsers.add_parser("verbs", help="list every cached computation (feature, verb, config, code version)")
    sub.add_argument("--feature", default=None, help="only this feature's verbs")
    sub.set_defaults(handler=cmd_verbs)
