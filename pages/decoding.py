"""Decoding: strategies side by side on the same prompt, ESS collapse, genealogy, MH acceptance, batch mode."""
import json

import pandas as pd
import streamlit as st

from app.figures import decoding as figs
from app.figures import decoding_rc as rc_figs
from app.ui.decoding_batch import partial_view, streamed_batch
from app.ui.decoding_compare import STATE as COMPARISON, Comparison, compare, result_column
from app.ui.decoding_particle import particle_drilldown
from app.ui.downloads import table_downloads
from app.ui.drilldown import clickable_chart
from app.model_choice import arithmetic_reasoner
from app.session import choose_model, opened_on_recommendation
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.params import checkbox_for, number_for, select_for, slider_for
from app.ui.tabs import lazy_tabs
from app.ui.convexbench import convexbench_tab
from app.ui.inspect_link import inspect_button
from app.ui.text import literal
from app.ui.uploads import PROMPT_MAX_CHARS
from backend.decoding import (FIRST_VIEW, STRATEGIES, DecodeConfig, aggregate, run_batch, run_one, settings_for,
                              stored_benchmark)
from backend.models import skipped_line
from backend.params import help_of
from backend.tasks import (MAX_BATCH_PROBLEMS, PROBLEM_SETS, PROBLEM_UPLOAD, format_prompt, problem_set,
                           problem_set_size, problems_from_upload, steps_of)

PAGE_TOKENS = 48  # new tokens per sequence unless the model's registry entry asks for more

st.title("Decoding strategies side by side")
st.caption("Greedy, sampling, low temperature, best-of-n, Metropolis-Hastings power sampling and adaptive SMC "
           "(ASMC) on p(x)^alpha with cache-coherent resampling; every run is cached in DuckDB.")

handle = current_model()
if handle is None:
    st.stop()
st.caption(f"Model: **{literal(handle.display_name)}**")
if opened_on_recommendation(handle.id):
    st.info(f"Opened on {literal(handle.display_name)}, the project's arithmetic reasoning model: on arithmetic "
            "problems the base model fails with every strategy alike (about 5%), so the strategies have nothing to "
            "differ on. Pick another model in the sidebar for your own prompts.")
label_of = STRATEGIES.labels()
Cfg = DecodeConfig
# A model whose answers need more new tokens than the page's default (its registry entry says so) resets the field
# when it is picked: a worked solution cut off before its answer would be scored wrong.
tokens_default = handle.spec.max_new_tokens or PAGE_TOKENS
if st.session_state.get("dec-max-new-default") != tokens_default:
    st.session_state["dec-max-new-default"] = tokens_default
    st.session_state.pop("dec-max-new", None)

