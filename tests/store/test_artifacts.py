from dataclasses import dataclass

import numpy as np
import pytest

from backend.store import ModelRef, cached, status
from backend.store.codec import dumps, loads

MODEL = ModelRef("tiny", "f00d")


@dataclass(frozen=True)
class Config:
    n: int
    alpha: float = 1.0


def test_second_request_is_served_from_duckdb_without_recompute(fresh_store):
    calls = []

    def compute():
        calls.append(1)
        return {"values": np.arange(3.0)}

    first = cached("demo", "run", MODEL, Config(3), compute)
    second = cached("demo", "run", MODEL, Config(3), compute)
    assert len(calls) == 1
    assert not first.cached and second.cached
    np.testing.assert_array_equal(second.value["values"], np.arange(3.0))
    assert second.key == first.key and second.run_id != first.run_id
    assert second.provenance == "cached" and first.provenance.startswith("computed in")


def test_key_depends_on_config_model_and_code_version(fresh_store):
    keys = {
        cached("demo", "run", MODEL, Config(3), lambda: 1).key,
        cached("demo", "run", MODEL, Config(4), lambda: 1).key,
        cached("demo", "run", ModelRef("tiny", "beef"), Config(3), lambda: 1).key,
        cached("demo", "run", MODEL, Config(3), lambda: 1, code_version="2").key,
        cached("demo", "other", MODEL, Config(3), lambda: 1).key,
    }
    assert len(keys) == 5


def test_failed_compute_stores_nothing(fresh_store):
    def boom():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        cached("demo", "run", MODEL, Config(1), boom)
    assert status().artifacts == 0 and status().runs == 0
    # the next call computes (nothing half-stored was found) and stores exactly once
    assert cached("demo", "run", MODEL, Config(1), lambda: 42).value == 42
    assert status().artifacts == 1


@dataclass(frozen=True)
class Nested:
    name: str
    matrix: np.ndarray
    pair: tuple[int, float]
    inner: Config
    by_layer: dict


def test_codec_round_trips_dataclasses_arrays_tuples_and_int_keys(monkeypatch):
    from backend.store import codec

    monkeypatch.setattr(codec, "ALLOWED_MODULE_PREFIXES", ("backend.", "tests."))
    value = Nested("x", np.eye(2, dtype=np.float32), (1, 2.5), Config(2), {0: [1, 2], 1: None})
    back = loads(dumps(value))
    assert isinstance(back, Nested) and isinstance(back.inner, Config)
    assert back.matrix.dtype == np.float32
    np.testing.assert_array_equal(back.matrix, value.matrix)
    assert back.pair == (1, 2.5) and back.by_layer == {0: [1, 2], 1: None}


def test_codec_refuses_types_outside_backend():
    import json

    import pytest

    evil = json.dumps({"__dataclass__": "os:system", "fields": {}})
    with pytest.raises(ValueError):
        loads(evil)


def test_slices_are_stored_and_found_by_position_and_shared_with_cached(fresh_store):
    from backend.store.artifacts import lookup_many, store_many
    from backend.store.runs import RunFilter, list_runs

    configs = [Config(1), Config(2), Config(1), Config(3)]
    assert lookup_many("demo", "item", MODEL, configs) == {}
    store_many("demo", "item", MODEL, [(Config(1), "one"), (Config(2), "two")], seconds_each=0.5)
    assert lookup_many("demo", "item", MODEL, configs) == {0: "one", 1: "two", 2: "one"}
    assert lookup_many("demo", "item", MODEL, configs, code_version="2") == {}
    hit = cached("demo", "item", MODEL, Config(2), lambda: "recomputed")
    assert hit.cached and hit.value == "two" and hit.seconds == 0.5
    assert len(list_runs(RunFilter(feature="demo"))) == 1  # the cache hit; stored slices are parts, not runs


def test_latest_returns_the_newest_result_of_any_config_for_that_model(fresh_store):
    from backend.store.artifacts import latest

    assert latest("demo", "run", MODEL) is None
    cached("demo", "run", MODEL, Config(1), lambda: "first")
    cached("demo", "run", MODEL, Config(2, alpha=2.0), lambda: "second")
    cached("demo", "run", ModelRef("other", "beef"), Config(3), lambda: "other model")
    found = latest("demo", "run", MODEL)
    assert found.value == "second" and found.params == {"n": 2, "alpha": 2.0}
    assert latest("demo", "run", MODEL, code_version="2") is None


def test_cached_many_computes_each_missing_config_once_in_one_call(fresh_store):
    from backend.store.artifacts import cached_many

    calls = []

    def compute(missing):
        calls.append(list(missing))
        return [f"v{c.n}" for c in missing]

    store_first = cached("demo", "item", MODEL, Config(1), lambda: "stored")
    assert not store_first.cached
    done = cached_many("demo", "item", MODEL, [Config(1), Config(2), Config(2), Config(3)], compute)
    assert done.values == ["stored", "v2", "v2", "v3"] and done.hits == 1 and done.computed == 2
    assert calls == [[Config(2), Config(3)]]
    again = cached_many("demo", "item", MODEL, [Config(3), Config(2)], compute)
    assert again.values == ["v3", "v2"] and again.hits == 2 and again.computed == 0 and len(calls) == 1


def test_stored_only_serves_hits_and_raises_on_a_miss_with_the_typical_compute_time(fresh_store):
    from backend.store import NotStored, stored_only

    def boom():
        raise AssertionError("computed inside stored_only")

    first = cached("demo", "run", MODEL, Config(1), lambda: 1)
    with stored_only():
        assert cached("demo", "run", MODEL, Config(1), boom).cached
        with pytest.raises(NotStored) as miss:
            cached("demo", "run", MODEL, Config(2), boom)
        assert miss.value.estimate_seconds == pytest.approx(first.seconds, abs=1e-6)  # the one earlier run's
        with pytest.raises(NotStored) as never_ran:
            cached("demo", "run", ModelRef("other", "abcd"), Config(1), boom)
        assert never_ran.value.estimate_seconds is None  # no earlier run of it on that model
    assert not cached("demo", "run", MODEL, Config(2), lambda: 2).cached  # outside: computes as before


def test_stored_only_serves_a_stored_slice_and_raises_on_a_miss_in_it(fresh_store):
    """cached_many keeps the rule of stored_only too: a page's probe never computes part of a slice unseen."""
    from backend.store import NotStored, stored_only
    from backend.store.artifacts import cached_many

    def boom(missing):
        raise AssertionError("computed inside stored_only")

    cached_many("demo", "item", MODEL, [Config(1), Config(2)], lambda missing: [c.n for c in missing])
    with stored_only():
        assert cached_many("demo", "item", MODEL, [Config(2), Config(1)], boom).values == [2, 1]
        with pytest.raises(NotStored) as miss:
            cached_many("demo", "item", MODEL, [Config(1), Config(3), Config(4)], boom)
        assert miss.value.estimate_seconds is not None  # two missing items at the typical time of one
