"""MT heads: language and translation head maps, steering vectors, instruction-free translation, ablation."""
import dataclasses

import pandas as pd
import streamlit as st

from app.figures.mt import ablation_chart, ablation_rows, evaluation_bars, head_heatmaps
from app.model_choice import translator
from app.session import opened_on_recommendation
from app.ui.downloads import table_downloads
from app.ui.drilldown import clickable_chart
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.mt_drilldown import head_drilldown
from app.ui.params import select_for, slider_for
from app.ui.presets import preset_choice
from app.ui.run import ASK, expected_time_from_runs, run_verb
from app.ui.tabs import lazy_tabs
from app.ui.inspect_link import inspect_button
from app.ui.text import literal
from backend.mt import (ATTRIBUTIONS, HEAD_TYPES, STEER_LAYERS, STEER_MODES, STEER_POSITIONS, UPLOAD_CAPS,
                        ExperimentConfig, HeadsConfig, builtin, find_heads, fit_shots, language_name, parse_upload,
                        run_experiment, steering_presets)
from backend.params import default_of

# Parsed once per uploaded file, not on every widget change.
_parse_upload = st.cache_data(max_entries=4, show_spinner="Reading the file…")(parse_upload)


st.title("MT heads")
st.caption("Translation splits into finding the target language and keeping the sentence's meaning. Corrupting "
           "few-shot demonstrations (targets in another language, or unrelated target sentences) and patching "
           "each head's mean clean output back at the answer position maps the heads that carry each part. The paper "
           "finds that ~1% of heads give steering vectors for instruction-free translation and that zeroing them "
           "breaks it; the tabs below measure both on the selected model.")

handle = current_model()
if handle is None:
    st.stop()
st.caption(f"Model: **{literal(handle.display_name)}** · {handle.info.n_layers} layers × {handle.info.n_heads} heads")
recommended = translator()
if opened_on_recommendation(handle.id):
    st.info(f"Opened on {literal(handle.display_name)}, the embedded model that translates (few-shot), so steering "
            "can be judged by translation quality. Pick another model in the sidebar.")
elif recommended is not None and handle.id != recommended:
    st.caption(f"Recommended here: `{recommended}`, the embedded model that translates; small models such as "
               "SmolLM2-135M produce target-language text but not translations, whatever the steering.")

with st.expander("Data: built-in set or your own upload", expanded=False):
    upload = st.file_uploader("Parallel sentences (TSV, CSV or JSONL; one column per language code, optional "
                              "'split' = heads/evaluate)", type=["tsv", "csv", "jsonl", "json", "txt"], key="mt-upload",
                              max_upload_size=UPLOAD_CAPS.upload_mb, help=f"{UPLOAD_CAPS.describe().capitalize()}.")
    data = None
    if upload is not None:
        data = guarded(lambda: _parse_upload(upload.getvalue(), upload.name))
        if data is None:
            st.warning("Using the built-in set instead.")
        else:
            for notice in data.notices:
                st.info(literal(notice))
data = data or builtin()
st.caption(f"Data: {literal(data.name)} · {len(data.rows('heads'))} head-finding rows, "
           f"{len(data.rows('evaluate'))} held-out rows · languages {', '.join(data.languages)}")

# Opens on the design measured to work on the loaded model; the paper's setting is one click away.
preset_choice("Steering preset", [(p.label, {f"mt-{name.replace('_', '-')}": value for name, value in p.settings().items()},
                                   p.evidence) for p in steering_presets(handle.id)], key="mt-preset", scope=handle.id)
c1, c2, c3, c4 = st.columns(4)
src = c1.selectbox("Source", data.languages, index=0, format_func=language_name, key="mt-src", persist_state="session")
targets = [lang for lang in data.languages if lang != src]
tgt = c2.selectbox("Target", targets, index=targets.index("fr") if "fr" in targets else 0,
                   format_func=language_name, key="mt-tgt", persist_state="session")
head_types = list(HEAD_TYPES.names())
head_type = c3.radio("Head type", head_types, index=head_types.index(default_of(HeadsConfig, "head_type")),
                     horizontal=True, key="mt-type", persist_state="session", help=HEAD_TYPES.help_text())
percent = slider_for(ExperimentConfig, "percent", "Heads selected (% of L×H)", container=c4, step=0.1,
                     key="mt-percent")
with st.expander("Head-finding settings"):
    s1, s2, s3 = st.columns(3)
    # The page caps prompts and demonstrations below the configs' limits: more is slow on CPU.
    n_prompts = slider_for(HeadsConfig, "n_prompts", "Prompts", container=s1, max_value=16, key="mt-prompts")
    wanted = slider_for(HeadsConfig, "k_shots", "Demonstrations (k)", container=s2, max_value=8, key="mt-shots")
    attribution = select_for(HeadsConfig, "attribution", "Attribution", labels=ATTRIBUTIONS.labels(), container=s3,
                             key="mt-attr")
    st.caption(ATTRIBUTIONS.help_text())
