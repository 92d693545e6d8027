"""One shape for every family of named variants (decoding strategies, disagreement policies, NAG
scorers and impacts, MT attributions and head types, watermark methods, FP8 sigma methods).

A variant is a frozen dataclass: `name`, `label`, `help`, the `config` type it reads (None when it
reads only its family's config) and `run`, the callable that does the work. A family that needs more
(a cost, flags, a budget rule) subclasses `Variant` with extra fields that have defaults.

Features register their own variants into the family's `Registry` when their module is imported;
a core package never names a feature. `backend.features.load_all()` imports every registering
module once, so a page, the CLI or a benchmark sees all of them. Every registry created here is
listed by `registries()`, which the contract tests iterate.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from backend.errors import UserError


@dataclass(frozen=True)
class Variant:
    """name: the key used by configs, CLI and cache; label: what a page shows; help: one sentence."""

    name: str
    label: str
    help: str
    run: Callable[..., Any]
    config: type | None = None


V = TypeVar("V", bound=Variant)
_ALL: dict[str, "Registry"] = {}


class Registry(Generic[V]):
    """Named variants of one family, in registration order.

    `family` is "<feature>-<variants>" ("decoding-strategies"); `kind` names one variant in messages
    ("decoding strategy", "watermark method").
    """

    def __init__(self, family: str, kind: str) -> None:
        if family in _ALL:
            raise ValueError(f"A registry named {family!r} already exists.")
        self.family = family
        self.kind = kind
        self._variants: dict[str, V] = {}
        _ALL[family] = self

    def register(self, variant: V) -> V:
        """Add a variant; a second variant under the same name is a programming error."""
        known = self._variants.get(variant.name)
        if known is not None and known is not variant:
            raise ValueError(f"{self.kind} {variant.name!r} is registered twice.")
        self._variants[variant.name] = variant
        return variant

    def unregister(self, name: str) -> None:
        """Remove a variant (tests that register a throwaway one)."""
        self._variants.pop(name, None)

    def get(self, name: str) -> V:
        """The variant, or a UserError listing the known names."""
        found = self._variants.get(name)
        if found is None:
            raise UserError(f"Unknown {self.kind} {name!r}; choose one of {', '.join(self._variants)}.")
        return found

    def names(self) -> tuple[str, ...]:
        return tuple(self._variants)

    def labels(self) -> dict[str, str]:
        """name -> label, for select boxes."""
        return {v.name: v.label for v in self._variants.values()}

    def help_text(self) -> str:
        """One line per variant, for CLI help and page captions."""
        return "; ".join(f"{v.name}: {v.help}" for v in self._variants.values())

    def __getitem__(self, name: str) -> V:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._variants

    def __iter__(self) -> Iterator[V]:
        return iter(list(self._variants.values()))

    def __len__(self) -> int:
        return len(self._variants)

    def __repr__(self) -> str:
        return f"Registry({self.family!r}, {list(self._variants)})"


def registries() -> dict[str, Registry]:
    """Every registry created so far, by family (call `backend.features.load_all()` first for all)."""
    return dict(_ALL)
