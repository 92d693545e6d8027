"""Disagreement: where a base model and a reasoning model part ways, token by token; guided intervention; EOPD."""
import numpy as np
import pandas as pd
import streamlit as st

from app.figures import disagreement as figs
from app.figures.findings import disagreement_finding
from app.figures import learnability as learn_figs
from app.session import selected_model_id
from app.ui.disagreement_position import position_drilldown
from app.ui.downloads import table_downloads
from app.ui.drilldown import clickable_chart
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.params import checkbox_for, number_for, select_for
from app.ui.presets import preset_choice
from app.ui.run import ASK, AfterClick, clicked_for, expected_time, run_verb
from app.ui.tabs import lazy_tabs
from app.ui.inspect_link import inspect_button
from app.ui.text import literal
from backend.disagreement import (DIVERGENCES, POLICIES, SIGNALS, AnalysisConfig, CalibrationConfig, EopdConfig,
                                  EopdParams, GateConfig, InterveneConfig, LearnabilityConfig, ProblemSet,
                                  SweepConfig, TraceConfig, learnability,
                                  analyze, default_reasoning_id, eopd, gate_presets, intervene, latest_sweep,
                                  load_pair, sweep, sweep_policies, trace)
from backend.models import list_models, skipped_line
from backend.params import default_of, help_of
from backend.tasks import generate_problems

st.title("Disagreement: base vs reasoning model")
st.caption("Per-token divergence between two models sharing a tokenizer, a one-token takeover by the reasoning "
           "model where they disagree most, and entropy-aware distillation signals on the same pair.")

if current_model() is None:
    st.stop()
ids = [s.id for s in list_models()]
names = {s.id: s.display_name for s in list_models()}
c1, c2 = st.columns(2)
sidebar_id = selected_model_id()
base_id = c1.selectbox("Base model (student)", ids, index=ids.index(sidebar_id) if sidebar_id in ids else 0,
                       format_func=names.get, key="dis-base", persist_state="session")
reason_default = default_reasoning_id(base_id)
reason_id = c2.selectbox("Reasoning model (teacher)", ids,
                         index=ids.index(reason_default) if reason_default in ids else 0,
                         format_func=names.get, key=f"dis-reason-{base_id}", persist_state="session")
with st.spinner("Loading the pair …"):
    pair = guarded(lambda: load_pair(base_id, reason_id))
if pair is None:
    st.stop()
if base_id == reason_id:
    st.info("Both sides are the same model: every divergence is zero. Pick a reasoning model.")

# ---------------------------------------------------------------- problem
with st.container(border=True):
    mode = st.radio("Problem", ["Generated (held-out)", "Typed"], horizontal=True, key="dis-mode",
                    persist_state="session")
    if mode == "Typed":
        question = st.text_area("Question", "Maya buys 3 pens at $4 each and pays with a $20 bill. "
                                "How many dollars of change does she get?", key="dis-question", persist_state="session")
        answer_text = st.text_input("Answer (optional, integer)", "8", key="dis-answer",
                                    persist_state="session").strip()
        answer = int(answer_text) if answer_text.lstrip("-").isdigit() else None
        if answer_text and answer is None:
            st.warning("The answer must be an integer; the rollouts are not scored.")
        elif answer is None:
            st.caption("No answer given: a typed problem has no checker, so the rollouts are shown but not scored.")
    else:
        p1, p2 = st.columns(2)
        difficulty = p1.selectbox("Steps", [1, 2, 3], index=1, key="dis-difficulty", persist_state="session")
        index = p2.number_input("Problem #", 0, 999, 0, key="dis-index", persist_state="session")
        problem = generate_problems(int(index) + 1, "heldout", seed=0, difficulty=difficulty)[-1]
        question, answer = problem.question, problem.answer
        st.markdown(f"**{literal(question)}** (answer: {answer})")
    max_new = st.slider("Max new tokens", 16, 160, default_of(TraceConfig, "max_new_tokens"), 16, key="dis-max-new",
                        persist_state="session",
                        help=help_of(TraceConfig, "max_new_tokens"))
    inspect_button(question, key="dis-inspect")  # opens the Inspect page on this question

# ---------------------------------------------------------------- trace (runs on first render)
eopd_params = EopdParams()


def traced_pair():
    """Both rollouts of the problem above: the Trace tab's result, whose EOPD gate the last tab plots."""
    return run_verb(trace, pair, TraceConfig(question, answer, max_new, eopd_params),
                    label="Both rollouts, scored under both models", when=ASK)


