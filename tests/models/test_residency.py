"""Resident models are an LRU under DASH_MODEL_MEMORY_MB: idle ones are evicted, in-use ones never, and an
evicted model loads again on demand, saying so."""
import gc
import os

import pytest

from backend.errors import UserError
from backend.models import load, loaded_ids, loading, memory_use
from backend.models.locks import model_lock
from tests.support.tiny import build_tiny_model


@pytest.fixture
def ids(monkeypatch, request, tmp_path):
    """Three tiny models under ids of this test's own (so no other test holds or has evicted them), and a
    budget that fits two of them (about 0.42 MB of weights each) but not three."""
    sources = {key: build_tiny_model(arch, tmp_path / key) for key, arch in zip("abc", ("llama", "qwen2", "qwen3"))}
    names = {key: f"resid-{request.node.name[5:30]}-{key}" for key in sources}
    extra = ";".join(f"{names[key]}={path}" for key, path in sources.items())
    monkeypatch.setenv("DASH_EXTRA_MODELS", os.environ["DASH_EXTRA_MODELS"] + ";" + extra)
    monkeypatch.setenv("DASH_MODEL_MEMORY_MB", "1")
    # a residency of the test's own: models other tests hold (and keep in memory) do not count against it
    monkeypatch.setattr(loading, "_resident", loading.Residency(lambda handle: handle.model, loading.in_use))
    return names


def test_the_least_recently_used_idle_model_is_evicted_and_reloads_with_a_note(ids):
    load(ids["a"]), load(ids["b"])
    assert {ids["a"], ids["b"]} <= set(loaded_ids())
    load(ids["a"])  # a is now more recently used than b
    gc.collect()
    assert not load(ids["c"]).reloaded
    resident = loaded_ids()
    assert ids["b"] not in resident and {ids["a"], ids["c"]} <= set(resident)
    used, budget = memory_use()
    assert used <= budget == 2**20
    gc.collect()
    messages = []
    handle = load(ids["b"], progress=lambda fraction, message: messages.append(message))
    assert handle.reloaded and handle.resident_bytes > 0
    assert messages[-1].endswith("reloaded after eviction")
    assert ids["a"] not in loaded_ids()  # a was the least recently used once c had been loaded


def test_a_model_in_use_is_never_evicted(ids):
    a = load(ids["a"])
    load(ids["b"])
    with model_lock(a.model):  # a computation is running on a (the least recently used)
        c = load(ids["c"])
        assert ids["a"] in loaded_ids() and ids["b"] not in loaded_ids()
        gc.collect()
        with model_lock(c.model), pytest.raises(UserError, match="in use by running computations"):
            load(ids["b"])  # a and c busy: no room, refused with the budget named
    del a, c  # the computations are over
    assert load(ids["b"]).reloaded  # b loads again


def test_an_evicted_model_a_computation_still_holds_counts_and_comes_back_without_a_second_copy(ids):
    a = load(ids["a"])  # a computation holds a between its locked steps (its lock is free)
    load(ids["b"])
    load(ids["c"])  # a evicted (idle, least recently used) but still in memory: it still counts, so b goes too
    assert ids["a"] not in loaded_ids() and ids["b"] not in loaded_ids()
    used, budget = memory_use()
    assert a.resident_bytes + load(ids["c"]).resident_bytes == used <= budget
    assert load(ids["a"]) is a  # the same weights, not read again


def test_a_computation_holding_only_the_model_still_counts(ids):
    model = load(ids["a"]).model  # e.g. a hook set or a decoder that kept the module, not the handle
    load(ids["b"])
    load(ids["c"])  # a evicted, its weights still held
    gc.collect()
    used, _ = memory_use()
    assert used == sum(p.numel() * p.element_size() for p in model.parameters()) \
        + sum(b.numel() * b.element_size() for b in model.buffers()) + load(ids["c"]).resident_bytes
    assert load(ids["a"]).reloaded  # its handle is gone: read again (the held module is a computation's own)


def test_a_model_larger_than_the_whole_budget_is_refused_by_name(monkeypatch, ids):
    monkeypatch.setenv("DASH_MODEL_MEMORY_MB", "0.1")
    with pytest.raises(UserError, match="DASH_MODEL_MEMORY_MB"):
        load(ids["c"])


def test_the_budget_setting_is_checked(monkeypatch):
    from backend.config import settings

    monkeypatch.setenv("DASH_MODEL_MEMORY_MB", "lots")
    with pytest.raises(UserError, match="DASH_MODEL_MEMORY_MB must be a number"):
        settings()
    monkeypatch.delenv("DASH_MODEL_MEMORY_MB")
    assert settings().model_memory_bytes == 12 * 2**30
