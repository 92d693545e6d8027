"""data/reference/inspect_first_view.jsonl.gz: what the Inspect page opens on (its example prompt, default
settings; the Graph tab first) on the embedded default model, keyed exactly as the page asks for it, so a fresh install shows a result."""
from backend.internals import AttentionConfig, DlaConfig, GraphConfig, LensConfig
from backend.internals import verbs
from backend.store.artifacts import artifact_key
from backend.store.codec import canonical_params, loads
from backend.store.reference_files import REFERENCE_DIR, read_reference


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
