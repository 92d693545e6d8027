"""Inspect's causal sections: Patch (clean -> corrupted activation patching, click a cell for its top tokens),
Ablate and Steer, with one-click links: a patching cell opens Ablate on that head / layer or Steer at that layer, and
Ablate can take the head opened on the DLA map."""
from __future__ import annotations

import re

import streamlit as st

from app.figures.clickable import HEAD
from app.figures.inspect_patch import CELL, cell_of, patch_figure, patch_grid, steer_lens_figure, top_frame
from app.ui.drilldown import Drilldown, clickable_chart, within
from app.ui.params import number_for, select_for
from app.ui.run import ASK, run_verb
from app.ui.text import literal
from backend.internals.intervene_config import AblateConfig, PatchConfig, SteerConfig
from backend.internals.patching import cell_name
from backend.internals.verbs import ablate, patch, steer
from backend.params import declared, default_of

TABS_KEY = "inspect-tabs"  # the page's lazy_tabs key: a link opens another section by setting it
DLA_HEAD = Drilldown("inspect-head", (HEAD,))  # opened on the DLA map, in the context of its prompt


def patch_cells(site: str) -> Drilldown:
    """A cell of the patching map of `site`: each site keeps its own pick."""
    return Drilldown(f"inspect-patch-cell-{site}", (CELL,))
SITE_LABELS = {"resid_pre": "residual stream (layer × position)", "attn_out": "attention output (layer × position)",
               "mlp_out": "MLP output (layer × position)", "head": "each head, all positions (layer × head)",
               "head_pos": "each head at each position (slow)"}


def swap_names(text: str) -> str | None:
    """A suggested corruption: the last mention of one of the first two capitalised names (after the first word)
    becomes the other ("..., John gave a drink to" -> "..., Mary gave a drink to"); without two names, the last two
    words of four letters or more trade places. None when neither applies."""
    words = [(m.start(), m.group()) for m in re.finditer(r"\b[A-Z][a-z]+\b", text) if m.start() > 0]
    names = list(dict.fromkeys(w for _, w in words))
    if len(names) >= 2:
        a, b = names[:2]
        at, word = [(i, w) for i, w in words if w in (a, b)][-1]
        return text[:at] + (b if word == a else a) + text[at + len(word):]
    long = [m for m in re.finditer(r"\b\w{4,}\b", text)]
    if len(long) < 2:
        return None
    x, y = long[-2], long[-1]
    return text[:x.start()] + y.group() + text[x.end():y.start()] + x.group() + text[y.end():]


def _text(cls: type, name: str, label: str, key: str, area: bool = False, container=st) -> str:
    spec = declared(cls, name)
    st.session_state.setdefault(key, default_of(cls, name))
    widget = container.text_area if area else container.text_input
    return widget(label, key=key, help=spec.help if spec else None, persist_state="session",
                  **({"height": 80} if area else {}))


def _open(tab: str, values: dict) -> None:
    """A link's callback: set the other section's widgets, then open its tab (before the widgets are drawn)."""
    st.session_state.update(values)
    st.session_state[TABS_KEY] = tab