def trace_tab() -> None:
    traced = traced_pair()
    if traced is not None:
        t = traced.value
        st.caption(pair.label)
        signal = st.selectbox("Highlight", list(DIVERGENCES), format_func=figs.SIGNAL_LABELS.get, key="dis-signal",
                              persist_state="session")
        top_n = st.slider("Top tokens", 1, 20, 5, key="dis-top", persist_state="session")
        left, right = st.columns(2)
        for col, r, who in ((left, t.base, pair.base.display_name), (right, t.reasoning, pair.reasoning.display_name)):
            verdict = "" if r.correct is None else (" · :green[correct]" if r.correct else " · :red[wrong]")
            col.markdown(f"**{r.source.capitalize()} rollout** · {who}{verdict}")
            col.markdown(figs.rollout_html(r, signal, top_n), unsafe_allow_html=True)
        which = st.radio("Trace along", ["base", "reasoning"], horizontal=True, key="dis-which",
                         persist_state="session")
        rollout = t.base if which == "base" else t.reasoning
        curves = st.multiselect("Curves", list(SIGNALS.names()), ["ce", "kl_base_reason", "kl_reason_base", "js"],
                                format_func=figs.SIGNAL_LABELS.get, key="dis-curves", persist_state="session")
        trace = clickable_chart(figs.trace_figure(rollout, curves, highlight=signal, top_n=top_n),
                                key="dis-trace-fig")
        st.info(disagreement_finding(rollout, signal, figs.SIGNAL_LABELS.get(signal, signal), top_n))
        position_drilldown(pair, TraceConfig(question, answer, max_new, eopd_params), rollout, trace)
        table = pd.DataFrame({"position": range(rollout.length), "token": rollout.tokens,
                              **{k: v for k, v in rollout.signals.items()}})
        tokens = st.expander("Per-token table", key="dis-trace-table", on_change="rerun")  # drawn once opened
        if tokens.open:
            with tokens:
                st.dataframe(table, hide_index=True, width="stretch")
                table_downloads(table, f"disagreement-trace-{which}", key="dis-trace-export")


# ---------------------------------------------------------------- batch analysis
def batch_tab() -> None:
    st.caption(f"Greedy rollouts of both models on generated held-out problems · {literal(pair.label)}")
    b1, b2, b3 = st.columns(3)
    n_batch = number_for(ProblemSet, "n", "Problems", container=b1, min_value=2, max_value=500, value=20,
                         key="dis-batch-n", persist_state="session")
    batch_signal = b2.selectbox("Divergence", list(DIVERGENCES), format_func=figs.SIGNAL_LABELS.get,
                                key="dis-batch-signal", persist_state="session")
    batch_difficulty = b3.selectbox("Steps", ["mixed", 1, 2, 3], key="dis-batch-difficulty", persist_state="session")
    config = AnalysisConfig(ProblemSet(int(n_batch), "heldout", 0,
                                       None if batch_difficulty == "mixed" else int(batch_difficulty)),
                            max_new, batch_signal)
    expected_time(analyze, pair, config)
    if clicked_for(config, "Analyse the batch", "dis-batch"):
        done = run_verb(analyze, pair, config, label="Batch analysis")
        if done is not None:
            result = done.value
            st.plotly_chart(figs.lorenz_figure(result), width="stretch", key="dis-lorenz")
            source = st.radio("Rollouts of", [p.source for p in result.per_source], horizontal=True,
                              key="dis-batch-source", persist_state="session")
            part = result.source(source)
            c = part.concentration
            m = st.columns(5)
            m[0].metric("Gini", f"{c.gini:.2f}")
            m[1].metric("Tokens carrying 50%", f"{c.share_tokens_50:.1%}")
            m[2].metric("Tokens carrying 80%", f"{c.share_tokens_80:.1%}")
            m[3].metric("Share in top 10%", f"{c.share_in_top10:.1%}")
            m[4].metric("Accuracy", "n/a" if np.isnan(part.accuracy) else f"{part.accuracy:.0%}")
            st.caption(f"Top {c.top_fraction:.0%} tokens that are high-entropy (base entropy above its "
                       f"{c.high_entropy_quantile:.0%} quantile): {c.top_high_entropy_share:.0%} "
                       f"(chance {1 - c.high_entropy_quantile:.0%}); Spearman(divergence, base entropy) = "
                       f"{c.entropy_correlation:.2f}.")
            g1, g2 = st.columns(2)
            g1.plotly_chart(figs.position_figure(part), width="stretch", key="dis-positions")
            g2.plotly_chart(figs.category_figure(part), width="stretch", key="dis-categories")
            st.plotly_chart(figs.roc_figure(part), width="stretch", key="dis-roc")
            if result.skipped:
                st.caption(literal(skipped_line(result.skipped)))


