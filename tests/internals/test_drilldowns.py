"""Drill-downs of a whole map at once: each head's and each state's result from the one-forward batch equals the
per-click verb's, and once stored every click on the map's objects is a store read (no compute)."""
import numpy as np
import pytest

from backend.internals import HeadConfig, NodeConfig, head, node
from backend.internals.attention import compute_head, compute_heads
from backend.internals.graph import GraphEdge, GraphNode, GraphResult
from backend.internals.drilldowns import Drilldowns, dla_drilldowns, graph_drilldowns, store_drilldowns
from backend.internals.node import compute_node, compute_nodes
from backend.store.codec import to_jsonable
from tests.internals.helpers import PROMPT

HEADS = [HeadConfig(prompt=PROMPT, layer=1, head=3, position=-1), HeadConfig(prompt=PROMPT, layer=0, head=1,
                                                                            position=8),
         HeadConfig(prompt=PROMPT, layer=1, head=0, position=8, top_k=3),
         HeadConfig(prompt="Another prompt", layer=0, head=2, position=-1)]
NODES = [NodeConfig(prompt=PROMPT, layer=2, position=-1), NodeConfig(prompt=PROMPT, layer=1, position=5, stage="mid"),
         NodeConfig(prompt=PROMPT, layer=0, position=3), NodeConfig(prompt=PROMPT, layer=1, position=0, top_k=4),
         NodeConfig(prompt="Another prompt", layer=2, position=2, stage="mid")]


def _same(batch, single) -> None:
    """Equal results: every field the same (the same forward, the same arithmetic); numbers to the float rounding of
    a matrix product's width (a batch projects many writes onto the vocabulary at once)."""
    _close(to_jsonable(batch), to_jsonable(single), "")


def _close(a, b, where: str) -> None:
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-6), where
    else:
        assert a == b, where


def test_every_head_of_a_batch_is_the_single_heads_result(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    batch = compute_heads(model, tokenizer, HEADS)
    assert [(r.layer, r.head) for r in batch] == [(c.layer, c.head) for c in HEADS]
    for config, result in zip(HEADS, batch):
        _same(result, compute_head(model, tokenizer, config))
    assert batch[1].position == 8 and batch[0].position == len(PROMPT) - 1 and len(batch[2].promoted) == 3


def test_every_state_of_a_batch_is_the_single_states_result(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    batch = compute_nodes(model, tokenizer, NODES)
    for config, result in zip(NODES, batch):
        _same(result, compute_node(model, tokenizer, config))
    assert batch[1].writer == "attention" and batch[2].writer is None and len(batch[3].lens) == 4


def test_a_batch_refuses_what_a_single_request_refuses(tiny_handle):
    from backend.errors import UserError

    with pytest.raises(UserError, match="Layer 7 does not exist"):
        compute_heads(tiny_handle.model, tiny_handle.tokenizer, [HEADS[0], HeadConfig(prompt=PROMPT, layer=7)])
    with pytest.raises(UserError, match="outside the prompt"):
        compute_nodes(tiny_handle.model, tiny_handle.tokenizer, [NodeConfig(prompt=PROMPT, layer=1, position=99)])


def _graph(per_head: bool) -> GraphResult:
    """A drawn graph of a 3-token prompt on a 2-layer model: a residual, an MLP and two attention edges."""
    post, mid = (lambda layer, i: GraphNode(layer, i, "post")), (lambda layer, i: GraphNode(layer, i, "mid"))
    edges = (GraphEdge(post(0, 0), mid(1, 2), "attn", 3 if per_head else None, 0.3, () if per_head else (0.1, 0.2)),
             GraphEdge(post(1, 1), mid(2, 2), "attn", 0 if per_head else None, 0.2),
             GraphEdge(mid(1, 2), post(1, 2), "ffn", None, 0.5), GraphEdge(post(1, 2), mid(2, 2), "resid", None, 0.6),
             GraphEdge(mid(2, 2), post(2, 2), "resid", None, 0.9))
    nodes = tuple(dict.fromkeys(n for e in edges for n in (e.source, e.target)))
    return GraphResult(("a", "b", "c"), 2, 0.04, per_head, 2, nodes, edges)


@pytest.mark.parametrize("per_head", [False, True])
def test_the_drilldowns_of_a_graph_are_keyed_as_its_clicks_ask(per_head):
    result = _graph(per_head)
    wanted = graph_drilldowns("abc", result, 4)
    assert {(c.layer, c.position, c.stage) for c in wanted.nodes} == {(n.layer, n.position, n.stage)
                                                                     for n in result.nodes}
    assert all(c == NodeConfig(prompt="abc", layer=c.layer, position=c.position, stage=c.stage) for c in wanted.nodes)
    # an edge opens the head(s) of the block it enters, at its target position (app/ui/inspect_graph.py)
    expected = {(0, 3, 2), (1, 0, 2)} if per_head else {(layer, h, 2) for layer in (0, 1) for h in range(4)}
    assert {(c.layer, c.head, c.position) for c in wanted.heads} == expected
    assert all(c == HeadConfig(prompt="abc", layer=c.layer, head=c.head, position=2) for c in wanted.heads)
    dla_heads = dla_drilldowns("abc", -1, 2, 4)
    assert len(dla_heads.heads) == 8 and {c.position for c in dla_heads.heads} == {-1}
    both = wanted + dla_heads + dla_heads
    assert len(both) == len(wanted) + len(dla_heads), "a request wanted twice is computed once"


def test_stored_drilldowns_make_every_click_a_store_read(fresh_store, tiny_handle):
    info = tiny_handle.info
    wanted = dla_drilldowns(PROMPT, -1, info.n_layers, info.n_heads) + Drilldowns(nodes=tuple(NODES[:3]))
    done = store_drilldowns(tiny_handle, wanted)
    assert (done.hits, done.computed) == (0, len(wanted))
    for config in wanted.heads:
        clicked = head(tiny_handle, config)
        assert clicked.cached, f"{config} was computed on the click"
    for config in wanted.nodes:
        assert node(tiny_handle, config).cached
    again = store_drilldowns(tiny_handle, wanted)
    assert (again.hits, again.computed) == (len(wanted), 0)
    one = head(tiny_handle, wanted.heads[5]).value
    assert np.array_equal(one.pattern, compute_head(tiny_handle.model, tiny_handle.tokenizer,
                                                    wanted.heads[5]).pattern)


def test_a_stop_during_the_pass_ends_it_at_the_next_chunk_and_stores_nothing(fresh_store, tiny_handle):
    from backend.progress import Stopped

    heads = tuple(HeadConfig(prompt=PROMPT, layer=layer, head=h, position=p) for p in range(10)
                  for layer in range(2) for h in range(4))  # 80 heads: two chunks of the projection
    reports = []

    def progress(fraction: float, message: str) -> None:
        reports.append(message)
        if "64 of 80 heads" in message:  # the first chunk done: the user pressed Stop
            raise Stopped

    with pytest.raises(Stopped):
        store_drilldowns(tiny_handle, Drilldowns(heads=heads), progress)
    assert not any("80 of 80" in m for m in reports), "the second chunk ran after the Stop"
    assert not any(head.all_stored(tiny_handle, [c]) for c in heads), "nothing partial is stored"
