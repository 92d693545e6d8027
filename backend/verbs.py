"""One shape for every cached computation: a `Verb`.

A verb is declared once, in its feature's module, and owns what used to be repeated at each call site:

    heads = register(Verb("mt", "heads", HeadsConfig, compute_heads, "attention-head maps of the translation heads",
                          reads=(attention_maps, detection)))
    computed = heads(handle, HeadsConfig(...), progress)   # -> Computed[HeadsResult]

- the cache key: (feature, name, the subject's model fingerprint, the canonical config or `key(subject, config)`,
  and a code version *derived* from the source of `compute` and of everything in `reads` — functions, classes or
  whole modules — so a change to the computation can never be served a result stored by the old code; docstrings,
  comments and formatting do not count);
- the run record, progress and Stop (through `backend.store.cached`: a Stop raised from `progress` records the
  run as stopped and stores nothing partial);
- the listing (`python -m backend verbs`) and the page call (`app.ui.run.run_verb`); CLI flags come from the same
  config's `param()` fields (`backend.cli.params.add_flags`).

Features register their verbs when their module is imported; `all_verbs()` imports every feature's declared verb
modules (`backend.features.Feature.verbs`) first, so the listing and the contract test see all of them.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import inspect
import textwrap
import threading
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from backend.estimates import record_finished
from backend.estimates.load import computing_threads, current_load, own_share, thread_nice
from backend.progress import Progress, silent
from backend.store import artifacts
from backend.store.artifacts import Computed, ComputedMany, ModelRef, Stored, artifact_key
from backend.store.codec import canonical_params

C = TypeVar("C")
R = TypeVar("R")

_VERBS: dict[tuple[str, str], "Verb"] = {}


def source_digest(parts: Sequence[Any]) -> str:
    """12 hex digits of the code of `parts` (functions, classes, modules), read as syntax: docstrings, comments
    and layout changed alone leave it as it was; anything a computation does differently changes it."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(_syntax_of(part).encode())
    return digest.hexdigest()[:12]


# one parse at a time: CPython 3.11 shares the parser's AST-building state between threads, and two page sessions
# (or a page and a background job) may derive code versions at once (Streamlit's own page parse, its "magic", is
# off: .streamlit/config.toml)
_PARSING = threading.Lock()

# Per part, as first read in this process: many verbs read the same modules (backend.models.kernel, a feature's
# shared helpers), and parsing and dumping one is most of a verb's first call on a tiny model. A changed file is a
# new part only once it is imported again (a new module object), as the code that runs is.
_SYNTAX: dict[Any, str] = {}


def _syntax_of(part: Any) -> str:
    try:
        return _SYNTAX[part]
    except KeyError:
        syntax = _SYNTAX[part] = _parsed_syntax_of(part)
        return syntax
    except TypeError:  # an unhashable part: read each time
        return _parsed_syntax_of(part)


def _parsed_syntax_of(part: Any) -> str:
    target = inspect.unwrap(part) if callable(part) and not isinstance(part, type) else part
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError) as err:
        raise TypeError(f"a verb's code version needs the source of {part!r}: declare named functions, classes or "
                        "modules (not lambdas made at run time or built-ins)") from err
    with _PARSING:
        tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    name = part.__name__ if isinstance(part, types.ModuleType) else getattr(part, "__qualname__", "")
    return f"{name}\n{ast.dump(tree, annotate_fields=False, include_attributes=False)}\n"


