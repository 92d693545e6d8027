"""The Decoding page's ConvexBench tab: the stored F1-against-depth benchmark first (it opens in seconds), then the
direct and decomposed strategies live on generated problems of any depth or on a typed expression."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.figures import convexity as figs
from app.ui.downloads import table_downloads
from app.ui.guarded import guarded
from app.ui.params import number_for
from app.ui.run import run_verb
from app.ui.text import literal
from backend.decoding.convexity import (CONVEX_STRATEGIES, ConvexSettings, answer_on_model, run_convex_batch,
                                        typed_problem)
from backend.results import load_result
from backend.tasks.convexity import convex_problem

RESULT = "convexbench"


def stored_view(handle) -> None:
    """The committed benchmark (bench/convexbench.py): the current model's when it was measured, else the first."""
    stored = load_result(RESULT)
    if not stored or not stored.get("models"):
        st.info("No stored ConvexBench result: run one below, or `python -m backend decode compare --task convexbench`.")
        return
    models = stored["models"]
    ours = next((m for m in models.values() if m.get("fingerprint") == handle.fingerprint), None)
    shown = ours or next(iter(models.values()))
    other = "" if ours else " (not the selected model)"
    rounds = shown.get("rounds")
    st.markdown(f"**Stored benchmark** on {literal(shown['model'])}{other}: {rounds} problem(s) per depth, labels "
                f"balanced over convex / concave / neither, `{stored['command']}`"
                + ("" if stored.get("finished") else " (partial run)") + ".")
    left, right = st.columns([3, 2])
    left.plotly_chart(figs.f1_vs_depth(shown["f1"]), width="stretch", key="cvx-stored-f1")
    if shown.get("rules"):
        right.plotly_chart(figs.rule_accuracy(shown["rules"]), width="stretch", key="cvx-stored-rules")
    frame = pd.DataFrame(shown["f1"])
    st.dataframe(frame, hide_index=True, width="stretch")
    table_downloads(frame, "convexbench-stored", key="cvx-stored-export")


def _typed(handle, strategies: list[str]) -> None:
    expression = st.text_input("Expression in x, y, z (numbers, + - * / ** ( ), exp)", "exp(2*x - 1) - y**2",
                               key="cvx-expression", persist_state="session", max_chars=20_000)
    if not st.button("Ask", key="cvx-ask", type="primary"):
        return
    problem = guarded(lambda: typed_problem(expression))
    if problem is None:
        return
    st.caption(f"The composition rules say: **{problem.label}** ('neither' = not certified by them).")
    for name in strategies:
        done = run_verb(lambda p, name=name: answer_on_model(handle, problem, name, progress=p),
                        label=CONVEX_STRATEGIES.get(name).label)
        if done is None:
            continue
        r = done.value
        st.markdown(f"**{literal(CONVEX_STRATEGIES.get(name).label)}**: {r.answer}")
        if r.nodes:
            st.dataframe(pd.DataFrame([{"node": n.node, "operator": n.text, "question": n.question,
                                        "answer": n.answer, "truth": n.truth} for n in r.nodes]),
                         hide_index=True, width="stretch")


def convexbench_tab(handle) -> None:
    st.write("Is a deeply composed expression convex, concave or neither? **Direct** asks about the whole "
             "expression at once; **decomposed** parses it with sympy and asks about one operator at a time, the "
             "composition rules combining the answers (ConvexBench). Answers are the most probable candidate word.")
    stored_view(handle)
    st.divider()
    strategies = st.multiselect("Strategies", list(CONVEX_STRATEGIES.names()), default=list(CONVEX_STRATEGIES.names()),
                                format_func=CONVEX_STRATEGIES.labels().get, key="cvx-strategies",
                                persist_state="session")
    source = st.radio("Expressions", ["Generated", "Own expression"], horizontal=True, key="cvx-source",
                      persist_state="session")
    if source == "Own expression":
        _typed(handle, strategies)
        return
    c1, c2, c3 = st.columns(3)
    depth = number_for(ConvexSettings, "depth", "Depth", container=c1, key="cvx-depth")
    count = number_for(ConvexSettings, "problems", "Problems", container=c2, key="cvx-problems")
    seed = number_for(ConvexSettings, "seed", "Seed", container=c3, min_value=0, key="cvx-seed")
    example = guarded(lambda: convex_problem(int(depth), 0, int(seed)))
    if example is not None:
        with st.expander(f"Problem 1 of depth {depth} (label: {example.label})"):
            st.code(example.expression, language=None, wrap_lines=True)
    if st.button("Run ConvexBench", key="cvx-run", type="primary"):
        done = run_verb(lambda p: run_convex_batch(handle, strategies, [int(depth)], int(count), int(seed), p),
                        label="ConvexBench")
        if done is not None:
            st.session_state["cvx-batch"] = (handle.id, done.value)
    found = st.session_state.get("cvx-batch")
    if found is None or found[0] != handle.id:
        return
    batch = found[1]
    table = pd.DataFrame(batch.f1_table())
    st.dataframe(table, hide_index=True, width="stretch")
    table_downloads(table, "convexbench", key="cvx-export")
    rules = batch.rule_accuracy()
    if rules:
        st.plotly_chart(figs.rule_accuracy(rules), width="stretch", key="cvx-rules")
    with st.expander("Per-problem answers"):
        st.dataframe(pd.DataFrame([{"strategy": r.strategy, "depth": r.depth, "problem": r.problem_id,
                                    "label": r.label, "answer": r.answer, "correct": r.correct,
                                    "node errors": sum(n.answer != n.truth for n in r.nodes),
                                    "expression": r.expression} for r in batch.rows]),
                     hide_index=True, width="stretch")
