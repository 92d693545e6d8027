"""Inspect: any prompt, looked inside. The contribution graph (click an edge or a state), logit lens, direct logit
attribution (click a head to open it), attention, every head at once."""
import streamlit as st

from app.figures.inspect import (dla_figure, effects_frame, final_figure, lens_figure, logit_name, mlp_figure,
                                 pattern_figure)
from app.ui.drilldown import clickable_chart, within
from app.ui.guarded import guarded
from app.ui.inspect_attribution import attribution_tab
from app.ui.inspect_graph import graph_tab, heads_tab
from app.ui.inspect_link import PROMPT_KEY, take_incoming_prompt
from app.ui.inspect_patch import DLA_HEAD, ablate_head_button, ablate_tab, patch_tab, steer_tab
from app.ui.model_picker import current_model
from app.ui.prepared_drilldowns import prepare_drilldowns
from app.ui.run import ASK, run_verb
from app.ui.tabs import lazy_tabs
from app.ui.text import literal
from backend.internals import (EXAMPLE_PROMPT, AttentionConfig, DlaConfig, HeadConfig, LensConfig, attention,
                             check_prompt, dla, dla_drilldowns, drilldowns_stored, head, lens, store_drilldowns)

st.title("Inspect")
st.write("Look inside the selected model on a prompt of your own: the **contribution graph** shows which tokens "
         "and components the prediction flows through (click an edge or a state); the **logit lens** reads the residual stream "
         "after each layer as if it were the last; **direct logit attribution** splits the predicted token's logit "
         "into every head's and MLP's share (they sum to it exactly); **attention** shows any head's pattern. "
         "Click a head on the attribution map to see what it attends to and which tokens it promotes.")

handle = current_model()
if handle is None:
    st.stop()
info = handle.info
if take_incoming_prompt():
    DLA_HEAD.forget()  # a new prompt opens no head until clicked
st.session_state.setdefault(PROMPT_KEY, EXAMPLE_PROMPT)
prompt = st.text_area("Prompt", key=PROMPT_KEY, height=80, persist_state="session", bind="query-params",
                      help="Tokenised as the model's tokenizer does, special tokens included. It is kept in the "
                           "page's address, so a link to this page opens on it.")
if guarded(lambda: check_prompt(handle, prompt)) is None:  # over the memory budget: said before any tab computes
    st.stop()
position = int(st.number_input("Position (-1 = last token)", value=-1, step=1, key="inspect-position",
                               persist_state="session",
                               help="Where the lens traces the final prediction and attribution reads the logit."))


def lens_tab() -> None:
    track = st.text_input("Track a token (its rank and probability by layer)", key="inspect-track",
                          persist_state="session", help="Exactly one token; mind the leading space (' Paris').")
    computed = run_verb(lens, handle, LensConfig(prompt=prompt, position=position, track=track), label="Logit lens",
                        when=ASK)
    if computed is None:
        return
    result = computed.value
    first = int(next((i for i, r in enumerate(result.predicted_rank) if r == 0), result.n_layers))
    st.caption(f"The model predicts {literal(repr(result.predicted_token))} "
               f"(p = {result.predicted_prob[-1]:.3f}) after {literal(repr(result.tokens[result.position]))}; "
               f"it is the lens's top-1 there from layer {first} of {result.n_layers} on.")
    st.plotly_chart(lens_figure(result), width="stretch", key="inspect-lens-map")
    st.plotly_chart(final_figure(result), width="stretch", key="inspect-lens-final")


