"""The contract every registered verb (backend.verbs) keeps, checked on the tiny models:

- it is reached: every verb runs when each feature's CLI verbs and the page-only verbs run on tiny settings
  (the command list of tests/models/test_every_forward_locked.py);
- computed once: the same commands again are served from the store, and each computed top-level call is a run;
- stoppable: a Stop raised from its progress callback ends it with nothing stored and the run listed as stopped;
- a bad config is one line: a value outside a declared range is refused on construction with a one-line message.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from backend.__main__ import main
from backend.errors import UserError
from backend.params import declared, default_of
from backend.progress import Stopped, silent
from backend.store.artifacts import lookup
from backend.store.runs import RunFilter, list_runs
from backend.verbs import Verb, all_verbs
from tests.models.test_every_forward_locked import CLI, FILES, PAGE


@dataclass
class Call:
    verb: Verb
    subject: object
    config: object
    cached: bool
    run_id: str


@dataclass
class Record:
    calls: list[Call] = field(default_factory=list)
    many: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # verb -> [(hits, computed)]


def _run_every_command(names) -> None:
    for verb, argv in CLI.items():
        assert main([str(names[a[1:-1]]) if a.startswith("{") else a for a in argv]) == 0, verb
    for call in PAGE.values():
        call()


@pytest.fixture(scope="module")
def runs_twice(tmp_path_factory):
    """Every command run twice on a store of its own, each verb call recorded: (first pass, second pass)."""
    from backend.watermark import demo

    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("verb-contract")
        patch.setenv("DASH_STORE", str(folder / "store.duckdb"))
        patch.setenv("DASH_WATERMARK_SECRET", "a fixed secret for the verb contract")
        for name, text in FILES.items():
            (folder / name).write_text(text)
        model_address, user_address = demo.first_try_identity()
        names = {**{name: folder / name for name in FILES}, "scan.parquet": folder / "scan.parquet",
                 "scores.parquet": folder / "scores.parquet", "identity": f"{model_address}.{user_address}"}
        passes = [Record(), Record()]
        current = passes[0]
        real_call, real_many = Verb.__call__, Verb.many

        def recording_call(self, subject, config=None, progress=silent):
            config = self.config() if config is None else config
            computed = real_call(self, subject, config, progress)
            current.calls.append(Call(self, subject, config, computed.cached, computed.run_id))
            return computed

        def recording_many(self, subject, configs, compute_many):
            done = real_many(self, subject, configs, compute_many)
            current.many.setdefault(self.qualified, []).append((done.hits, done.computed))
            return done

        patch.setattr(Verb, "__call__", recording_call)
        patch.setattr(Verb, "many", recording_many)
        _run_every_command(names)
        current = passes[1]
        _run_every_command(names)
        yield passes


def test_every_registered_verb_is_reached(runs_twice):
    first, _ = runs_twice
    reached = {c.verb.qualified for c in first.calls} | set(first.many)
    missing = sorted(v.qualified for v in all_verbs() if v.qualified not in reached)
    assert not missing, f"add a command or a page call reaching these verbs: {missing}"


def test_the_second_time_every_verb_is_served_from_the_store(runs_twice):
    _, second = runs_twice
    computed_again = sorted({c.verb.qualified for c in second.calls if not c.cached})
    assert not computed_again
    assert all(computed == 0 for parts in second.many.values() for _, computed in parts), second.many


def test_each_computed_top_level_call_is_a_run(runs_twice):
    first, _ = runs_twice
    recorded = set(list_runs(RunFilter(limit=100_000))["run_id"])
    top_level = [c for c in first.calls if c.run_id]
    assert top_level and all(c.run_id in recorded for c in top_level)


def _first_top_level_calls(record: Record) -> dict[str, Call]:
    found: dict[str, Call] = {}
    for call in record.calls:
        if call.run_id:
            found.setdefault(call.verb.qualified, call)
    return found


def test_every_verb_stops_at_its_progress_and_stores_nothing(runs_twice, fresh_store):
    first, _ = runs_twice
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


@pytest.mark.parametrize("verb", all_verbs(), ids=lambda v: v.qualified)
def test_a_bad_config_is_refused_in_one_line(verb):
    bad = _out_of_range(verb.config)
    if bad is None:
        pytest.skip(f"{verb.config.__name__} declares no range or choices")
    name, value = bad
    with pytest.raises(UserError) as refused:
        verb.config(**{name: value})
    assert "\n" not in str(refused.value) and name in str(refused.value)
