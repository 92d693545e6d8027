"""data/reference/fp8_drilldowns.jsonl.gz (scripts/first_view_drilldowns.py): every head of the FP8 page's first
view (the shipped bounds of the embedded default model, default settings) opens from the store on a fresh install,
keyed exactly as the page asks (`HeadConfig(layer, head, BoundsConfig())`); the file holds exactly those."""
from backend.fp8 import BoundsConfig
from backend.fp8.bounds import bounds
from backend.fp8.head import HeadConfig, head_verb
from backend.store.artifacts import ModelRef
from backend.store.codec import loads
from backend.store.reference_files import REFERENCE_DIR, read_reference
from tests.support.reference_clicks import served_from_the_store


def test_every_head_of_the_first_view_opens_from_the_shipped_drilldowns(fresh_store):
    (view,) = [row for row in read_reference(REFERENCE_DIR / "embedded.jsonl.gz") if row["feature"] == "fp8"]
    model = ModelRef("embedded default model", view["fingerprint"])
    assert view["key"] == bounds.store_key(model, BoundsConfig()), "the first view is the default settings'"
    parent = loads(view["payload"])
    layers, heads = parent.bound.shape
    wanted = [HeadConfig(layer, h, BoundsConfig()) for layer in range(layers) for h in range(heads)]
    shipped = {row["key"] for row in read_reference(REFERENCE_DIR / "fp8_drilldowns.jsonl.gz")}
    assert shipped == {head_verb.store_key(model, c) for c in wanted}
    opened = served_from_the_store(fresh_store, head_verb, model, wanted[::7])
    for config, r in zip(wanted[::7], opened):
        assert r.bound == float(parent.bound[config.layer, config.head]) and r.n_logits > 0
        assert abs(r.observed_max - float(parent.observed[config.layer, config.head])) <= 1e-5 * r.observed_max