def head_drilldown(layer: int, head_index: int, at: int | None = None) -> None:
    st.subheader(f"Head L{layer}H{head_index}")
    ablate_head_button(layer, head_index)
    computed = run_verb(head, handle, HeadConfig(prompt=prompt, layer=layer, head=head_index,
                                                 position=position if at is None else at), label="Head drill-down")
    if computed is None:
        return
    result = computed.value
    st.caption(f"What it writes at position {result.position} ({literal(repr(result.tokens[result.position]))}), "
               f"read through the final norm and the unembedding: its direct effect on every logit "
               f"(|write| = {result.write_norm:.3g}).")
    left, right = st.columns([3, 2])
    left.plotly_chart(pattern_figure(result.tokens, result.pattern, f"Attention pattern of L{layer}H{head_index}"),
                      width="stretch", key="inspect-head-pattern")
    with right:
        st.markdown("**Promoted**")
        st.dataframe(effects_frame(result.promoted), hide_index=True, width="stretch")
        st.markdown("**Suppressed**")
        st.dataframe(effects_frame(result.suppressed), hide_index=True, width="stretch")


def dla_tab() -> None:
    c1, c2 = st.columns(2)
    target = c1.text_input("Target token (empty: the model's prediction)", key="inspect-target",
                           persist_state="session", help="Exactly one token; mind the leading space (' Paris').")
    contrast = c2.text_input("Contrast token (optional)", key="inspect-contrast", persist_state="session")
    computed = run_verb(dla, handle, DlaConfig(prompt=prompt, position=position, target=target, contrast=contrast),
                        label="Direct logit attribution", when=ASK)
    if computed is None:
        return
    result = computed.value
    top = divmod(int(abs(result.heads).argmax()), result.heads.shape[1])
    st.caption(f"{logit_name(result)} = {result.logit:.4f}; embedding {result.embed:+.3f} + heads "
               f"{result.heads.sum():+.3f} + MLPs {result.mlps.sum():+.3f} + biases {result.biases:+.3f} = "
               f"{result.total:.4f}. Largest head: L{top[0]}H{top[1]} ({result.heads[top]:+.3f}).")
    clicked = clickable_chart(dla_figure(result), key="inspect-dla-map")
    st.plotly_chart(mlp_figure(result), width="stretch", key="inspect-dla-mlps")
    chosen = DLA_HEAD.pick(clicked, context=prompt, fits=within(info.n_layers, info.n_heads))
    if chosen is not None:
        head_drilldown(*chosen.values)
    else:
        st.info("Click a head on the map to open its attention pattern and the tokens it promotes and suppresses.")
    wanted = dla_drilldowns(prompt, position, info.n_layers, info.n_heads)
    prepare_drilldowns(f"inspect-dla-prepare-{handle.fingerprint}-{hash(wanted)}", f"the {len(wanted.heads)} heads",
                       lambda progress: store_drilldowns(handle, wanted, progress),
                       stored=lambda: drilldowns_stored(handle, wanted))


def attention_tab() -> None:
    c1, c2 = st.columns(2)
    layer = int(c1.number_input("Layer", 0, info.n_layers - 1, 0, key="inspect-att-layer", persist_state="session"))
    head_index = int(c2.number_input("Head", 0, info.n_heads - 1, 0, key="inspect-att-head",
                                     persist_state="session"))
    computed = run_verb(attention, handle, AttentionConfig(prompt=prompt, layer=layer, head=head_index),
                        label="Attention pattern", when=ASK)
    if computed is not None:
        result = computed.value
        st.plotly_chart(pattern_figure(result.tokens, result.pattern, f"Layer {layer}, head {head_index}"),
                        width="stretch", key="inspect-att-map")
        st.caption(f"{len(result.tokens)} tokens: " + literal(" | ".join(result.tokens)))


lazy_tabs({"Graph": lambda: graph_tab(handle, prompt, position, head_drilldown), "Logit lens": lens_tab,
           "Direct logit attribution": dla_tab, "Attention": attention_tab,
           "All heads": lambda: heads_tab(handle, prompt, info.n_layers, info.n_heads),
           "Input attribution": lambda: attribution_tab(handle, prompt),
           "Patch": lambda: patch_tab(handle), "Ablate": lambda: ablate_tab(handle, prompt),
           "Steer": lambda: steer_tab(handle, prompt)}, key="inspect-tabs", shared=True)
