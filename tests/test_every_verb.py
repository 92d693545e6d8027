"""Every verb of every feature, run on the tiny models (tests/support/every_verb.py: each feature's CLI verbs as
`python -m backend` runs them, in this process, and the verbs only a page calls, as the page calls them) on a store
of its own, once, for every check that needs all of them:

- every forward runs while the calling thread holds that model's lock (backend/models/locks.py). Every module of
  the tiny models (the norms, projections and lm_head the read-outs call one by one included) records, at each
  forward, whether the thread running it holds the model's lock; a forward outside the lock would let another
  session's hooks (an ablation, a steering vector) act on it. The shared sentence embedder is checked against its
  own lock;
- the verb contract (backend.verbs): every registered verb is reached; the same commands a second time are served
  from the store; each computed top-level call is a run; a Stop raised from a verb's progress ends it with nothing
  stored and the run listed as stopped; a value outside a config's declared range is refused in one line.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
from collections import Counter
from dataclasses import dataclass, field

import pytest
import torch
from torch import nn

import backend.__main__ as backend_main
from backend.__main__ import main
from backend.errors import UserError
from backend.models import load, sentence_embedder
from backend.models.locks import model_lock
from backend.models.reduced import _copies
from backend.params import declared, default_of
from backend.progress import Stopped, silent
from backend.store.artifacts import lookup
from backend.store.runs import RunFilter, list_runs
from backend.verbs import Verb, all_verbs
from tests.support.every_verb import CLI, MODELS, NO_FORWARD, PAGE, argv_of, command_names


class Forwards:
    """Every module forward of the instrumented models: a count per verb, and the modules run without the lock."""

    def __init__(self) -> None:
        self.owners: dict[int, tuple] = {}  # id(module) -> (model id, module name, whether this thread holds the lock)
        self.verb = ""
        self.ran: Counter = Counter()
        self.unlocked: dict[str, set[str]] = {}
        self.unknown: dict[str, set[str]] = {}
        self.models: dict[str, tuple[nn.Module, object]] = {}

    def own(self, model_id: str, model: nn.Module, held_here) -> None:
        self.models[model_id] = (model, held_here)
        for name, module in model.named_modules():
            self.owners[id(module)] = (model_id, name or "(the whole model)", held_here)

    def own_reduced_copies(self) -> None:
        """A reduced-precision copy (backend/models/reduced.py, built when a verb first asks) runs under its source
        model's lock: its modules are the source's, for this record."""
        for model_id, (model, held_here) in self.models.items():
            for kind, copy in _copies.get(model, {}).items():
                for name, module in copy.named_modules():
                    self.owners.setdefault(id(module), (model_id, f"{kind} copy: {name}", held_here))

    def __call__(self, module: nn.Module, args) -> None:
        owner = self.owners.get(id(module))
        if owner is None:
            self.own_reduced_copies()
            owner = self.owners.get(id(module))
        if owner is None:  # a model (or a module) the test did not instrument
            self.unknown.setdefault(self.verb, set()).add(type(module).__name__)
            return
        model_id, name, held_here = owner
        self.ran[self.verb] += 1
        if not held_here():
            self.unlocked.setdefault(self.verb, set()).add(f"{model_id}: {name}")


@dataclass
class Call:
    verb: Verb
    subject: object
    config: object
    cached: bool
    run_id: str


@dataclass
class Pass:
    """The verb calls of one pass over every command."""

    calls: list[Call] = field(default_factory=list)
    many: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # verb -> [(hits, computed)]
    exits: dict[str, tuple[int, str]] = field(default_factory=dict)  # command -> (exit status, stderr)


@dataclass
class EveryVerb:
    forwards: Forwards
    first: Pass
    second: Pass


def _record_verb_calls(patch: pytest.MonkeyPatch, passes: list[Pass]) -> None:
    """Each verb call appends to `passes[-1]` (the pass under way)."""
    real_call, real_many = Verb.__call__, Verb.many

    def recording_call(self, subject, config=None, progress=silent):
        config = self.config() if config is None else config
        computed = real_call(self, subject, config, progress)
        passes[-1].calls.append(Call(self, subject, config, computed.cached, computed.run_id))
        return computed

    def recording_many(self, subject, configs, compute_many):
        done = real_many(self, subject, configs, compute_many)
        passes[-1].many.setdefault(self.qualified, []).append((done.hits, done.computed))
        return done

    patch.setattr(Verb, "__call__", recording_call)
    patch.setattr(Verb, "many", recording_many)


def _run_every_command(record: Forwards, names, into: Pass) -> None:
    for verb in CLI:
        record.verb = verb
        with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
            code = main(argv_of(verb, names))
        into.exits[verb] = (code, err.getvalue())
    for verb, call in PAGE.items():
        record.verb = verb
        call(names)


@pytest.fixture(scope="module")
def every_verb(tmp_path_factory):
    """Every command run twice on a store of its own (forwards and verb calls recorded), the lock record's hook
    removed before the second pass."""
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("every-verb")
        patch.setenv("DASH_STORE", str(folder / "store.duckdb"))  # a store of its own: every verb computes
        patch.setenv("DASH_WATERMARK_SECRET", "a fixed secret for the every-verb test")
        names = command_names(folder)
        # one parser for every command of both passes: `main` builds one per call (every feature's flags, with
        # defaults read from the settings, which this fixture fixes above), about half of a stored command's time
        parser = backend_main.build_parser()
        patch.setattr(backend_main, "build_parser", lambda: parser)
        # `main` closes the store after each command, to hand the file to other processes; here no other process
        # waits, and closing (a checkpoint) then reopening for the next of ~110 commands was a third of the fixture's
        # CPU. The release still runs in every other test calling `main` (tests/test_cli.py); handing the store
        # between processes is tests/store/test_held_store.py's subject
        patch.setattr(backend_main, "release_store", lambda: None)
        record = Forwards()
        for model_id in MODELS:
            model = load(model_id).model
            record.own(model_id, model, lambda lock=model_lock(model): lock.held_here)
        embedder = sentence_embedder.get_embedder()
        embedder.clear_memo()  # sentences another test embedded in this process would skip the forward
        record.own("minilm", embedder.model, sentence_embedder._lock._is_owned)
        passes: list[Pass] = [Pass()]
        _record_verb_calls(patch, passes)
        hook = nn.modules.module.register_module_forward_pre_hook(record)
        try:
            _run_every_command(record, names, passes[0])
        finally:
            hook.remove()
        passes.append(Pass())
        _run_every_command(Forwards(), names, passes[1])
        yield EveryVerb(record, *passes)


def test_the_record_tells_a_forward_outside_the_lock_from_one_inside():
    record = Forwards()
    model, ids = load("tiny-llama").model, torch.tensor([[1, 2, 3]])
    record.own("tiny-llama", model, lambda lock=model_lock(model): lock.held_here)
    hook = nn.modules.module.register_module_forward_pre_hook(record)
    try:
        record.verb = "a forward under the lock"
        with model_lock(model):
            model(input_ids=ids)
        record.verb = "a bare forward"
        model(input_ids=ids)
    finally:
        hook.remove()
    assert record.ran["a forward under the lock"] > 0 and "a forward under the lock" not in record.unlocked
    assert record.ran["a bare forward"] > 0
    assert {"tiny-llama: (the whole model)", "tiny-llama: lm_head", "tiny-llama: model.norm"} <= \
        record.unlocked["a bare forward"]


@pytest.mark.parametrize("verb", [*CLI, *PAGE])
def test_every_forward_of_the_verb_holds_the_model_lock(every_verb, verb):
    record = every_verb.forwards
    if verb in CLI:
        code, err = every_verb.first.exits[verb]
        assert code == 0, err
    assert not record.unlocked.get(verb), f"forwards outside the model lock: {sorted(record.unlocked[verb])}"
    assert not record.unknown.get(verb), f"forwards of modules of no instrumented model: {record.unknown[verb]}"
    assert (record.ran[verb] == 0) == (verb in NO_FORWARD), record.ran[verb]


def test_every_registered_verb_is_reached(every_verb):
    first = every_verb.first
    reached = {c.verb.qualified for c in first.calls} | set(first.many)
    missing = sorted(v.qualified for v in all_verbs() if v.qualified not in reached)
    assert not missing, f"add a command or a page call reaching these verbs: {missing}"


def test_the_second_time_every_verb_is_served_from_the_store(every_verb):
    second = every_verb.second
    computed_again = sorted({c.verb.qualified for c in second.calls if not c.cached})
    assert not computed_again
    assert all(computed == 0 for parts in second.many.values() for _, computed in parts), second.many


def test_each_computed_top_level_call_is_a_run(every_verb):
    first = every_verb.first
    recorded = set(list_runs(RunFilter(limit=100_000))["run_id"])
    top_level = [c for c in first.calls if c.run_id]
    assert top_level and all(c.run_id in recorded for c in top_level)


def _first_top_level_calls(record: Pass) -> dict[str, Call]:
    found: dict[str, Call] = {}
    for call in record.calls:
        if call.run_id:
            found.setdefault(call.verb.qualified, call)
    return found


def test_every_verb_stops_at_its_progress_and_stores_nothing(every_verb, fresh_store):
    from backend.watermark import demo

    demo.add_demo()  # the identities the watermark verbs ran with, in this test's own store
    first = every_verb.first
    did_not_stop = []
    for name, call in _first_top_level_calls(first).items():
        def stop(fraction: float, message: str) -> None:
            raise Stopped()

        try:
            call.verb(call.subject, call.config, stop)
        except Stopped:
            pass
        else:
            did_not_stop.append(name)
            continue
        stopped = list_runs(RunFilter(feature=call.verb.feature, status="stopped", limit=100_000))
        assert call.verb.name in set(stopped["action"]), f"{name}: the stop is not listed"
        assert lookup(call.verb.store_key(call.subject, call.config)) is None, f"{name}: stored after a stop"
    assert not did_not_stop, f"these verbs never report progress, so nothing can stop them: {did_not_stop}"


def _out_of_range(cls: type) -> tuple[str, object] | None:
    """A field of `cls` and a value its declaration refuses (past a bound, or not among its choices)."""
    for f in dataclasses.fields(cls):
        spec = declared(cls, f.name)
        if spec is None or isinstance(default_of(cls, f.name), bool):
            continue
        low, high = spec.bounds()
        if high is not None:
            return f.name, high + 1
        if low is not None:
            return f.name, low - 1
        if spec.options() is not None:
            return f.name, "no such choice"
    return None


def _valid_config(verb: Verb, request: pytest.FixtureRequest):
    """The verb's default config, or (a config with fields that have no default: a question, a stored run's key)
    one it ran with in the first pass."""
    if all(f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
           for f in dataclasses.fields(verb.config)):
        return verb.config()
    return next(c.config for c in request.getfixturevalue("every_verb").first.calls if c.verb is verb)


@pytest.mark.parametrize("verb", all_verbs(), ids=lambda v: v.qualified)
def test_a_bad_config_is_refused_in_one_line(verb, request):
    bad = _out_of_range(verb.config)
    if bad is None:
        pytest.skip(f"{verb.config.__name__} declares no range or choices")
    name, value = bad
    valid = _valid_config(verb, request)
    with pytest.raises(UserError) as refused:
        dataclasses.replace(valid, **{name: value})
    assert "\n" not in str(refused.value) and name in str(refused.value)