# ---------------------------------------------------------------- intervention
def intervene_tab() -> None:
    st.caption("Greedy decoding by the base model; at gated steps the reasoning model writes one token. The gate is "
               "calibrated on base rollouts of training problems: τ = quantile₁₋ᵣ(s), λ = E[s | s > τ] / E[s].")
    presets = [(g.label, {"dis-window": g.window, "dis-capped": g.capped, "dis-decisive": g.decisive},
                g.evidence) for g in gate_presets(base_id, reason_id)]
    preset_choice("Gate", presets, key="dis-gate-preset", scope=f"{base_id}|{reason_id}")
    i1, i2, i3, i4 = st.columns(4)
    policy = select_for(InterveneConfig, "policy", "Policy", labels=POLICIES.labels(), container=i1,
                        key="dis-policy", persist_state="session")
    budget = i2.select_slider("Budget r", [0.0, 0.02, 0.05, 0.10, 0.20, 0.30], default_of(InterveneConfig, "budget"),
                              format_func=lambda r: f"{r:.0%}", key="dis-budget",
                              help=help_of(InterveneConfig, "budget"), persist_state="session")
    gate_signal = select_for(GateConfig, "signal", "Gate signal", container=i3, labels=figs.SIGNAL_LABELS,
                             options=[s for s in SIGNALS.names() if s != "entropy_reason"], key="dis-gate-signal",
                             persist_state="session")
    window = number_for(GateConfig, "window", "Window W (0: threshold only)", container=i4, max_value=64,
                        key="dis-window", persist_state="session")
    c1, c2 = st.columns(2)
    capped = checkbox_for(GateConfig, "capped", "Online budget cap (realised rate ≈ r)", key="dis-capped",
                          container=c1, persist_state="session")
    decisive = checkbox_for(GateConfig, "decisive", "Only where the greedy tokens differ", key="dis-decisive",
                            container=c2, persist_state="session")
    st.caption(f"**{POLICIES.get(policy).label}**: {POLICIES.get(policy).help}")
    cal_set = default_of(CalibrationConfig, "problems")
    cal_n = number_for(ProblemSet, "n", "Calibration problems (train split)", min_value=2, max_value=500,
                       value=cal_set.n, help=help_of(CalibrationConfig, "problems"), key="dis-cal-n",
                       persist_state="session")
    gate_config = GateConfig(gate_signal, int(window), capped=bool(capped), decisive=bool(decisive))
    calibration = CalibrationConfig(ProblemSet(int(cal_n), cal_set.split, cal_set.seed), max_new)
    one = InterveneConfig(question, answer, policy, budget, gate_config, calibration, max_new)
    if clicked_for(one, "Decode this problem", "dis-intervene"):
        done = run_verb(intervene, pair, one, label="Intervention decoding")
        if done is not None:
            v = done.value
            verdict = "" if v.correct is None else (" · :green[correct]" if v.correct else " · :red[wrong]")
            ending = " · the reasoning model also wrote the stop (not in the rate)" if v.stop_taken else ""
            gate_text = (f" · τ = {v.threshold.tau:.3f}, λ = {v.threshold.lam:.2f}"
                         if v.threshold and np.isfinite(v.threshold.tau) else "")
            st.markdown(f"**{v.policy}** · {int(v.intervened.sum())} of {len(v.token_ids)} tokens taken over "
                        f"({v.rate:.1%}){ending}{verdict}{gate_text}")
            st.markdown(figs.intervention_html(v), unsafe_allow_html=True)
            st.caption(f"Forward passes: base {v.base_passes}, reasoning {v.reasoning_passes}.")
    st.subheader("Budget sweep")
    s1, s2 = st.columns(2)
    n_sweep = number_for(ProblemSet, "n", "Held-out problems", container=s1, min_value=2, max_value=500, value=20,
                         key="dis-sweep-n", persist_state="session")
    default_rates = list(default_of(SweepConfig, "rates"))
    rates = s2.multiselect("Budgets r", default_rates, default_rates, format_func=lambda r: f"{r:.0%}",
                           key="dis-sweep-rates", help=help_of(SweepConfig, "rates"), persist_state="session")
    sweep_config = SweepConfig(ProblemSet(int(n_sweep)), tuple(sorted(rates)), sweep_policies(), gate_config,
                               calibration, max_new)
    expected_time(sweep, pair, sweep_config)
    shown = None
    if clicked_for(sweep_config, "Run the sweep", "dis-sweep", disabled=not rates):
        done = run_verb(sweep, pair, sweep_config, label="Budget sweep", partial=partial_sweep)
        shown = None if done is None else done.value
    else:  # before a run: the latest stored sweep of this pair (e.g. the benchmark's 100 problems)
        stored = guarded(lambda: latest_sweep(pair))
        if stored is not None:
            shown = stored.value
            st.caption(f"Latest stored sweep of this pair: {shown.n_problems} held-out problems, gate "
                       f"{stored.params['gate']['signal']} with W = {stored.params['gate']['window']}"
                       f"{' and the online cap' if stored.params['gate'].get('capped') else ''}"
                       f"{', decisive' if stored.params['gate'].get('decisive') else ''}, computed in "
                       f"{stored.compute_seconds / 60:.0f} min. Run the sweep for the settings above.")
    if shown is not None:
        if shown.skipped:  # the context rule for batches: skipped, counted and said
            st.caption(literal(skipped_line(shown.skipped)))
        st.plotly_chart(figs.sweep_figure(shown), width="stretch", key="dis-sweep-fig")
        points = figs.sweep_table(shown)
        st.dataframe(points, hide_index=True, width="stretch")
        st.caption("CI: Wilson 95% interval of the accuracy. Gap: share of the base-to-reasoning accuracy gap "
                   "recovered. vs random: the problems only this policy / only the random control gets right at "
                   "the same budget, and the exact McNemar p on them. The random control takes over as many "
                   "tokens per problem as guided, so for guided and earliest the comparison is at equal count.")
        table_downloads(points, "disagreement-sweep", key="dis-sweep-export")


