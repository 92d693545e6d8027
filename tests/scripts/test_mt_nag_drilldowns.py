"""The shipped drill-downs of the MT heads and NAG first views (scripts/mt_nag_drilldowns.py): on a fresh install
(the reference set imported into an empty store) a click on any head of the MT heads page's first map and on any
neuron of the NAG Graph tab's first graph or of its Profile tab's first heatmap is served from the store, with no
model forward."""
import pytest

from backend.models import embedded
from backend.store.reference import import_reference
from scripts.mt_nag_drilldowns import mt_first_view, nag_first_view

FRESH_INSTALL_MODEL = "smollm2-135m-instruct"  # the default model without DASH_DEFAULT_MODEL (backend/config.py)


def _no_forward(*args, **kwargs):
    raise AssertionError("a first-view click computed its drill-down instead of reading the shipped one")


@pytest.mark.skipif(not embedded.is_prepared("gemma-3-270m"), reason="run `python -m backend models prepare` first")
def test_every_head_of_the_first_map_is_read_from_the_store(fresh_store, monkeypatch):
    import backend.mt.head_detail as head_detail_module
    from backend.mt import find_heads
    from backend.mt.head_detail import HeadDetailConfig, head_detail

    import_reference()
    handle, heads, data = mt_first_view()
    shown = find_heads(handle, heads, data)
    assert shown.cached  # the first map itself is shipped
    monkeypatch.setattr(head_detail_module, "compute_head_details", _no_forward)
    for layer in range(handle.info.n_layers):
        for head in range(handle.info.n_heads):
            clicked = head_detail(handle, HeadDetailConfig(heads=shown.value.config, layer=layer, head=head), data)
            assert clicked.cached and (clicked.value.config.layer, clicked.value.config.head) == (layer, head)


@pytest.mark.skipif(not embedded.is_prepared(FRESH_INSTALL_MODEL), reason="run `python -m backend models prepare` "
                                                                         "first")
def test_every_neuron_of_the_first_graph_and_profile_is_read_from_the_store(fresh_store, monkeypatch):
    import backend.nag.neuron as neuron_module
    from app.figures.nag import PROFILE_TOP
    from backend.nag.neuron import neuron_detail

    import_reference()
    handle, configs, docs, targets = nag_first_view(FRESH_INSTALL_MODEL)
    # the first graph's nodes (about 60), then the profile heatmap's cells (PROFILE_TOP per layer)
    assert len(configs) >= handle.info.n_layers * PROFILE_TOP
    monkeypatch.setattr(neuron_module, "compute_neurons", _no_forward)
    for config in configs:
        clicked = neuron_detail(handle, config, docs, targets)
        assert clicked.cached and (clicked.value.config.layer, clicked.value.config.neuron) == (
            config.layer, config.neuron)
