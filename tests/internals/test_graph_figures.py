"""The graph, score and grid figures: every edge and state has a clickable point naming it, token text stays data,
and the page reads a click back as the item it names."""
from app.figures.inspect_graph import graph_figure, grid_figure, node_y, scores_figure
from app.figures.inspect_graph import EDGE, NODE
from app.ui.drilldown import Clicked
from app.ui.inspect_graph import GRAPH_ITEM
from backend.internals.graph import compute_graph
from backend.internals.graph_config import GraphConfig, GridConfig, HeadScoresConfig
from backend.internals.head_scores import compute_grid, compute_head_scores

PROMPT = "<b>hi</b> & <b>hi</b>"


def test_graph_points_name_every_edge_and_state(tiny_handle):
    result = compute_graph(tiny_handle.model, tiny_handle.tokenizer, GraphConfig(prompt=PROMPT, threshold=0.005))
    fig = graph_figure(result)
    edges = next(t for t in fig.data if t.name == "edges")
    states = next(t for t in fig.data if t.name == "states")
    assert [list(c) for c in edges.customdata] == [["edge", i] for i in range(len(result.edges))]
    assert [tuple(c) for c in states.customdata] == [("node", n.layer, n.position, n.stage) for n in result.nodes]
    assert list(states.y) == [node_y(n.layer, n.stage) for n in result.nodes]
    texts = list(fig.layout.xaxis.ticktext) + list(edges.text) + list(states.text)
    assert all("<b>" not in t for t in texts), "token text is shown, never rendered"
    clicked = lambda customdata: GRAPH_ITEM.read(Clicked("map", ({"customdata": customdata},)))  # noqa: E731
    assert [clicked(c) for c in states.customdata] == [NODE.of(n.layer, n.position, n.stage) for n in result.nodes]
    assert [clicked(c) for c in edges.customdata] == [EDGE.of(i) for i in range(len(result.edges))]
    assert GRAPH_ITEM.read(Clicked("map")) is None


def test_score_map_and_grid_follow_the_results(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    scores = compute_head_scores(model, tokenizer, HeadScoresConfig(prompt=PROMPT, score="duplicate"))
    heatmap, clicks = scores_figure(scores).data
    assert heatmap.z.shape == (2, 4) and len(clicks.x) == 8
    grid = compute_grid(model, tokenizer, GridConfig(prompt=PROMPT, layer=1))
    panels = grid_figure(grid).data
    assert len(panels) == 4 and all(p.z.shape == (len(grid.tokens),) * 2 for p in panels)
    assert all("<b>" not in pair for row in panels[0].customdata for pair in row)