def partial_sweep(so_far) -> None:
    """The sweep over the problems finished so far, while it runs (and under a Stop's notice)."""
    st.plotly_chart(figs.sweep_figure(so_far), width="stretch", key=f"dis-sweep-fig-{so_far.n_problems}")
    st.dataframe(figs.sweep_table(so_far), hide_index=True, width="stretch")


# ---------------------------------------------------------------- EOPD
def eopd_tab() -> None:
    st.caption("Student = base, teacher = reasoning. Gate H_T ≥ τ on the full-vocabulary teacher entropy; forward KL "
               "on the teacher's top-k renormalised; EOPD term = reverse-KL (k1) + α · gate · forward KL.")
    traced = traced_pair()
    if traced is not None:
        st.plotly_chart(figs.eopd_trace_figure(traced.value.eopd, traced.value.base.tokens, eopd_params.tau),
                        width="stretch", key="dis-eopd-trace")
        share = float(np.mean(traced.value.eopd["gate"])) if len(traced.value.eopd["gate"]) else 0.0
        st.caption(f"τ = {eopd_params.tau}, k = {eopd_params.top_k}, α = {eopd_params.alpha}: {share:.0%} of this "
                   "rollout's tokens are gated.")
    e1, e2, e3, e4, e5 = st.columns(5)
    tau = number_for(EopdParams, "tau", "τ (nats)", container=e1, max_value=10.0, step=0.1, key="dis-eopd-tau",
                     persist_state="session")
    top_k = number_for(EopdParams, "top_k", "top-k", container=e2, max_value=256, key="dis-eopd-k",
                       persist_state="session")
    alpha = number_for(EopdParams, "alpha", "α", container=e3, max_value=10.0, step=0.1, key="dis-eopd-alpha",
                       persist_state="session")
    temperature = number_for(EopdConfig, "temperature", "Rollout temperature", container=e4, max_value=2.0, step=0.1,
                             key="dis-eopd-temp", persist_state="session")
    n_eopd = number_for(ProblemSet, "n", "Problems", container=e5, max_value=500,
                        value=default_of(EopdConfig, "problems").n, key="dis-eopd-n", persist_state="session")
    eopd_config = EopdConfig(ProblemSet(int(n_eopd)), EopdParams(tau, int(top_k), alpha), max_new, temperature)
    expected_time(eopd, pair, eopd_config)
    if clicked_for(eopd_config, "Summarise over a batch", "dis-eopd"):
        done = run_verb(eopd, pair, eopd_config, label="EOPD signals")
        if done is not None:
            s = done.value.summary
            if done.value.skipped:  # the context rule for batches: skipped, counted and said
                st.caption(literal(skipped_line(done.value.skipped)))
            m = st.columns(4)
            m[0].metric("Gated tokens", f"{s.gated_share:.1%}")
            m[1].metric("Mean teacher entropy", f"{s.mean_teacher_entropy:.2f}")
            m[2].metric("EOPD loss term", f"{s.loss_eopd:.3f}")
            m[3].metric("Plain reverse-KL term", f"{s.loss_plain:.3f}")
            st.plotly_chart(figs.eopd_summary_figure(done.value, tau), width="stretch", key="dis-eopd-summary")
            summary = pd.DataFrame([s.__dict__])
            table_downloads(summary, "disagreement-eopd", key="dis-eopd-export")