# ---------------------------------------------------------------- input
with st.container(border=True):
    source = st.radio("Input", ["Arithmetic problem", "Own prompt", "Upload JSONL"], horizontal=True,
                      key="dec-source", persist_state="session")
    problems = None
    problem_name = "own prompt"  # how the results table names the problem
    expected = None  # a free prompt's expected answer, when the user gives one
    illustrated = False  # the first view's problem of the stored benchmark, on its model: labelled as such
    if source == "Own prompt":
        task = st.text_area("Prompt", "Write one sentence about the sea.", key="dec-prompt",
                            persist_state="session", max_chars=PROMPT_MAX_CHARS)
        expected = st.number_input("Expected answer (optional)", value=None, step=1, key="dec-expected",
                                   persist_state="session",
                                   placeholder="an integer, e.g. 12",
                                   help="The answer is read from each output as on the problem sets ('Answer: N', "
                                        "else the last integer); with an expected answer, correctness is judged "
                                        "and best-of-n and ASMC use it as they do on a problem.")
        st.caption("Without an expected answer the output's answer is shown but not judged, and best-of-n and ASMC "
                   "pick by score.")
    elif source == "Upload JSONL":
        upload = st.file_uploader("JSON lines with {\"question\" or \"prompt\": ..., \"answer\": <int>}",
                                  type=["jsonl", "json", "txt"], key="dec-upload",
                                  max_upload_size=PROBLEM_UPLOAD.upload_mb,
                                  help=f"A batch's problems: {PROBLEM_UPLOAD.describe()}.")
        if upload is None:
            st.info("Upload a file to continue.")
            st.stop()
        problems = guarded(lambda: problems_from_upload(upload.getvalue()))  # capped before it is parsed
        if problems is None:
            st.stop()
        pick = st.selectbox("Problem", range(len(problems)), key="dec-upload-pick", persist_state="session",
                            format_func=lambda i: f"{i}: {problems[i].question[:80]}")
        task = problems[pick]
        problem_name = task.id
    else:
        c1, c2, c3 = st.columns([2, 1, 1])
        # opens on the first view's problem (backend/decoding/first_view.py), chosen from the stored benchmark
        family = c1.selectbox("Problem set", list(PROBLEM_SETS), format_func=PROBLEM_SETS.get, key="dec-family",
                              persist_state="session",
                              index=list(PROBLEM_SETS).index(FIRST_VIEW.problem_set),
                              help="Held-out problems of the generator (never trained on; the classic templates "
                                   "are the ones the adapter learnt first), or the hand-written set, in wording "
                                   "the generator never produces.")
        steps = steps_of(family)  # the long chains (RC's setting) have 4-8
        if st.session_state.get("dec-difficulty") not in (None, *steps):
            st.session_state.pop("dec-difficulty")
        difficulty = c2.selectbox("Steps", steps, index=min(FIRST_VIEW.steps, len(steps)) - 1, key="dec-difficulty",
                                  persist_state="session")
        available = problem_set_size(family, difficulty)
        opening = FIRST_VIEW.index if (family, difficulty) == (FIRST_VIEW.problem_set, FIRST_VIEW.steps) else 0
        index = c3.number_input("Problem #", 0, available - 1, opening, key=f"dec-index-{family}-{difficulty}",
                                persist_state="session")
        illustrated = FIRST_VIEW.shows(handle.id, family, difficulty, int(index))
        task = problem_set(family, int(index) + 1, difficulty)[-1]
        problem_name = f"{family}, {difficulty} step{'s' * (difficulty > 1)}, #{int(index)}"  # as picked above
    if not isinstance(task, str):
        st.markdown(f"**{literal(task.question)}** (answer: {task.answer})")
    reasoner = arithmetic_reasoner()
    if source != "Own prompt" and reasoner is not None and handle.id != reasoner:
        left, right = st.columns([3, 1])
        left.caption("Arithmetic problems are what the project's reasoning model was trained on; the base model "
                     "solves about 5% of them with every strategy alike.")
        right.button("Decode with the reasoning model", key="dec-use-reasoner", width="stretch",
                     on_click=choose_model, args=(reasoner,))

# ---------------------------------------------------------------- strategies and parameters
picked = st.multiselect("Strategies", list(label_of), default=list(FIRST_VIEW.strategies), format_func=label_of.get,
                        key="dec-strategies", persist_state="session")
