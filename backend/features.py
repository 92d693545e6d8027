"""The one list of features: the CLI, the app, benchmarks and the tests all read `FEATURES`.

A feature is a package `backend.<name>`. Importing its `registers` modules fills its registries of variants;
its `cli` module contributes `add_commands(subparsers)`; its page is `pages/<page>` (the model a page opens on is
page policy: app/model_choice.py). A feature imports no
other feature, except a declared `PlugIn` registering variants into another feature's registry through that
feature's `plug_in_face` (tests/test_layering.py holds this). No core package (decoding's registry, models, store)
names a feature; entry points call `load_all()` once.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Feature:
    name: str  # the CLI word and the store's feature name; the package is backend.<name> unless `package_name` says
    registers: tuple[str, ...]  # submodules (relative to the package) whose import registers variants, in order
    page: str  # script in pages/
    plug_in_face: tuple[str, ...] = ()  # submodules another feature's PlugIn may import
    package_name: str = ""  # where the CLI word would shadow a standard-library module ("inspect")
    verbs: tuple[str, ...] = ()  # submodules declaring its cached computations (backend.verbs.Verb)
    work: tuple[str, ...] = ()  # submodules declaring how much work its verbs' requests are (backend.estimates.work)

    @property
    def package(self) -> str:
        return f"backend.{self.package_name or self.name}"

    @property
    def cli(self) -> str:
        return f"{self.package}.cli"

    @property
    def verb_modules(self) -> tuple[str, ...]:
        return tuple(f"{self.package}.{module}" for module in self.verbs)

    @property
    def work_modules(self) -> tuple[str, ...]:
        return tuple(f"{self.package}.{module}" for module in self.work)

    @property
    def registering_modules(self) -> tuple[str, ...]:
        return tuple(f"{self.package}.{module}" for module in self.registers)


@dataclass(frozen=True)
class PlugIn:
    """A module of one feature that registers variants into another feature's registry."""

    module: str
    host: str  # the feature it plugs into
    reason: str


FEATURES: tuple[Feature, ...] = (
    Feature("mt", ("attribution", "prompts", "prompt_kinds", "steering", "experiments"), "mt_heads.py",
            verbs=("heads", "head_detail", "conditions", "experiments"), work=("work",)),
    Feature("nag", ("scorers", "impact"), "nag.py",
            verbs=("featurecache", "embedding", "rank", "corpus_job", "neuron", "evaluate")),
    Feature("disagreement", (), "disagreement.py",
            verbs=("scoring", "analysis", "eopd", "guided", "sweep", "position", "learnability")),
    Feature("decoding", ("algorithms", "convexity"), "decoding.py",
            plug_in_face=("registry", "config", "context", "result"), verbs=("run", "particle", "convexity.run"),
            work=("work",)),
    Feature("watermark", ("ipmark.method", "kgw.method", "hf_kgw.method", "synthid.method", "attacks"),
            "watermark.py", verbs=("generation", "paraphrase", "length", "evaluation", "examples"), work=("work",)),
    Feature("fp8", ("spectral", "formats"), "fp8_bounds.py", verbs=("bounds", "head", "simulate"), work=("work",)),
    Feature("inspect", ("attribution_methods",), "inspect.py", package_name="internals", verbs=("verbs",)),
)

PLUG_INS: tuple[PlugIn, ...] = (
    PlugIn("backend.disagreement.strategy", "decoding",
           "the guided strategy (the base model decodes, the reasoning model takes over where they disagree) is a "
           "decoding strategy: the Decoding page and `decoding run` list it beside the others"),
)

_loaded = False


def feature(name: str) -> Feature:
    return next(f for f in FEATURES if f.name == name)


def registering_modules() -> tuple[str, ...]:
    """Every feature's own registering modules, then the plug-ins (so a host's variants come first in its lists)."""
    return (*(m for f in FEATURES for m in f.registering_modules), *(p.module for p in PLUG_INS))


def load_all() -> None:
    """Import every registering module (idempotent)."""
    global _loaded
    if not _loaded:
        for path in registering_modules():
            importlib.import_module(path)
        _loaded = True
