"""The Inspect page's attribution tab: which input tokens an output token came from (captum), for one target or a
greedy continuation. Widgets come from AttributeConfig's fields; the figure from app.figures.inspect_attribution."""
from __future__ import annotations

import streamlit as st

from app.figures.inspect_attribution import attribution_figure, what
from app.ui.params import number_for, select_for
from app.ui.run import ASK, run_verb
from app.ui.text import literal
from backend.internals import AttributeConfig, attribute
from backend.internals.attribution_methods import ATTRIBUTIONS

LABELS = {name: ATTRIBUTIONS.get(name).label for name in ATTRIBUTIONS.names()}


def summary(result) -> str:
    """One caption: what f is, its value on the input and on the baseline, and (integrated gradients) the check."""
    f = what(result)
    first = (f"{f}({result.targets[0]!r}) = {result.f_input[0]:.4g} after the prompt, {result.f_baseline[0]:.4g} "
             f"after the baseline (every token replaced by {result.baseline_token!r}).")
    if result.deltas is None:
        return first
    total = float(result.scores[0][: result.n_prompt].sum())
    return (f"{first} Integrated gradients: the scores sum to {total:.4g} = f(input) − f(baseline) "
            f"{result.f_input[0] - result.f_baseline[0]:.4g} up to the convergence delta {result.delta:+.2e} "
            f"(more steps make it smaller).")


def attribution_tab(handle, prompt: str) -> None:
    c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
    method = select_for(AttributeConfig, "method", "Method", labels=LABELS, container=c1, key="inspect-attr-method")
    target = c2.text_input("Target token (empty: the model's prediction)", key="inspect-attr-target",
                           persist_state="session", help="Exactly one token; mind the leading space (' Paris').")
    generate = number_for(AttributeConfig, "generate", "Or generate N tokens", container=c3, key="inspect-attr-gen")
    function = select_for(AttributeConfig, "function", "Attribute", container=c4, key="inspect-attr-function")
    st.caption(literal(ATTRIBUTIONS.get(method).help))
    computed = run_verb(attribute, handle, AttributeConfig(prompt=prompt, method=method, target=target,
                                                           generate=generate, function=function),
                        label="Input attribution", when=ASK)
    if computed is None:
        return
    result = computed.value
    st.caption(literal(summary(result)))
    st.plotly_chart(attribution_figure(result), width="stretch", key="inspect-attr-figure")
    if len(result.targets) > 1:
        st.caption("Continuation: " + literal(repr("".join(result.targets))))