with st.expander("Parameters and budgets", expanded=False):  # ranges and help from DecodeConfig's fields
    c1, c2, c3, c4 = st.columns(4)
    values = {
        "max_new_tokens": number_for(Cfg, "max_new_tokens", "Max new tokens", container=c1, value=tokens_default,
                                     key="dec-max-new"),
        "alpha": number_for(Cfg, "alpha", "alpha (power)", container=c2, min_value=0.1, step=0.5, key="dec-alpha"),
        "n": number_for(Cfg, "n", "n (samples / particles)", container=c3, value=FIRST_VIEW.particles, key="dec-n"),
        "temperature": number_for(Cfg, "temperature", "Temperature (sampling, best-of-n)", container=c4,
                                  min_value=0.05, step=0.05, key="dec-temp"),
    }
    c1, c2, c3, c4 = st.columns(4)
    values |= {
        "block_size": number_for(Cfg, "block_size", "MH block size B", container=c1, key="dec-block"),
        "mh_steps": number_for(Cfg, "mh_steps", "MH steps K per block", container=c2, key="dec-mh-steps"),
        "ess_threshold": slider_for(Cfg, "ess_threshold", "ESS threshold (x N)", container=c3, step=0.05,
                                    key="dec-ess"),
        "alpha_ramp": number_for(Cfg, "alpha_ramp", "alpha ramp (tokens)", container=c4, key="dec-ramp"),
    }
    c1, c2, c3, c4 = st.columns(4)
    values |= {
        "adaptive": checkbox_for(Cfg, "adaptive", "Adaptive ASMC", container=c1, key="dec-adaptive"),
        "token_budget": number_for(Cfg, "token_budget", "Token budget (adaptive; 0 = auto)", container=c2,
                                   key="dec-budget"),
        "max_particles": number_for(Cfg, "max_particles", "Max particles (adaptive)", container=c3,
                                    key="dec-max-particles"),
        "selection": select_for(Cfg, "selection", "Selection", container=c4, key="dec-selection"),
    }
    c1, c2 = st.columns(2)
    values["seed"] = number_for(Cfg, "seed", "Seed", min_value=0, max_value=2**31 - 1, container=c1, key="dec-seed")
    values["precision"] = select_for(Cfg, "precision", "Weights", container=c2, key="dec-precision",
                                     labels={"reference": "reference (the model's own)", "int8": "int8 copy (faster)",
                                             "bf16": "bf16 copy (faster)",
                                             "packed": "reference, packed for several rows (faster)"})
    if values["precision"] == "packed":
        c2.caption("The model's own weights, laid out for multiplying several rows at once: the same distribution, "
                   "but sums in another order, so a seed's tokens can differ where two tokens are nearly tied. "
                   "One-row strategies decode as the reference.")
    elif values["precision"] != "reference":
        c2.caption("A reduced-precision copy rounds the weights: its tokens can differ from the model's own "
                   "(greedy text typically diverges after a few dozen tokens), so compare strategies on one setting.")
    values["block_size"] = min(values["block_size"], values["max_new_tokens"])
    extra: dict = {}
    for name in picked:  # options of strategies registered by other features
        spec = STRATEGIES.get(name)
        for option, default in spec.extra_defaults.items():
            raw = st.text_input(f"{label_of[name]}: {option} (JSON)", json.dumps(default), key=f"dec-x-{name}-{option}",
                                persist_state="session",
                                help=help_of(spec.options, option))
            try:
                extra[(name, option)] = json.loads(raw)
            except json.JSONDecodeError:
                extra[(name, option)] = raw


def config_for(name: str) -> DecodeConfig:
    """The config of one strategy; it checks only that strategy's fields (UserError, shown by the caller)."""
    return DecodeConfig(strategy=name, extra={o: v for (s, o), v in extra.items() if s == name}, **values)


def ess_view(results: list) -> None:
    particle = next((r for r in results if r.particles), None)
    chart = clickable_chart(figs.ess_over_time(particle, particle.config.ess_threshold) if particle else
                            figs.ess_over_time(results[0]), key="dec-ess-fig")
    if particle:
        st.caption(f"ESS_min/N = {particle.ess_min_ratio:.2f}, {particle.resampling_events} resampling "
                   f"events, {particle.unique_ancestors} surviving first-token lineage(s). "
                   + " | ".join(particle.notes))
        particle_drilldown(handle, particle, chart)


def genealogy_view(results: list) -> None:
    particle = next((r for r in results if r.particles), None)
    rounds = len(particle.particles) if particle else 1
    which = st.number_input("SMC round", 1, rounds, rounds, key="dec-round",
                            persist_state="session") if rounds > 1 else rounds
    chart = clickable_chart(figs.genealogy(particle or results[0], int(which) - 1), key="dec-genealogy")
    if particle:
        particle_drilldown(handle, particle, chart)


def mh_view(results: list) -> None:
    chain = next((r for r in results if r.mh is not None), None)
    st.plotly_chart(figs.mh_acceptance(chain or results[0]), width="stretch", key="dec-mh-fig")
    if chain:
        st.caption(f"Acceptance rate {chain.acceptance_rate:.2f} over {chain.mh.accepted.size} MH steps.")


def rc_view(results: list) -> None:
    """RC: the answer after each cycle, and each cycle's summary and reasoning."""
    runs = [r for r in results if r.cycles]
    if not runs:
        st.info("RC (reasoning-summary cycles) shows the answer after each cycle and the summaries it restarted "
                "from.")
    for i, r in enumerate(runs):
        st.plotly_chart(rc_figs.cycle_answers(r), width="stretch", key=f"dec-rc-fig-{i}")
        st.dataframe(rc_figs.cycles_table(r), hide_index=True, width="stretch")
        for k, c in enumerate(r.cycles, 1):
            with st.expander(f"Cycle {k}: answer {'-' if c.answer is None else c.answer} · "
                             f"{c.reasoning_tokens} reasoning + {c.summary_tokens} summary tokens"):
                st.markdown("**Summary** (the next cycle restarts from the question and this)")
                st.text(c.summary or "(none: the last cycle writes no summary)")
                st.markdown("**Reasoning**")
                st.text(c.reasoning or "(empty)")


