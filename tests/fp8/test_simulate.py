"""The spike transient: delayed scaling overflows at the spike, the geometry-aware scale does not."""
import numpy as np
import pytest

from backend.errors import UserError
from backend.fp8.formats import FORMATS, quantise
from backend.fp8.simulate import SimulateConfig, activation_schedule, simulate
from backend.models import load

SMALL = dict(n_steps=12, spike_step=6, n_texts=2, max_tokens=24)


def test_spike_overflows_delayed_scaling_only(fresh_store):
    handle = load("tiny-llama")
    computed = simulate(handle, SimulateConfig(layer=-1, spike_factor=4.0, **SMALL))
    sim = computed.value
    assert sim.layer == handle.info.n_layers - 1
    assert sim.overflow_geometry.sum() == 0
    assert sim.overflow_delayed[6] > 0  # the spike step: the history has not seen it yet
    assert (sim.amax <= sim.bound).all() and (sim.limit_geometry >= sim.amax).all()
    assert sim.limit_delayed[7] == pytest.approx(sim.amax[6])  # ...and learns it one step later
    assert sim.summary()["overflows_delayed"] == int(sim.overflow_delayed.sum())
    assert len(sim.table()) == 12
    again = simulate(handle, SimulateConfig(layer=handle.info.n_layers - 1, spike_factor=4.0, **SMALL))
    assert again.cached  # layer -1 and its positive index share one cache entry


def test_without_spike_and_drift_nothing_overflows(fresh_store):
    sim = simulate(load("tiny-qwen2"), SimulateConfig(spike_factor=1.0, drift=0.0, n_texts=1, n_steps=4,
                                                      spike_step=2, max_tokens=16)).value
    assert sim.overflow_delayed.sum() == 0 and sim.overflow_geometry.sum() == 0
    assert (sim.rel_error_geometry < 0.1).all()  # E4M3 keeps ~3 significant bits


def test_schedule_is_seeded_and_spiked():
    config = SimulateConfig(spike_factor=8.0, spike_step=3, spike_length=2, n_steps=10, drift=0.05, seed=4)
    a = activation_schedule(config)
    assert np.array_equal(a, activation_schedule(config))
    assert a[3] > 6 and a[4] > 6 and a[5] < 1.5


def test_quantise_clamps_before_casting():
    fmt = FORMATS["e4m3"]
    values = np.array([1.0, -2.5, 300.0, 1000.0, -5000.0], dtype=np.float32)
    q = quantise(values, 1.0, fmt)
    assert q.overflows == 2 and q.underflows == 0 and np.isfinite(q.rel_error)
    assert quantise(values[:3], 1.0, fmt).overflows == 0
    assert quantise(np.array([1e6], dtype=np.float32), 1.0, FORMATS["e5m2"]).nonfinite_unclamped == 1


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(layer=5), "out of range"),
    (dict(spike_step=40, n_steps=40), "spike"),
    (dict(spike_factor=0.0), "positive"),
    (dict(history_len=0), "history"),
    (dict(n_steps=1, spike_step=0), "steps"),
    (dict(fp8_format="int8"), "fp8_format must be one of e4m3, e5m2"),
    (dict(n_texts=0), r"n_texts must be in \[1, 8\], got 0"),
])
def test_bad_simulation_configs(kwargs, message, fresh_store):
    with pytest.raises(UserError, match=message):
        simulate(load("tiny-llama"), SimulateConfig(**kwargs))
