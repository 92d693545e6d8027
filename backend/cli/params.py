"""CLI flags derived from config dataclass fields: the default, help and choices come from `param()`.

    add_flags(sub, BoundsConfig, {"method": "--method", "fp8_format": "--format", "verify": "--no-verify"})
    config = BoundsConfig(**flag_values(args, BoundsConfig, ("method", "fp8_format", "verify")))

A bool field that defaults to True becomes a `--no-...` flag that stores False; one that defaults to
False a plain switch. Flags keep their names (a mapping gives the ones that differ from the field).
"""
from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from backend.errors import UserError
from backend.params import declared, default_of


def flag_name(field: str, flags: Mapping[str, str] | None) -> str:
    return (flags or {}).get(field) or "--" + field.replace("_", "-")


def add_flags(parser: argparse.ArgumentParser, cls: type, fields: Iterable[str] | Mapping[str, str],
              **overrides: dict[str, Any]) -> None:
    """One flag per field; `overrides[field]` adds or replaces argparse keywords (e.g. a metavar)."""
    flags = fields if isinstance(fields, Mapping) else None
    for name in fields:
        default = default_of(cls, name)
        spec = declared(cls, name)
        text = (spec.help if spec else "").replace("%", "%%")  # argparse formats help with %
        kwargs: dict[str, Any] = {"dest": name}
        if isinstance(default, bool):
            kwargs.update(action="store_false" if default else "store_true", default=default, help=text)
        else:
            options = spec.options() if spec else None
            kwargs.update(default=default, help=f"{text} (default: %(default)s)".strip())
            if options is not None:
                kwargs["choices"] = list(options)
            elif default is not None:
                kwargs["type"] = type(default)
        kwargs.update(overrides.get(name, {}))
        parser.add_argument(flag_name(name, flags), **kwargs)


def flag_values(args: argparse.Namespace, cls: type, fields: Iterable[str]) -> dict[str, Any]:
    """The parsed values of the given fields, ready for `cls(**values)`."""
    return {name: getattr(args, name) for name in fields}


def int_list(text: str, flag: str) -> tuple[int, ...]:
    """`"3,5,8"` -> (3, 5, 8); anything else is a UserError naming the flag."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"{flag} takes comma-separated whole numbers such as 3,5,8, got {text!r}.") from None
