"""Decoding side by side, streamed: each strategy's column is drawn as soon as that strategy finishes (greedy first,
the cheapest), each with its own progress and Stop while it runs. What finished is kept in the session after every
strategy, so a Stop (or any interruption) keeps the finished columns, marked as a partial comparison; each strategy's
run is stored on its own, complete, and a partial comparison is never stored as one."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from app.ui.run import STORED_FIRST, run_verb

STATE = "dec-results"  # the comparison on screen: a Comparison


@dataclass(frozen=True)
class Comparison:
    model_id: str
    strategies: tuple[str, ...]  # every strategy asked for, in the order they run
    results: tuple  # DecodeResult of those finished, in that order

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.strategies)

    def partial_line(self, labels: dict[str, str]) -> str:
        missing = [labels.get(s, s) for s in self.strategies[len(self.results):]]
        return (f"Partial comparison: {len(self.results)} of {len(self.strategies)} strategies finished before it "
                f"was stopped; not run: {', '.join(missing)}. Press Run for the whole comparison.")


def run_order(names) -> tuple[str, ...]:
    """Greedy first (one forward per token: its column is on screen first), the others in the order picked."""
    return tuple(sorted(names, key=lambda name: name != "greedy"))


def result_column(r, label: str) -> None:
    verdict = {True: ":green[correct]", False: ":red[wrong]", None: ":gray[no checker]"}[r.correct]
    st.markdown(f"**{label}** · {verdict}")
    st.metric("Answer", "-" if r.answer is None else r.answer)
    st.caption(f"{r.wall_seconds:.2f} s · {r.tokens_generated} tokens · {r.forward_passes} forward passes")
    with st.container(height=200):
        st.text(r.output or "(empty)")


def compare(model_id: str, names, run: Callable[[str, object], object], labels: dict[str, str],
            rerun: bool) -> Comparison:
    """The comparison to show: the session's (same model, not asked to run again), else computed now, streamed.
    `run(name, progress)` returns the strategy's Computed result (None on an error, already shown)."""
    shown = st.session_state.get(STATE)
    if not rerun and isinstance(shown, Comparison) and shown.model_id == model_id:
        return shown
    order = run_order(names)
    comparison = Comparison(model_id, order, ())
    st.session_state[STATE] = comparison
    columns = st.columns(len(order)) if order else []
    for name, column in zip(order, columns):
        with column:
            done = run_verb(lambda p, name=name: run(name, p), label=labels.get(name, name), when=STORED_FIRST)
            if done is None:  # an error (shown in its column): the comparison goes on without it
                comparison = Comparison(model_id, tuple(s for s in comparison.strategies if s != name),
                                        comparison.results)
            else:
                comparison = Comparison(model_id, comparison.strategies, (*comparison.results, done.value))
                result_column(done.value, labels.get(name, name))
            st.session_state[STATE] = comparison  # kept at once: a Stop of the next strategy keeps this one
    return comparison