# ---------------------------------------------------------------- learnability
def learnability_tab() -> None:
    st.caption("The reasoning model's own training problems: easy (the base solves them), learned (the base fails, "
               "the reasoning model solves them) and unlearnable (both fail, though the correct worked solution was "
               "the training target). Per example, the gradient of the reasoning model's loss on that solution "
               "with respect to its adapter's LoRA weights (no adapter: the chosen layers' weights), projected to "
               "a fixed random dimension; do unlearnable examples point away from the rest?")
    l1, l2, l3 = st.columns(3)
    n_learn = number_for(LearnabilityConfig, "n", "Training problems", container=l1, max_value=500,
                         key="dis-learn-n", persist_state="session")
    sketch_dim = number_for(LearnabilityConfig, "sketch_dim", "Projection size", container=l2, key="dis-learn-dim",
                            persist_state="session")
    layers_text = l3.text_input("Layers (a model without an adapter)", "", key="dis-learn-layers",
                                persist_state="session",
                                help=help_of(LearnabilityConfig, "layers"))
    layers = guarded(lambda: LearnabilityConfig.parse_layers(layers_text))
    if layers is None:
        return
    config = guarded(lambda: LearnabilityConfig(n=int(n_learn), max_new_tokens=max_new, sketch_dim=int(sketch_dim),
                                                layers=layers))
    if config is None:
        return
    done = run_verb(learnability, pair, config, label="Learnability",
                    when=AfterClick(f"Compute the gradients of {config.n} examples", "dis-learn", config))
    if done is None:
        return
    result, test = done.value, done.value.test
    st.caption(f"{literal(result.data)}; gradients of {literal(result.gradient_of)}.")
    if result.skipped:  # the context rule for batches: skipped, counted and said
        st.caption(literal(skipped_line(result.skipped)))
    m = st.columns(4)
    m[0].metric("Unlearnable / learned", f"{test.n_unlearnable} / {test.n_learned}")
    m[1].metric("Median similarity: unlearnable vs learned",
                "n/a" if np.isnan(test.median_unlearnable) or np.isnan(test.median_learned)
                else f"{test.median_unlearnable:.3f} vs {test.median_learned:.3f}")
    m[2].metric("AUROC of low similarity", "n/a" if np.isnan(test.auroc) else f"{test.auroc:.2f}",
                help="P(an unlearnable example is less similar to the rest than a learned one); 0.5: no signal")
    m[3].metric("Mann-Whitney p", "n/a" if np.isnan(test.p_value) else f"{test.p_value:.3g}")
    st.caption(learn_figs.beyond_loss_line(result))
    left, right = st.columns([3, 2])
    left.plotly_chart(learn_figs.similarity_heatmap(result), width="stretch", key="dis-learn-heatmap")
    right.plotly_chart(learn_figs.mean_similarity_strip(result), width="stretch", key="dis-learn-strip")
    table = learn_figs.examples_table(result)
    st.dataframe(table, hide_index=True, width="stretch")
    table_downloads(table, "disagreement-learnability", key="dis-learn-export")


lazy_tabs({"Trace": trace_tab, "Concentration & failure": batch_tab, "Intervention": intervene_tab,
           "Entropy-aware distillation": eopd_tab, "Learnability": learnability_tab}, key="dis-tab")
