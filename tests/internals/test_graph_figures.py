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
    marks = list(zip(edges.x, edges.y))
    assert len(set(marks)) == len(marks), "each edge clickable at a point of its own"
    assert not set(marks) & set(zip(states.x, states.y))
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


def _on_line(point, path) -> bool:
    """Whether `point` lies on the polyline start -> middle -> end."""
    for (xa, ya), (xb, yb) in zip(path, path[1:]):
        cross = (xb - xa) * (point[1] - ya) - (yb - ya) * (point[0] - xa)
        inside = all(min(a, b) - 1e-9 <= c <= max(a, b) + 1e-9 for a, b, c in ((xa, xb, point[0]), (ya, yb, point[1])))
        if abs(cross) < 1e-9 and inside:
            return True
    return False


def test_edges_sharing_a_middle_each_get_a_click_point_of_their_own_on_their_line():
    from app.figures.inspect_graph import _path
    from backend.internals.graph import GraphEdge, GraphNode, GraphResult

    post = [GraphNode(0, p, "post") for p in range(3)]
    mid = [GraphNode(1, p, "mid") for p in range(3)]
    # attention 0 -> 2 and the residual at 1 share a middle; two heads of 0 -> 2 share their whole line; attention
    # from 2 to itself joins the states the residual at 2 joins (two heads of it, too)
    edges = (GraphEdge(post[0], mid[2], "attn", 0, 0.5), GraphEdge(post[1], mid[1], "resid", None, 0.4),
             GraphEdge(post[0], mid[2], "attn", 1, 0.3), GraphEdge(post[2], mid[2], "resid", None, 0.2),
             GraphEdge(post[2], mid[2], "attn", 0, 0.15), GraphEdge(post[2], mid[2], "attn", 1, 0.1))
    result = GraphResult(tokens=("a", "b", "c"), position=2, threshold=0.1, per_head=True, n_layers=1,
                         nodes=(*post, *mid), edges=edges)
    markers = next(t for t in graph_figure(result).data if t.name == "edges")
    points = list(zip(markers.x, markers.y))
    assert len(set(points)) == len(edges), "an edge whose marker sits under another's cannot be clicked"
    assert points[1] == _path(edges[1])[1] and points[3] == _path(edges[3])[1], "a residual keeps its middle"
    assert all(_on_line(p, _path(e)) for p, e in zip(points, edges))
    # no edge's marker near a state's (a layer is 26 px tall, a position wider): it would take the state's clicks
    nodes = [(n.position, node_y(n.layer, n.stage)) for n in result.nodes]
    assert all(abs(x - nx) >= 0.09 or abs(y - ny) >= 0.2 for x, y in points for nx, ny in nodes)