def patch_tab(handle) -> None:
    st.caption("Run the corrupted prompt with one activation taken from the clean run: 1 = that activation alone "
               "restores the clean logit difference, 0 = it does nothing (causal tracing, Meng et al. 2022; the IOI "
               "circuit, Wang et al. 2022). Both prompts must have the same number of tokens.")
    if st.button("Swap two names / words", key="inspect-patch-swap",
                 help="Fill the corrupted prompt with the clean one, two names or words exchanged."):
        suggested = swap_names(st.session_state.get("inspect-patch-clean", PatchConfig.clean))
        if suggested is not None:
            st.session_state["inspect-patch-corrupted"] = suggested
    c1, c2 = st.columns(2)
    clean = _text(PatchConfig, "clean", "Clean prompt", "inspect-patch-clean", True, c1)
    corrupted = _text(PatchConfig, "corrupted", "Corrupted prompt", "inspect-patch-corrupted", True, c2)
    c1, c2, c3 = st.columns([1, 1, 2])
    target = _text(PatchConfig, "target", "Target token (empty: clean prediction)", "inspect-patch-target", False, c1)
    contrast = _text(PatchConfig, "contrast", "Contrast (empty: corrupted prediction)", "inspect-patch-contrast",
                     False, c2)
    site = select_for(PatchConfig, "site", "Site", labels=SITE_LABELS, key="inspect-patch-site", container=c3)
    computed = run_verb(patch, handle, PatchConfig(clean=clean, corrupted=corrupted, target=target,
                                                   contrast=contrast, site=site),
                        label="Activation patching", when=ASK)
    if computed is None:
        return
    result = computed.value
    st.caption(f"logit({literal(repr(result.target_token))}) − logit({literal(repr(result.contrast_token))}): "
               f"clean {result.clean_logit_diff:+.3f}, corrupted {result.corrupted_logit_diff:+.3f}.")
    clicked = clickable_chart(patch_figure(result), key="inspect-patch-map")
    grid, _, _ = patch_grid(result)
    chosen = patch_cells(result.site).pick(clicked, fits=within(*grid.shape))
    if chosen is None:
        st.info("Click a cell to see the patched run's top tokens beside the clean and corrupted ones.")
        return
    _patched_cell(result, cell_of(result, *chosen.values), clean, corrupted)


def _patched_cell(result, cell: tuple[int, ...], clean: str, corrupted: str) -> None:
    name = cell_name(result.site, cell)
    st.subheader(f"Patched {result.site} at {name}: {float(result.values[cell]):+.3f}")
    for column, title, top in zip(st.columns(3), ("Clean", "Patched", "Corrupted"),
                                  (result.clean_top, result.top_at(cell), result.corrupted_top)):
        column.markdown(f"**{title}**")
        column.dataframe(top_frame(top), hide_index=True, width="stretch")
    layer = int(cell[0])
    ablation = ({"inspect-ablate-heads": f"{layer}.{int(cell[1])}", "inspect-ablate-layers": "",
                 "inspect-ablate-mlps": ""} if result.site in ("head", "head_pos") else
                {"inspect-ablate-layers": str(layer), "inspect-ablate-heads": "", "inspect-ablate-mlps": ""}
                if result.site == "attn_out" else
                {"inspect-ablate-mlps": str(layer), "inspect-ablate-heads": "", "inspect-ablate-layers": ""}
                if result.site == "mlp_out" else None)
    c1, c2 = st.columns(2)
    if ablation is not None:
        c1.button("Ablate this", key="inspect-patch-ablate", on_click=_open, args=("Ablate", ablation),
                  help="Open Ablate on this component, on the page's prompt.")
    c2.button(f"Steer with clean − corrupted at layer {layer}", key="inspect-patch-steer", on_click=_open,
              args=("Steer", {"inspect-steer-plus": clean, "inspect-steer-minus": corrupted,
                              "inspect-steer-layer": layer}),
              help="Open Steer with the clean prompt as plus and the corrupted one as minus, at this layer.")


def ablate_head_button(layer: int, head: int) -> None:
    """The one-click link from a head's drill-down (the DLA map, a graph edge) to ablating that head alone."""
    st.button(f"Ablate L{layer}H{head}", key=f"inspect-ablate-link-{layer}-{head}", on_click=_open,
              args=("Ablate", {"inspect-ablate-heads": f"{layer}.{head}", "inspect-ablate-layers": "",
                               "inspect-ablate-mlps": "", "inspect-ablate-neurons": ""}),
              help="Open the Ablate tab with this head (zero or mean) and compare the prediction before and after.")