@dataclass(frozen=True)
class Verb(Generic[C, R]):
    """A cached computation of one feature.

    compute(subject, config, progress) -> result, where the subject is what the verb works on: a loaded model
    (`backend.models.ModelHandle`) by default, or what `ref` turns into a `ModelRef` (a base/reasoning pair).
    key(subject, config): what the store keys on when the config alone does not say it (e.g. with the prompt's
    token ids); by default the config itself.
    reads: the code beyond `compute` the result depends on (its helpers, the modules doing the work): each enters
    the derived code version.
    variants: registries (backend.variants) whose variants the computation runs — a strategy another feature
    plugs in included: the module of every registered variant's `run` enters the code version too.
    """

    feature: str
    name: str
    config: type
    compute: Callable[[Any, Any, Progress], Any]
    help: str
    reads: tuple[Any, ...] = ()
    key: Callable[[Any, Any], Any] | None = None
    ref: Callable[[Any], ModelRef] = ModelRef.of
    variants: tuple[Any, ...] = ()

    @cached_property
    def code_version(self) -> str:
        return source_digest((self.compute, *self.reads, *self._variant_modules()))

    def _variant_modules(self) -> list[types.ModuleType]:
        if not self.variants:
            return []
        from backend.features import load_all

        load_all()  # every plug-in registered before the version is fixed
        names = sorted({v.run.__module__ for registry in self.variants for v in registry})
        return [importlib.import_module(name) for name in names]

    @property
    def qualified(self) -> str:
        return f"{self.feature} {self.name}"

    def _keyed(self, subject: Any, config: Any) -> Any:
        return config if self.key is None else self.key(subject, config)

    def __call__(self, subject: Any, config: Any = None, progress: Progress = silent) -> Computed:
        config = self.config() if config is None else config
        return artifacts.cached(self.feature, self.name, self.ref(subject), self._keyed(subject, config),
                                lambda: self._timed(subject, config, progress), code_version=self.code_version)

    def _timed(self, subject: Any, config: Any, progress: Progress) -> Any:
        """The computation with the torch threads the CPU's load calls for, its time recorded for the next estimates
        (`backend.estimates`)."""
        nice = thread_nice()
        # one torch thread where other work wants the cores (backend.estimates.load: 4-20x faster there)
        with computing_threads(current_load(nice)) as threads:
            begin, cpu = time.perf_counter(), time.thread_time()
            value = self.compute(subject, config, progress)
            seconds = time.perf_counter() - begin
        record_finished(self, subject, config, seconds, nice, threads,
                        own_share(time.thread_time() - cpu, seconds, threads))
        return value

    def store_key(self, subject: Any, config: Any) -> str:
        """The key this request is stored under (nothing is computed)."""
        params = canonical_params(self._keyed(subject, config))
        return artifact_key(self.feature, self.name, self.ref(subject).fingerprint, params, self.code_version)

    def many(self, subject: Any, configs: Sequence[Any],
             compute_many: Callable[[list[Any]], Sequence[Any]]) -> ComputedMany:
        """Many small requests at once (hashable configs, used as their own keys): one store read, the missing
        ones computed together by `compute_many(missing)` and stored in one transaction."""
        return artifacts.cached_many(self.feature, self.name, self.ref(subject), configs, compute_many,
                                     code_version=self.code_version)

    def all_stored(self, subject: Any, configs: Sequence[Any]) -> bool:
        """Whether the store holds every one of these requests (their keys read; nothing decoded or computed)."""
        keys = {self.store_key(subject, config) for config in configs}
        return len(artifacts.stored_keys(list(keys))) == len(keys)

    def latest(self, subject: Any) -> Stored | None:
        """The most recent stored result of this verb for the subject's model, any configuration."""
        return artifacts.latest(self.feature, self.name, self.ref(subject), code_version=self.code_version)

    def fields(self) -> tuple[str, ...]:
        """The config's fields declared with `param()`: what the listing shows and the CLI's flags are made from
        (`backend.cli.params.add_flags`)."""
        return tuple(f.name for f in dataclasses.fields(self.config) if "param" in f.metadata)


def register(verb: Verb) -> Verb:
    """Add a verb; the same (feature, name) declared twice is a programming error."""
    known = _VERBS.get((verb.feature, verb.name))
    if known is not None and known is not verb:
        raise ValueError(f"verb {verb.qualified!r} is declared twice ({known.compute.__module__} and "
                         f"{verb.compute.__module__})")
    _VERBS[(verb.feature, verb.name)] = verb
    return verb


def settle_code_versions() -> None:
    """Derive the code version of every verb registered so far, in the calling thread. Called before starting a
    thread that runs verbs, so the thread finds them derived (deriving parses source, one parse at a time in the
    process: `_PARSING`)."""
    while pending := [verb for verb in _VERBS.values() if "code_version" not in vars(verb)]:
        for verb in pending:  # a verb with variants imports every feature first: more verbs may register
            verb.code_version  # noqa: B018 - a cached_property: derived once, kept


def all_verbs() -> tuple[Verb, ...]:
    """Every feature's verbs, in feature order (imports each feature's declared verb modules first)."""
    from backend.features import FEATURES

    for feature in FEATURES:
        for module in feature.verb_modules:
            importlib.import_module(module)
    order = {f.name: i for i, f in enumerate(FEATURES)}
    return tuple(sorted(_VERBS.values(), key=lambda v: (order.get(v.feature, len(order)), v.name)))
