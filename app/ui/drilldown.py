"""The one drill-down mechanism: a click on a chart picks an object (app/figures/clickable.py `Pickable`), and the
page's `Drilldown` remembers the pick in session state and opens it.

A chart's selection survives reruns, so only a selection that changed since that chart's last run picks: a
selection already acted on is not re-applied after the user picked something else (on another chart, or by another
route such as a click in a text). The session keys derive from the drill-down's name and the chart's key; tests set
`drilldown.key` directly, as AppTest cannot fire a Plotly selection. The selection only chooses: the drill-down's
numbers come from its backend verb, never from the event.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from app.figures.clickable import Picked, Pickable


def selected_points(event: Any) -> list[Mapping]:
    """The points of a `st.plotly_chart(..., on_select="rerun")` return value (none when nothing is selected)."""
    if not isinstance(event, Mapping):
        return []
    selection = event.get("selection")
    points = selection.get("points") if isinstance(selection, Mapping) else None
    return [p for p in points or [] if isinstance(p, Mapping)]


@dataclass(frozen=True)
class Clicked:
    """A clickable chart's selection on this run: the chart's key and its selected points."""
    chart: str
    points: tuple[Mapping, ...] = ()

    @classmethod
    def of(cls, chart: str, event: Any) -> Clicked:
        return cls(chart, tuple(dict(p) for p in selected_points(event)))


def clickable_chart(figure, key: str, **kwargs) -> Clicked:
    """Draw a chart whose points can be clicked (one point at a time); its selection on this run."""
    kwargs.setdefault("width", "stretch")
    return Clicked.of(key, st.plotly_chart(figure, key=key, on_select="rerun", selection_mode="points", **kwargs))


def within(*bounds: int) -> Callable[[Picked], bool]:
    """A pick whose values are indices into a `bounds`-shaped result (e.g. (n_layers, n_heads))."""
    return lambda picked: len(picked.values) == len(bounds) and all(
        isinstance(v, int) and 0 <= v < b for v, b in zip(picked.values, bounds))


def anything(picked: Picked) -> bool:
    return True


@dataclass(frozen=True)
class Drilldown:
    """What a click opens: the kinds of object it `opens`, remembered under keys derived from `name`."""
    name: str
    opens: tuple[Pickable, ...]

    @property
    def key(self) -> str:
        """Where the pick is kept (a `Picked`)."""
        return f"{self.name}-pick"

    def seen_key(self, chart: str) -> str:
        """Where the selection of `chart` last acted on is kept."""
        return f"{self.name}-seen-{chart}"

    def read(self, clicked: Clicked, fits: Callable[[Picked], bool] = anything) -> Picked | None:
        """The pick of the chart's selected points: the last point that reads as one of `opens` and fits."""
        for point in reversed(clicked.points):
            for pickable in self.opens:
                picked = pickable.read(point.get("customdata"))
                if picked is not None and fits(picked):
                    return picked
        return None

    def new_pick(self, *charts: Clicked, context: Hashable = None,
                 fits: Callable[[Picked], bool] = anything) -> Picked | None:
        """Remember the pick of a chart whose selection changed since its last run and return it (None when no
        chart has a new pick). `context`: what the pick is only valid with (e.g. the prompt).

        The point the click added is read first: a chart of several subplots (MT heads' two maps) keeps one
        selected point in each, so after a click on each map "the last point" was always the second map's, and a
        click back on the first map opened nothing new. A click on a point still selected deselects it (Plotly):
        nothing is added, and the drill-down stays on what it shows."""
        state, chosen = st.session_state, None
        for clicked in charts:
            signature, seen = tuple(repr(dict(p)) for p in clicked.points), self.seen_key(clicked.chart)
            before = state.get(seen)
            if before == signature:
                continue
            state[seen] = signature
            added = tuple(p for p, s in zip(clicked.points, signature) if s not in set(before or ()))
            picked = self.read(Clicked(clicked.chart, added), fits)  # none added: a point deselected, no pick
            if picked is not None:
                chosen = state[self.key] = replace(picked, context=context)
        return chosen

    def pick(self, *charts: Clicked, context: Hashable = None,
             fits: Callable[[Picked], bool] = anything) -> Picked | None:
        """The pick to open: a new one from `charts`, else the one remembered, when it still fits and was made
        in this `context` (a pick of another model, prompt or run is none)."""
        self.new_pick(*charts, context=context, fits=fits)
        picked = st.session_state.get(self.key)
        if not isinstance(picked, Picked) or picked.context != context or not fits(picked):
            return None
        if picked.kind not in {p.kind for p in self.opens}:
            return None
        return picked

    def pick_or_hint(self, *charts: Clicked, hint: str, context: Hashable = None,
                     fits: Callable[[Picked], bool] = anything) -> Picked | None:
        """`pick`, or with nothing to open, `hint` in the drill-down's place: how to open something."""
        picked = self.pick(*charts, context=context, fits=fits)
        if picked is None:
            st.caption(hint)
        return picked

    def choose(self, picked: Picked) -> None:
        """Open `picked`, chosen by another route than a chart (e.g. a click in a text)."""
        st.session_state[self.key] = picked

    def forget(self) -> None:
        st.session_state.pop(self.key, None)