def candidates_view(results: list) -> None:
    with_candidates = [r for r in results if r.candidates]
    if not with_candidates:
        st.info("Best-of-n and ASMC list the sequences they chose from.")
    for r in with_candidates:
        st.markdown(f"**{label_of.get(r.strategy, r.strategy)}**")
        st.dataframe(figs.candidates_table(r), hide_index=True, width="stretch")


# ---------------------------------------------------------------- one prompt (runs on first render)
def illustration() -> None:
    """The first view's problem is one chosen for illustration: say so, with the stored benchmark's aggregate
    (every problem, the same model) beside it."""
    rows = aggregate(handle.fingerprint)
    left, right = st.columns([2, 3]) if rows else (st.container(), None)
    left.info(f"**Chosen for illustration.** {literal(FIRST_VIEW.evidence)} The latencies under each run are the "
              "stored run's own, measured when it was computed (on the machine and load of that moment); the "
              "benchmark's p95 beside it is over its own runs, so the two need not agree.")
    if right is not None:
        right.markdown(f"**The stored benchmark, every problem** ({rows[0].problems} problems, this model)")
        right.dataframe(figs.aggregate_table(rows), hide_index=True, width="stretch", key="dec-aggregate")


def side_by_side() -> None:
    own_expected = None if expected is None else int(expected)
    clicked = st.button("Run selected strategies", type="primary", key="dec-run")
    if illustrated:
        illustration()
    shown = st.session_state.get(COMPARISON)
    streamed = clicked or not isinstance(shown, Comparison) or shown.model_id != handle.id
    comparison = compare(handle.id, picked, lambda name, p: run_one(handle, task, config_for(name), p,
                                                                    expected=own_expected), label_of, clicked)
    results = list(comparison.results)
    if not comparison.complete:  # stopped part-way: what finished, said to be partial
        st.warning(comparison.partial_line(label_of), icon=":material/stop_circle:")
    if not results:
        st.info("Pick at least one strategy and press Run.")
        return
    if not streamed:  # computed now, each column was drawn as its strategy finished
        for column, r in zip(st.columns(len(results)), results):
            with column:
                result_column(r, label_of.get(r.strategy, r.strategy))
    prompt_now = task if isinstance(task, str) else format_prompt(task)
    inspect_button(prompt_now, key="dec-inspect")  # opens the Inspect page on this prompt
    if results[0].prompt != prompt_now:
        st.warning("These results are for an earlier input; press Run for the current one.")
    st.plotly_chart(figs.side_by_side(results, label_of), width="stretch", key="dec-side")
    table = figs.results_table(results, label_of, problem_name)
    st.dataframe(table, hide_index=True, width="stretch")
    table_downloads(table, "decoding-runs", key="dec-runs-export")
    lazy_tabs({"ESS over time": lambda: ess_view(results), "Genealogy": lambda: genealogy_view(results),
               "MH acceptance": lambda: mh_view(results), "Candidates": lambda: candidates_view(results),
               "RC cycles": lambda: rc_view(results)},
              key="dec-detail-tab")