shots = guarded(lambda: fit_shots(handle, data, src, tgt, wanted)) or 1
if shots < wanted:
    st.info(f"{shots} demonstration(s) instead of {wanted}: longer prompts would not fit the model's context.")
template = HeadsConfig(src=src, tgt=tgt, n_prompts=n_prompts, k_shots=shots, attribution=attribution)


def heads_for(kind: str):
    config = dataclasses.replace(template, head_type=kind)
    return run_verb(lambda p: find_heads(handle, config, data, progress=p), label=f"Finding {kind} heads", when=ASK)


st.subheader(f"{head_type.capitalize()} heads")
computed = heads_for(head_type)  # the default action: one head map
if computed is None:
    st.stop()
head_map = computed.value
clicked = clickable_chart(head_heatmaps(head_map, percent, ("activation patching (Δ log p target)",
                                                           f"{attribution} (captum)")), key="mt-heat")
st.caption(f"{len(head_map.rows)} prompts · mean KL(clean‖corrupt) at the chosen position "
           f"{sum(head_map.kl) / len(head_map.kl):.3f} nats · patching {head_map.patch_seconds:.1f} s, "
           f"attribution {head_map.attribution_seconds:.1f} s · corruption language for language heads: "
           f"{language_name(head_map.other_language)}")
top = pd.DataFrame(head_map.table(20))
top.insert(3, "selected", top["rank"] <= len(head_map.selected(percent)))
st.dataframe(top, hide_index=True, width="stretch")
table_downloads(top, f"mt-{head_type}-heads-{src}-{tgt}", key="mt-top-export")
head_drilldown(handle, head_map, data, clicked)

st.subheader("Steering and ablation")
g1, g2, g3, g4 = st.columns(4)
steer_mode = select_for(ExperimentConfig, "steer_mode", "Steering mode", labels=STEER_MODES.labels(), container=g1,
                        key="mt-steer-mode")
strength = slider_for(ExperimentConfig, "strength", "Steering strength", container=g2, max_value=10.0, step=0.5,
                      key="mt-strength", disabled=not STEER_MODES.get(steer_mode).uses_strength)
steer_types = g3.multiselect("Steering vectors", head_types, default=list(default_of(ExperimentConfig, "steer_types")),
                             key="mt-steer-types", persist_state="session", help=HEAD_TYPES.help_text())
n_random = slider_for(ExperimentConfig, "n_random", "Random-head draws (control)", container=g4, min_value=1,
                      key="mt-random")
h1, h2 = st.columns(2)
steer_positions = select_for(ExperimentConfig, "steer_positions", "Steered positions",
                             labels=STEER_POSITIONS.labels(), container=h1, key="mt-steer-positions")
steer_layers = select_for(ExperimentConfig, "steer_layers", "Layers allowed", labels=STEER_LAYERS.labels(),
                          container=h2, key="mt-steer-layers")
st.caption(STEER_MODES.help_text())
st.caption("If the add mode garbles the output, lower the strength or raise the head share; the patch mode "
           "(selected heads set to their mean clean outputs) needs no strength. The steering preset at the top sets "
           "these with the head share.")
held_out = data.rows("evaluate")
chosen_rows = st.multiselect("Held-out sentences for the side-by-side view", held_out, default=held_out[:3],
                             format_func=lambda r: data.text(src, r), key="mt-rows", persist_state="session")
inspect_button(f"Translate the following sentence from {language_name(src)} to {language_name(tgt)}: "  # Inspect page,
               f"{data.text(src, (chosen_rows or held_out)[0])}", key="mt-inspect")  # the instruction prompt's wording
base = ExperimentConfig(src=src, tgt=tgt, percent=percent, strength=strength, steer_types=tuple(steer_types),
                        steer_mode=steer_mode, steer_positions=steer_positions, steer_layers=steer_layers,
                        ablate_type=head_type, n_random=n_random, k_shots=shots, heads=template)


def pct(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.0f}%"


def steering_headline(experiment) -> None:
    """Share of the chrF++ gap recovered first, the target-language rate and degeneration beside it."""
    head = experiment.headline()
    steering = head.get("steering")
    if steering is None:
        return
    m1, m2, m3 = st.columns(3)
    m1.metric("chrF++ gap recovered", pct(steering["gap_recovered"]),
              help=f"(steered − instruction-free) / ({head['reference']} − instruction-free), chrF++")
    m2.metric("Target-language rate", pct(steering["target_rate"]))
    m3.metric("Repeated bigrams", f"{steering['degeneration']:.2f}",
              delta=f"{steering['degeneration'] - steering['reference_degeneration']:+.2f} vs {head['reference']}",
              delta_color="inverse", help="mean share of repeated word bigrams per output (degeneration)")


