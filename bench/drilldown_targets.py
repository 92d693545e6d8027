"""What bench/drilldown_clicks.py clicks: every drill-down of every page (app/ui/drilldown.py `Drilldown`), the chart
(or text) that opens it, and what only the opened drill-down writes on screen.

A `Target` names its drill-down by the `Drilldown` name the app declares, so tests/bench/test_drilldown_targets.py
can check that none is forgotten (a new `Drilldown(...)` in app/ or pages/ without a row here fails it).
`view`: "first" for the page's first view (the reference set serves its map on a fresh install), "computed" for a
map the bench has the page compute first (a new prompt, text or setting: no shipped row serves it).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# customdata of a clicked point: [kind, *fields, *extras] (app/figures/clickable.py)
Says = Callable[[list], tuple[str, ...]]
# How many fields name an object of each clicked kind (the Pickables of app/figures: HEAD, NODE, EDGE, CELL, ...)
FIELDS = {"head": 2, "node": 3, "edge": 1, "cell": 2, "neuron": 2, "position": 1, "step": 2, "particle": 3,
          "sentence": 1}


@dataclass(frozen=True)
class Target:
    page: str  # the page's url path
    tab: str | None  # the lazy tab the chart is in (None: the page's top)
    drilldown: str  # the app's Drilldown name (an f-string name: its constant prefix)
    chart: str  # Streamlit key of the clickable chart, or a CSS selector of clickable text when `text` is set
    kind: str  # the Pickable kind clicked (customdata[0]); for text: a label only
    says: Says  # texts only this object's drill-down writes (all must be on screen; "a || b": either)
    setup: str = ""  # a named step (bench/drilldown_clicks.py SETUPS) before the map is read: a method, a new input
    view: str = "first"
    text: bool = False  # `chart` selects clickable text pieces (not a Plotly chart)

    def object_of(self, customdata: list) -> list:
        """The fields that name the clicked object (its extras are for the hover only)."""
        return list(customdata[1:1 + FIELDS.get(self.kind, 1)])

    @property
    def label(self) -> str:
        where = f"{self.page}" + (f" › {self.tab}" if self.tab else "")
        return f"{where} · {self.drilldown} via {self.chart}" + (f" ({self.kind})" if not self.text else "") + (
            f" [{self.setup}]" if self.setup else "")


def _head_inspect(cd: list) -> tuple[str, ...]:
    return (f"Head L{cd[1]}H{cd[2]}",)


def _state(cd: list) -> tuple[str, ...]:
    return (f"position {cd[2]}", "Logit lens (top-k)")


def _sentence(cd: list) -> tuple[str, ...]:
    return (f"Sentence {cd[1] + 1} ·",)


def _step(cd: list) -> tuple[str, ...]:
    return (f"Round {cd[1] + 1}, particle", f"after token {cd[2] + 1}")


def _particle(cd: list) -> tuple[str, ...]:
    return (f"Round {cd[1] + 1}, particle {cd[3]} after token {cd[2] + 1}",)


TARGETS: tuple[Target, ...] = (
    Target("inspect", "Graph", "inspect-graph", "inspect-graph-map", "node", _state),
    # an attention edge opens its head; an MLP or residual edge says what it is
    Target("inspect", "Graph", "inspect-graph", "inspect-graph-map", "edge",
           lambda cd: ("Head L || edge at position",)),
    Target("inspect", "Direct logit attribution", "inspect-head", "inspect-dla-map", "head", _head_inspect),
    Target("inspect", "All heads", "inspect-heads-map", "inspect-heads-map", "head",
           lambda cd: (f"Head L{cd[1]}H{cd[2]}",)),
    Target("inspect", "Patch", "inspect-patch-cell-", "inspect-patch-map", "cell", lambda cd: ("Patched ",)),
    Target("mt_heads", None, "mt-drill-head", "mt-heat", "head", lambda cd: (f"Head L{cd[1]}.H{cd[2]}",)),
    Target("nag", "Graph", "nag-drill-neuron", "nag-graph", "neuron", lambda cd: (f"Neuron L{cd[1]}.N{cd[2]}",)),
    Target("nag", "Profile", "nag-drill-neuron", "nag-heatmap", "neuron", lambda cd: (f"Neuron L{cd[1]}.N{cd[2]}",)),
    Target("disagreement", None, "dis-position", "dis-trace-fig", "position",
           lambda cd: (f"Position {cd[1]} of the",)),
    Target("decoding", "ESS over time", "dec-particle", "dec-ess-fig", "step", _step),
    Target("decoding", "Genealogy", "dec-particle", "dec-genealogy", "particle", _particle),
    Target("fp8_bounds", None, "fp8-head", "fp8-heatmap", "head", lambda cd: (f"Layer {cd[1]}, head {cd[2]}",)),
    Target("fp8_bounds", None, "fp8-head", "fp8-bounds", "head", lambda cd: (f"Layer {cd[1]}, head {cd[2]}",)),
    Target("watermark", None, "wm-sentence", "wm-sentences", "sentence", _sentence),
    Target("watermark", None, "wm-sentence", ".wm-piece", "sentence in the text", lambda cd: ("Sentence ",),
           text=True),
    Target("watermark", None, "wm-token", ".wm-piece", "token in the text", lambda cd: ("Token “",),
           setup="kgw", text=True),
    # computed views: a map no shipped row serves, clicked once it is shown
    Target("inspect", "Direct logit attribution", "inspect-head", "inspect-dla-map", "head", _head_inspect,
           setup="new prompt", view="computed"),
    Target("disagreement", None, "dis-position", "dis-trace-fig", "position",
           lambda cd: (f"Position {cd[1]} of the",), setup="fewest new tokens", view="computed"),
    Target("watermark", None, "wm-sentence", "wm-sentences", "sentence", _sentence, setup="new text",
           view="computed"),
)


def in_bench_order(targets: tuple[Target, ...]) -> list[Target]:
    """First views before computed ones, and each page's first drill-down before any page's second: an overall
    deadline that cuts the run short still leaves one row per page."""
    seen: dict[tuple[str, str], int] = {}
    ranked = []
    for target in targets:
        rank = seen[(target.page, target.view)] = seen.get((target.page, target.view), -1) + 1
        ranked.append((target.view != "first", rank, target))
    return [t for *_, t in sorted(ranked, key=lambda r: r[:2])]
