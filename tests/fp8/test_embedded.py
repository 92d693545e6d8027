"""Integration (embedded SmolLM2-135M, 30 layers, 9 heads / 3 kv heads): power iteration matches the exact sigma."""
import numpy as np
import pytest

from backend.fp8.bounds import BoundsConfig, weight_bounds
from backend.models import embedded, load

pytestmark = pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                                reason="embedded model not prepared (python -m backend models prepare)")


def test_embedded_model_power_iteration_matches_exact():
    handle = load("smollm2-135m-instruct")
    w = weight_bounds(handle.model, BoundsConfig(n_texts=0))
    assert w["check"] < 1e-4 and w["rope"] and not w["qk_norm"]
    assert w["sigma"].shape == (30, 9)
    assert (w["rotation_safe"] >= w["rank_aware"]).all() and np.isfinite(w["bound"]).all()
