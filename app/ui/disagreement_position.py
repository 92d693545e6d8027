"""Disagreement page drill-down: a clicked position on the trace -> both models' top-10 next tokens there, every
divergence, and whether the guided gate (the Intervention tab's settings) fires there and why."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.figures.disagreement import POSITION, SIGNAL_LABELS, distributions_figure
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.prepared_drilldowns import prepare_drilldowns
from app.ui.run import NOW, STORED_FIRST, STORED_ONLY, AfterClick, run_verb
from app.ui.text import literal
from backend.disagreement import CalibrationConfig, GateConfig, InterveneConfig, ProblemSet, TraceConfig
from backend.disagreement.position import GateAtConfig, PositionConfig, gate_at, position, store_positions
from backend.disagreement.scoring import RolloutConfig, rollouts
from backend.params import default_of

DIS_POSITION = Drilldown("dis-position", (POSITION,))  # picked in the context of its rollout's source
GATE = "Gate at this position"  # the gate check's status box (and its Stop)


def gate_settings() -> tuple[GateConfig, float, ProblemSet]:
    """The Intervention tab's gate, budget and calibration problems (its widgets' values, else their defaults)."""
    state, gate = st.session_state, GateConfig()
    cal = default_of(CalibrationConfig, "problems")
    config = GateConfig(state.get("dis-gate-signal", gate.signal), int(state.get("dis-window", gate.window)),
                        capped=bool(state.get("dis-capped", gate.capped)),
                        decisive=bool(state.get("dis-decisive", gate.decisive)))
    problems = ProblemSet(int(state.get("dis-cal-n", cal.n)), cal.split, cal.seed)
    return config, float(state.get("dis-budget", default_of(InterveneConfig, "budget"))), problems


def position_drilldown(pair, trace_config: TraceConfig, rollout, trace: Clicked) -> None:
    """The picked position's drill-down, then every position of the drawn rollout prepared (one top-k pass,
    stored per position) so the next click is a store read."""
    _open(pair, trace_config, rollout, trace)
    every = [PositionConfig(trace_config, i, rollout.source, top_k=10) for i in range(rollout.length)]
    prepare_drilldowns(f"dis-position-prepare-{pair.ref.fingerprint}-{hash(tuple(every))}", f"the {len(every)} positions",
                       lambda progress: store_positions(pair, every, progress),
                       stored=lambda: position.all_stored(pair, every))


def _open(pair, trace_config: TraceConfig, rollout, trace: Clicked) -> None:
    picked = DIS_POSITION.pick_or_hint(trace, context=rollout.source, fits=within(rollout.length),
                                       hint="Click a point on the trace to see both models' next-token distributions "
                                            "at that position, every divergence there, and whether the intervention "
                                            "gate fires there.")
    if picked is None:
        return
    (i,) = picked.values
    config = PositionConfig(trace_config, i, rollout.source, top_k=10)
    done = run_verb(position, pair, config, label=f"Position {i}", when=STORED_FIRST)
    if done is None:
        return
    r = done.value
    st.subheader(f"Position {i} of the {r.source} rollout")
    # the whole context the models read there: the question, then what the rollout wrote before the position
    st.caption(f"Question: {literal(trace_config.question)}")
    st.caption(f"Written before it: {literal(r.prefix) or '(nothing: the first token)'} → written here: "
               f"{literal(r.token)}")
    st.plotly_chart(distributions_figure(r, pair.base.display_name, pair.reasoning.display_name), width="stretch",
                    key="dis-position-fig")
    table = pd.DataFrame([{"signal": SIGNAL_LABELS.get(k, k), "nats": v} for k, v in r.signals.items()])
    left, right = st.columns([2, 3])
    left.dataframe(table, hide_index=True, width="stretch")
    left.caption(f"log p of the written token: base {r.logp_base:.3f}, reasoning {r.logp_reason:.3f}; greedy "
                 f"tokens {'differ' if r.differs else 'agree'}.")
    with right:
        gate_view(pair, trace_config, r)


def gate_view(pair, trace_config: TraceConfig, r) -> None:
    gate, budget, problems = gate_settings()
    config = GateAtConfig(trace_config, r.position, r.source, gate, budget,
                          CalibrationConfig(problems, trace_config.max_new_tokens))

    def check(progress):
        return gate_at(pair, config, progress)

    done = run_verb(check, label=GATE, when=STORED_ONLY)
    if done is None:  # calibrated (its rollouts stored), the check takes a moment; otherwise minutes, asked first
        calibrated = run_verb(rollouts, pair, RolloutConfig(config.calibration.problems, "base",
                                                            config.calibration.max_new_tokens),
                              label="Calibration rollouts", when=STORED_ONLY) is not None
        done = run_verb(check, label=GATE, when=NOW if calibrated else AfterClick(
            "Check the gate here", "dis-gate-at", config,
            note=f"The gate (Intervention tab's settings: {literal(gate.signal)}, W = {gate.window}, r = "
                 f"{budget:.0%}) is calibrated on {problems.n} base rollouts of training problems; they are "
                 "computed once and stored."))
    if done is None:
        return
    g = done.value
    st.markdown(f"**Gate {'fires' if g.fired else 'does not fire'}** at this position "
                f"(budget r = {g.budget:.0%}, calibrated τ = {g.tau:.4g}, λ = {g.lam:.3g}).")
    st.caption(f"Rule: {literal(g.rule)}")
    st.caption(literal(g.reason))
    st.caption("Replayed along this rollout as if no earlier takeover had changed it.")