def ablate_tab(handle, prompt: str) -> None:
    st.caption("Zero a set of components, or replace them by their mean over reference texts (mean ablation keeps "
               "their typical output and removes only what depends on this prompt), and compare before and after "
               "on the prompt above.")
    picked = DLA_HEAD.pick(context=prompt)  # only a head opened on this prompt
    if picked is not None:
        layer, head = picked.values
        st.button(f"Ablate L{layer}H{head} (opened on the DLA map)", key="inspect-ablate-dla",
                  on_click=_open, args=("Ablate", {"inspect-ablate-heads": f"{layer}.{head}"}))
    c1, c2, c3, c4 = st.columns(4)
    heads = _text(AblateConfig, "heads", "Heads (L.H)", "inspect-ablate-heads", False, c1)
    layers = _text(AblateConfig, "layers", "Attention layers", "inspect-ablate-layers", False, c2)
    mlps = _text(AblateConfig, "mlps", "MLP layers", "inspect-ablate-mlps", False, c3)
    neurons = _text(AblateConfig, "neurons", "Neurons (L:I)", "inspect-ablate-neurons", False, c4)
    c1, c2, c3 = st.columns(3)
    mode = select_for(AblateConfig, "mode", "Mode", key="inspect-ablate-mode", container=c1)
    target = _text(AblateConfig, "target", "Target token (empty: prediction before)", "inspect-ablate-target",
                   False, c2)
    n_new = number_for(AblateConfig, "generate", "Greedy tokens", key="inspect-ablate-generate", container=c3)
    reference = AblateConfig.reference
    if mode == "mean":
        with st.expander("Reference texts for the mean"):
            reference = _text(AblateConfig, "reference", "One per line", "inspect-ablate-reference", True)
    if not any(x.strip() for x in (heads, layers, mlps, neurons)):
        st.info("Name what to ablate: heads like 5.3, layers like 4, neurons like 12:401 — or click a cell of the "
                "patching map and 'Ablate this'.")
        return
    computed = run_verb(ablate, handle, AblateConfig(
        prompt=prompt, heads=heads, layers=layers, mlps=mlps, neurons=neurons, mode=mode, reference=reference,
        target=target, generate=int(n_new)), label="Ablation", when=ASK)
    if computed is None:
        return
    result = computed.value
    st.caption(f"{result.mode} ablation of " + literal(", ".join(result.ablated)))
    for column, title, run in zip(st.columns(2), ("Before", "After"), (result.before, result.after)):
        column.markdown(f"**{title}** · logit({literal(repr(result.target_token))}) = {run.logit_diff:+.3f}")
        column.dataframe(top_frame(run.top), hide_index=True, width="stretch")
        if run.generation:
            column.text(run.generation)


def steer_tab(handle, prompt: str) -> None:
    st.caption("Add (plus − minus) × coefficient to the residual stream entering a layer, at every position of the "
               "prompt above and its greedy continuation (activation addition, Turner et al. 2023).")
    c1, c2 = st.columns(2)
    plus = _text(SteerConfig, "plus", "Plus prompt(s), one per line", "inspect-steer-plus", True, c1)
    minus = _text(SteerConfig, "minus", "Minus prompt(s), one per line", "inspect-steer-minus", True, c2)
    c1, c2, c3 = st.columns(3)
    layer = number_for(SteerConfig, "layer", "Layer", key="inspect-steer-layer", container=c1,
                       max_value=handle.info.n_layers - 1, value=min(SteerConfig.layer, handle.info.n_layers - 1))
    coefficients = _text(SteerConfig, "coefficients", "Coefficients", "inspect-steer-coefficients", False, c2)
    n_new = number_for(SteerConfig, "max_new_tokens", "Greedy tokens", key="inspect-steer-new", container=c3)
    computed = run_verb(steer, handle, SteerConfig(
        plus=plus, minus=minus, layer=int(layer), coefficients=coefficients, prompt=prompt,
        max_new_tokens=int(n_new)), label="Steering", when=ASK)
    if computed is None:
        return
    result = computed.value
    st.caption(f"|plus − minus| = {result.vector_norm:.3g} at layer {result.layer}.")
    for coefficient, text in zip(result.coefficients, result.generations):
        st.markdown(f"**× {coefficient:g}**")
        st.text(text)
    st.plotly_chart(steer_lens_figure(result), width="stretch", key="inspect-steer-lens")
