"""data/reference/inspect_first_view.jsonl.gz: what the Inspect page opens on (its example prompt, default
settings; the Graph tab first) on the embedded default model, keyed exactly as the page asks for it, so a fresh install shows a result."""
from backend.internals import (EXAMPLE_PROMPT, AttentionConfig, DlaConfig, GraphConfig, LensConfig, NodeConfig,
                               dla_drilldowns, graph_drilldowns)
from backend.internals import verbs
from backend.store.artifacts import ModelRef, artifact_key
from backend.store.codec import canonical_params, loads
from backend.store.reference_files import REFERENCE_DIR, read_reference
from tests.support.reference_clicks import served_from_the_store


def test_the_shipped_first_view_is_keyed_as_the_page_asks():
    rows = {row["action"]: row for row in read_reference(REFERENCE_DIR / "inspect_first_view.jsonl.gz")}
    expected = {"lens": (LensConfig(), verbs.lens.code_version), "dla": (DlaConfig(), verbs.dla.code_version),
                "attention": (AttentionConfig(), verbs.attention.code_version),
                "graph": (GraphConfig(), verbs.graph.code_version)}
    assert set(rows) == set(expected)
    for action, (config, version) in expected.items():
        row = rows[action]
        assert row["key"] == artifact_key("inspect", action, row["fingerprint"], canonical_params(config), version)
    lens, dla = loads(rows["lens"]["payload"]), loads(rows["dla"]["payload"])
    assert lens.predicted_token == " Paris" and lens.predicted_rank[-1] == 0
    assert abs(dla.total - dla.logit) < 1e-4 and dla.target_token == " Paris"
    graph = loads(rows["graph"]["payload"])
    assert graph.nodes[-1].layer == graph.n_layers and graph.position == len(graph.tokens) - 1
    assert any(e.kind == "attn" for e in graph.edges), "the page opens on a graph with attention edges"


def test_every_object_of_the_first_view_opens_from_the_shipped_drilldowns(fresh_store):
    """data/reference/inspect_drilldowns.jsonl.gz (scripts/first_view_drilldowns.py): every head of the attribution
    map, every state of the graph and every head behind its attention edges, each a store read on a fresh install;
    the file holds exactly those."""
    view = {row["action"]: row for row in read_reference(REFERENCE_DIR / "inspect_first_view.jsonl.gz")}
    shown, attributed = loads(view["graph"]["payload"]), loads(view["dla"]["payload"])
    n_layers, n_heads = attributed.heads.shape
    wanted = (graph_drilldowns(EXAMPLE_PROMPT, shown, n_heads)
              + dla_drilldowns(EXAMPLE_PROMPT, DlaConfig().position, n_layers, n_heads))
    model = ModelRef("embedded default model", view["graph"]["fingerprint"])
    shipped = {row["key"] for row in read_reference(REFERENCE_DIR / "inspect_drilldowns.jsonl.gz")}
    assert shipped == ({verbs.head.store_key(model, c) for c in wanted.heads}
                       | {verbs.node.store_key(model, c) for c in wanted.nodes})
    heads = served_from_the_store(fresh_store, verbs.head, model, wanted.heads[:40] + wanted.heads[-40:])
    assert all(h.tokens == shown.tokens and h.promoted for h in heads)
    root = NodeConfig(prompt=EXAMPLE_PROMPT, layer=n_layers, position=shown.position, stage="post")
    nodes = served_from_the_store(fresh_store, verbs.node, model, [*wanted.nodes[::10], root])
    assert nodes[-1].lens[0].token == " Paris", "the last state read out is the model's prediction"