# ---------------------------------------------------------------- batch (behind a button)
def batch() -> None:
    st.write("Every selected strategy on many problems: accuracy, mean and p95 latency, and accuracy against the "
             "generated-token budget (best-of-n: n; ASMC: particles or token budget; MH: steps per block).")
    c0, c1, c2, c3 = st.columns(4)
    batch_family = c0.selectbox("Problem set", list(PROBLEM_SETS), format_func=PROBLEM_SETS.get,
                                key="dec-batch-family", disabled=problems is not None, persist_state="session")
    count = c1.number_input("Problems", 1, MAX_BATCH_PROBLEMS, 5, key="dec-batch-n", disabled=problems is not None,
                            persist_state="session")
    batch_steps = ["mixed", *steps_of(batch_family)]
    if st.session_state.get("dec-batch-difficulty") not in (None, *batch_steps):
        st.session_state.pop("dec-batch-difficulty")
    batch_difficulty = c2.selectbox("Steps", batch_steps, key="dec-batch-difficulty",
                                    disabled=problems is not None, persist_state="session")
    budgets = c3.multiselect("Budgets (x max new tokens)", [2, 4, 8, 16, 32], default=[4], key="dec-budgets",
                             persist_state="session")
    if problems is not None:
        st.caption(f"Using the {len(problems)} uploaded problems.")
    if st.button("Run batch", key="dec-batch-run"):
        batch_problems = problems or problem_set(
            batch_family, int(count), difficulty=None if batch_difficulty == "mixed" else batch_difficulty)
        settings = guarded(lambda: settings_for([config_for(name) for name in picked], budgets))
        st.session_state.pop("dec-batch", None)  # a new batch: its table grows below, the previous one goes
        done = None if settings is None else streamed_batch(handle.id, lambda p, on_problem: run_batch(
            handle, batch_problems, settings, p, on_problem=on_problem))
        if done is not None:
            st.session_state["dec-batch"] = (handle.id, done.value)
    batch = st.session_state.get("dec-batch")
    stopped = partial_view(handle.id)  # a batch stopped part-way: its rows so far, marked as partial
    if batch is None or batch[0] != handle.id:
        if not stopped:
            stored_view()
    else:
        if batch[1].skipped:  # the context rule for batches: skipped, counted and said
            st.warning(literal(skipped_line(batch[1].skipped)))
        summary = figs.batch_table(batch[1])
        st.plotly_chart(figs.batch_summary(batch[1]), width="stretch", key="dec-batch-fig")
        st.dataframe(summary, hide_index=True, width="stretch")
        table_downloads(summary, "decoding-batch", key="dec-batch-export")
        left, right = st.columns(2)
        left.plotly_chart(figs.collapse_vs_correct(batch[1]), width="stretch", key="dec-collapse")
        right.plotly_chart(figs.accuracy_vs_budget(batch[1]), width="stretch", key="dec-budget-fig")
        if any(r.cycle_answers for r in batch[1].rows):
            st.markdown("**RC: accuracy after each cycle**, beside the batch's other settings (plain decoding at "
                        "RC's total budget among them; dashed lines)")
            st.plotly_chart(rc_figs.accuracy_by_cycle(batch[1]), width="stretch", key="dec-rc-batch-fig")
        with st.expander("Per-problem rows"):
            rows = figs.batch_rows(batch[1])
            st.dataframe(rows, hide_index=True, width="stretch")
            table_downloads(rows, "decoding-batch-rows", key="dec-rows-export")


def stored_view() -> None:
    """The committed benchmark of this model (bench/decoding_accuracy.py), shown before any batch is run."""
    stored = stored_benchmark(handle.fingerprint)
    if stored is None:
        st.info("No stored benchmark for this model: run a batch above (or `python -m backend decode compare --budgets 2,4,8`).")
        return
    sets = ", ".join(f"{n} {name}" for name, n in stored.sets.items())
    budgets = ", ".join(map(str, stored.budgets))
    if not stored.mh_budgets:
        budgets += " (MH power sampling not in this run)"
    elif stored.mh_budgets != stored.budgets:
        budgets += f" (MH: {', '.join(map(str, stored.mh_budgets))})"
    st.markdown(f"**Stored benchmark** of {literal(stored.model)}: {sets} problems, up to {stored.max_new_tokens} "
                f"new tokens per sequence, budgets {budgets} ("
                + ", then ".join(f"`{c}`" for c in stored.commands) + ").")
    frame = pd.DataFrame(stored.summary)
    left, right = st.columns(2)
    left.plotly_chart(figs.accuracy_curves(frame), width="stretch", key="dec-stored-fig")
    right.plotly_chart(figs.accuracy_curves(frame, "p95_latency_s"), width="stretch", key="dec-stored-latency")
    st.dataframe(frame, hide_index=True, width="stretch")
    table_downloads(frame, "decoding-benchmark", key="dec-stored-export")


lazy_tabs({"Side by side": side_by_side, "Batch & budgets": batch,
           "ConvexBench": lambda: convexbench_tab(handle)}, key="dec-tab")
