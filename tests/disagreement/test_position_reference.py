"""data/reference/disagreement_drilldowns.jsonl.gz (scripts/first_view_drilldowns.py): every position of both
rollouts of the page's first view (the shipped trace of the embedded pair) opens from the store on a fresh install,
keyed exactly as the page asks (`PositionConfig(trace, i, source, top_k=10)`), with the top-k pass it reads."""
import json
from types import SimpleNamespace

import pytest

from backend.disagreement.analysis import TraceConfig, trace
from backend.disagreement.eopd import EopdParams
from backend.disagreement.position import PositionConfig, TopKKey, position, rollout_topk
from backend.store.artifacts import ModelRef
from backend.store.codec import loads
from backend.store.reference_files import REFERENCE_DIR, read_reference
from tests.support.reference_clicks import served_from_the_store


def test_every_position_of_the_first_view_opens_from_the_shipped_drilldowns(fresh_store):
    (view,) = [row for row in read_reference(REFERENCE_DIR / "embedded.jsonl.gz")
               if (row["feature"], row["action"]) == ("disagreement", "trace")]
    pair = SimpleNamespace(ref=ModelRef("embedded pair", view["fingerprint"]))  # what a pair verb is keyed on
    params = json.loads(view["params"])
    config = TraceConfig(params["question"], params["answer"], params["max_new_tokens"], EopdParams(**params["eopd"]))
    assert trace.store_key(pair, config) == view["key"]
    traced = loads(view["payload"])
    wanted = [PositionConfig(config, i, r.source, top_k=10) for r in (traced.base, traced.reasoning)
              for i in range(r.length)]
    shipped = {row["key"] for row in read_reference(REFERENCE_DIR / "disagreement_drilldowns.jsonl.gz")}
    top_k = {rollout_topk.store_key(pair, TopKKey(config, source, 10)) for source in ("base", "reasoning")}
    assert shipped == {position.store_key(pair, c) for c in wanted} | top_k
    opened = served_from_the_store(fresh_store, position, pair, wanted[::5])
    for c, r in zip(wanted[::5], opened):
        rollout = traced.base if c.source == "base" else traced.reasoning
        assert r.token_id == rollout.token_ids[c.position] and len(r.base_top) == 10
        assert r.signals["js"] == pytest.approx(float(rollout.signals["js"][c.position]), rel=1e-5, abs=1e-6)