def ablation_headline(experiment) -> None:
    head = experiment.headline()
    if "ablation_selected" not in head:
        return
    m1, m2 = st.columns(2)
    chosen, rand = head["ablation_selected"], head.get("ablation_random", {})
    m1.metric("chrF++ gap lost (selected heads)", pct(chosen["gap_lost"]),
              delta=f"random heads: {pct(rand.get('gap_lost'))}", delta_color="off",
              help="share of few-shot's chrF++ gain over instruction-free removed by zeroing the heads")
    m2.metric("Target-language rate drop", pct(chosen["rate_drop"]),
              delta=f"random heads: {pct(rand.get('rate_drop'))}", delta_color="off")


def outputs_frame(experiment) -> pd.DataFrame:
    return pd.DataFrame([{"condition": c.label, "source": s, "output": o, "detected": d, "reference": r}
                         for c in experiment.conditions
                         for s, o, d, r in zip(c.sources, c.outputs, c.detected, c.references)])


def partial_experiment(experiment) -> None:
    """An experiment while it runs (and under a Stop's notice): its conditions so far, each line as it is written."""
    st.dataframe(pd.DataFrame(experiment.table()), hide_index=True, width="stretch")
    st.dataframe(outputs_frame(experiment), hide_index=True, width="stretch")


def remembered(name: str, label: str) -> bool:
    """A button whose click survives reruns (so results stay on screen while other widgets change)."""
    if st.button(label, key=f"mt-btn-{name}"):
        st.session_state[f"mt-want-{name}"] = True
    expected_time_from_runs("mt", "evaluate" if name == "eval" else name, handle.fingerprint)
    return st.session_state.get(f"mt-want-{name}", False)


def steer_tab() -> None:
    if remembered("steer", "Run steering on the chosen sentences") and chosen_rows:
        config = dataclasses.replace(base, rows=tuple(chosen_rows))
        out = run_verb(lambda p: run_experiment(handle, "steer", config, data, progress=p), label="Steering",
                       partial=partial_experiment)
        if out is not None:
            steering_headline(out.value)
            free, steered, few, instr = out.value.conditions
            side = pd.DataFrame({"source": free.sources, "instruction-free": free.outputs, "steered": steered.outputs,
                                 "few-shot": few.outputs, "instruction": instr.outputs, "reference": free.references})
            st.dataframe(side, hide_index=True, width="stretch")
            st.dataframe(pd.DataFrame(out.value.table()), hide_index=True, width="stretch")
            table_downloads(side, f"mt-steer-{src}-{tgt}", key="mt-steer-export")


def ablate_tab() -> None:
    n_abl = st.slider("Held-out sentences", 1, len(held_out), min(10, len(held_out)), key="mt-abl-n",
                      persist_state="session")
    if remembered("ablate", f"Ablate the selected {head_type} heads vs random heads"):
        config = dataclasses.replace(base, n_sentences=n_abl)
        out = run_verb(lambda p: run_experiment(handle, "ablate", config, data, progress=p), label="Ablation",
                       partial=partial_experiment)
        if out is not None:
            ablation_headline(out.value)
            st.plotly_chart(ablation_chart(ablation_rows(out.value.conditions, head_type)), width="stretch",
                            key="mt-ablation")
            frame = pd.DataFrame(out.value.table())
            st.dataframe(frame, hide_index=True, width="stretch")
            table_downloads(frame, f"mt-ablation-{src}-{tgt}", key="mt-abl-export")
            with st.expander("Outputs"):
                st.dataframe(outputs_frame(out.value), hide_index=True, width="stretch")


def eval_tab() -> None:
    n_eval = st.slider("Held-out sentences", 1, len(held_out), min(10, len(held_out)), key="mt-eval-n",
                       persist_state="session")
    st.caption("Instruction prompt, few-shot, instruction-free, instruction-free + steering, few-shot with the "
               "language / translation heads zeroed, and few-shot with random heads zeroed. Uses both head maps.")
    if remembered("eval", "Run the evaluation"):
        config = dataclasses.replace(base, n_sentences=n_eval)
        out = run_verb(lambda p: run_experiment(handle, "evaluate", config, data, progress=p), label="Evaluation",
                       partial=partial_experiment)
        if out is not None:
            steering_headline(out.value)
            ablation_headline(out.value)
            frame = pd.DataFrame(out.value.table())
            st.plotly_chart(evaluation_bars(frame), width="stretch", key="mt-eval-bars")
            st.dataframe(frame, hide_index=True, width="stretch")
            table_downloads(frame, f"mt-evaluation-{src}-{tgt}", key="mt-eval-export")
            st.plotly_chart(ablation_chart(ablation_rows(out.value.conditions, head_type)), width="stretch",
                            key="mt-eval-ablation")
            outputs = outputs_frame(out.value)
            with st.expander("All outputs"):
                st.dataframe(outputs, hide_index=True, width="stretch")
                table_downloads(outputs, f"mt-outputs-{src}-{tgt}", key="mt-out-export")


lazy_tabs({"Side by side": steer_tab, "Ablation": ablate_tab, "Evaluation": eval_tab}, key="mt-tab")
