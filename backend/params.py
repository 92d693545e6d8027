"""Config dataclasses as the single source of a parameter's default, range and help.

Declare each field with `param(...)`; subclass `Config`. Validation runs once, at construction, in
`__post_init__`: the base checks every declared range and choice, and a subclass with cross-field
rules overrides `__post_init__` and calls `super().__post_init__()` first. A config that exists is
valid. CLI flags (`backend.cli.params`) and page widgets (`app.ui.params`) read the default, range
and help from the same field.

    @dataclass(frozen=True)
    class GateConfig(Config):
        window: int = param(8, "spike window W (0: threshold only)", ge=0, le=64)
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from backend.errors import UserError


@dataclass(frozen=True)
class Param:
    """What a field declares beside its default: help, bounds (ge/gt/le/lt), choices, a hint on error."""

    help: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: Any = None  # a tuple, a Registry, or a zero-argument callable returning names (lazy)
    hint: str = ""  # appended to the error message, e.g. what to use instead

    def options(self) -> tuple | None:
        if self.choices is None:
            return None
        found = self.choices() if callable(self.choices) and not hasattr(self.choices, "names") else self.choices
        return tuple(found.names()) if hasattr(found, "names") else tuple(found)

    def bounds(self) -> tuple[float | None, float | None]:
        """(lowest, highest) declared value, inclusive or not: what a widget's min and max are set to."""
        return (self.ge if self.ge is not None else self.gt, self.le if self.le is not None else self.lt)

    def range_text(self) -> str:
        low = f"[{_num(self.ge)}" if self.ge is not None else f"({_num(self.gt)}" if self.gt is not None else "(-inf"
        high = f"{_num(self.le)}]" if self.le is not None else f"{_num(self.lt)})" if self.lt is not None else "inf)"
        return f"{low}, {high}"

    def problem(self, name: str, value: Any) -> str | None:
        """A human message when `value` is not allowed, else None."""
        options = self.options()
        if options is not None:
            return None if value in options else f"{name} must be one of {', '.join(map(str, options))}, got {value!r}."
        if not any(b is not None for b in (self.ge, self.gt, self.le, self.lt)) or isinstance(value, bool):
            return None
        if not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
            return f"{name} must be a number, got {value!r}."
        ok = ((self.ge is None or value >= self.ge) and (self.gt is None or value > self.gt)
              and (self.le is None or value <= self.le) and (self.lt is None or value < self.lt))
        return None if ok else f"{name} must be in {self.range_text()}, got {value!r}."


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


KEYED_WHEN_SET = "keyed_when_set"


def param(default: Any, help: str, *, ge: float | None = None, gt: float | None = None, le: float | None = None,
          lt: float | None = None, choices: Any = None, hint: str = "", keyed_when_set: bool = False) -> Any:
    """A dataclass field with its default and what the CLI, the widgets and validation need to know.

    keyed_when_set: a field added after results were stored enters cache keys only when it differs from its
    default, so every key (and the results shipped under it) stays what it was."""
    meta = {"param": Param(help, ge, gt, le, lt, choices, hint), KEYED_WHEN_SET: keyed_when_set}
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def same_as(cls: type, name: str) -> Any:
    """A field declared exactly as `cls.name` (default, range and help), for a config that repeats it."""
    found = next(f for f in dataclasses.fields(cls) if f.name == name)
    if found.default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=found.default_factory, metadata=found.metadata)
    return dataclasses.field(default=found.default, metadata=found.metadata)


def declared(cls_or_config: Any, name: str) -> Param | None:
    """The Param of a field, or None when the field was declared without `param()`."""
    for f in dataclasses.fields(cls_or_config):
        if f.name == name:
            return f.metadata.get("param")
    raise KeyError(f"{getattr(cls_or_config, '__name__', type(cls_or_config).__name__)} has no field {name!r}")


def default_of(cls: type, name: str) -> Any:
    """The field's default (calling its factory)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            if f.default is not dataclasses.MISSING:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
            raise KeyError(f"{cls.__name__}.{name} has no default")
    raise KeyError(f"{cls.__name__} has no field {name!r}")


def help_of(cls: type, name: str) -> str:
    found = declared(cls, name)
    return found.help if found else ""


class Config:
    """Base of the frozen config dataclasses: fields declared with `param()` are checked on construction."""

    def checked_fields(self) -> Iterable[str]:
        """Fields whose declared range applies (all; a config whose variant reads a subset narrows it)."""
        return (f.name for f in dataclasses.fields(self))

    def __post_init__(self) -> None:
        check_declared(self, self.checked_fields())


def check_declared(config: Any, names: Iterable[str]) -> None:
    """UserError for the first named field whose value its `param()` does not allow."""
    wanted = set(names)
    for f in dataclasses.fields(config):
        spec = f.metadata.get("param")
        if spec is None or f.name not in wanted:
            continue
        message = spec.problem(f.name, getattr(config, f.name))
        if message:
            raise UserError(f"{message} {spec.hint}".strip())


def require(ok: bool, message: str) -> None:
    """A cross-field rule in a `__post_init__`: UserError(message) unless ok."""
    if not ok:
        raise UserError(message)


