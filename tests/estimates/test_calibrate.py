"""backend/estimates/calibrate.py: the probe forward runs as computations do (a thread of its own, the model's
lock held there), and a busy model is not probed."""
import threading

from torch import nn

from backend.estimates.calibrate import probe, probe_model
from backend.models.locks import model_lock
from backend.store.timings import PROBE, recent_timings


def test_the_probe_forward_holds_the_models_lock_in_its_own_thread_and_is_stored(fresh_store):
    from backend.models import load

    handle = load("tiny-llama")
    seen: list[tuple[bool, bool]] = []  # (the lock held by the forward's thread, that thread is not the caller's)
    caller = threading.get_ident()
    lock = model_lock(handle.model)
    hook = handle.model.register_forward_pre_hook(
        lambda module, args: seen.append((lock.held_here, threading.get_ident() != caller)))
    try:
        timing = probe(handle.model, handle.fingerprint, nice=1)
    finally:
        hook.remove()
    assert seen and all(held and other for held, other in seen)
    assert timing.seconds > 0 and timing.nice == 1
    assert recent_timings("", PROBE, handle.fingerprint) == [timing]


def test_a_model_busy_with_another_computation_is_not_probed(fresh_store):
    from backend.models import load

    handle = load("tiny-llama")
    with model_lock(handle.model):  # held by this thread: the probe's own thread cannot take it
        assert probe(handle.model, handle.fingerprint) is None
    assert recent_timings("", PROBE, handle.fingerprint) == []


def test_the_model_of_a_subject_is_found_where_verbs_keep_it():
    class Held:
        def __init__(self, model):
            self.model = model

    model = nn.Linear(2, 2)
    assert probe_model(Held(model)) is model
    assert probe_model(type("OnData", (), {"handle": Held(model)})()) is model
    assert probe_model(type("Pair", (), {"base": Held(model)})()) is model
    assert probe_model(object()) is None
