"""FP8 bounds: spectral bounds on attention logits, geometry-aware FP8 scales, transient simulation."""
import pandas as pd
import streamlit as st

from app.figures.findings import fp8_finding
from app.figures.fp8 import HEATMAP_VIEWS, concentration_figure, head_heatmap, layer_bounds_figure, transient_figure
from app.ui.downloads import table_downloads
from app.ui.drilldown import clickable_chart
from app.ui.fp8_head import head_drilldown
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.params import number_for, select_for, slider_for
from app.ui.run import ASK, run_verb
from app.ui.tabs import lazy_tabs
from app.ui.text import literal
from backend.fp8 import FORMATS, SIGMA_METHODS, BoundsConfig, SimulateConfig, bounds, concentration_curves, simulate

st.title("FP8 attention bounds")
st.write("For every head, |S_ij| = |x_i^T W_Q W_K^T x_j| / sqrt(d_h) is bounded from the spectral norm of the "
         "query-key interaction (norm gains folded in, keys shared per GQA group), without looking at "
         "activations. The bound gives per-layer FP8 scale factors that cannot overflow; sample texts show how "
         "much of that range real logits use.")

handle = current_model()
if handle is None:
    st.stop()
info = handle.info

with st.expander("Settings", expanded=False):
    c1, c2, c3, c4 = st.columns(4)
    method = select_for(BoundsConfig, "method", "sigma method", labels=SIGMA_METHODS.labels(), container=c1,
                        key="fp8-method")
    calibration = number_for(BoundsConfig, "calibration", "calibration α", container=c2, min_value=0.01,
                             max_value=100.0, step=0.1, key="fp8-alpha")
    fmt = select_for(BoundsConfig, "fp8_format", "FP8 format", labels=FORMATS.labels(), container=c3,
                     key="fp8-format")
    n_texts = slider_for(BoundsConfig, "n_texts", "sample texts", container=c4, key="fp8-texts")
config = BoundsConfig(method=method, calibration=float(calibration), fp8_format=fmt, n_texts=n_texts)

computed = run_verb(bounds, handle, config, label="Spectral bounds", when=ASK)
if computed is None:
    st.stop()
result = computed.value
st.caption(f"Model: {literal(handle.display_name)} · d = {info.hidden_size}, d_h = {info.head_dim}, "
           f"{info.n_heads} heads / {info.n_kv_heads} kv heads · RoPE: {'yes' if result.rope else 'no'} · "
           f"QK-norm: {'yes' if result.qk_norm else 'no'} · biases folded: {'yes' if result.augmented else 'no'}")

m1, m2, m3, m4 = st.columns(4)
m1.metric("Largest layer bound", f"{result.layer_bound.max():.4g}")
observed_any = bool(pd.notna(result.observed).any())
m2.metric("Largest observed |S|", f"{pd.Series(result.observed.ravel()).max():.4g}" if observed_any else "—")
m3.metric("Max utilisation", f"{100 * pd.Series(result.utilisation).max():.2f} %" if observed_any else "—")
m4.metric("power vs exact", f"{result.check_max_rel_error:.1e}" if pd.notna(result.check_max_rel_error) else "—",
          help=f"max relative deviation of sigma from the exact value; {result.iterations} iterations")
if observed_any and (result.observed > result.bound).any():
    st.warning("An observed score exceeds its bound: this would be a bug, please report it.")
else:
    st.info(fp8_finding(result))

view = st.radio("Heatmap", list(HEATMAP_VIEWS), horizontal=True, key="fp8-view", persist_state="session")
heads_clicked = clickable_chart(head_heatmap(result, view), key="fp8-heatmap")
layers_clicked = clickable_chart(layer_bounds_figure(result), key="fp8-bounds")
head_drilldown(handle, config, result, (heads_clicked, layers_clicked))



def scales_tab() -> None:
    st.caption(f"scale = {result.fp8_max:g} / (α · bound) per layer ({result.fp8_format}); headroom = "
               "log2(bound / observed), the bits of FP8 range the guarantee costs on these texts.")
    table = pd.DataFrame(result.table())
    st.dataframe(table, hide_index=True, width="stretch")
    table_downloads(table, f"fp8-scales-{handle.id}", key="fp8-scales-export")


def concentration_tab() -> None:
    gamma = st.slider("γ (rank-aware constant, > 1)", 1.05, 8.0, 2.0, 0.05, key="fp8-gamma",
                      persist_state="session")
    curves = guarded(lambda: concentration_curves(info.hidden_size, info.head_dim, gamma))
    if curves is not None:
        st.plotly_chart(concentration_figure(curves, handle.display_name), width="stretch",
                        key="fp8-concentration")
        st.caption(f"With d = {curves.d} and r = d_h = {curves.r}, the rank-aware exponent is "
                   f"{curves.exponent_ratio:.1f}× larger; at tail 1e{curves.target_log10:g} it certifies a "
                   f"{curves.alpha_ratio:.2f}× smaller deviation.")


def transient_tab() -> None:
    with st.form("fp8-sim"):
        s1, s2, s3, s4 = st.columns(4)
        layer = number_for(SimulateConfig, "layer", "layer", container=s1, min_value=0,
                           max_value=info.n_layers - 1, key="fp8-sim-layer",
                           persist_state="session")
        spike = number_for(SimulateConfig, "spike_factor", "spike factor (q, k)", container=s2, min_value=1.0,
                           max_value=64.0, step=0.5, key="fp8-sim-spike",
                           persist_state="session")
        spike_step = number_for(SimulateConfig, "spike_step", "spike step", container=s3, min_value=1,
                                max_value=79, key="fp8-sim-step",
                                persist_state="session")
        history = number_for(SimulateConfig, "history_len", "amax history", container=s4, max_value=1024,
                             key="fp8-sim-history",
                             persist_state="session")
        if st.form_submit_button("Run simulation", type="primary"):
            st.session_state["fp8-sim-config"] = handle.id, SimulateConfig(
                layer=int(layer), spike_factor=float(spike), spike_step=int(spike_step),
                history_len=int(history), n_steps=max(40, int(spike_step) + 20), calibration=float(calibration),
                fp8_format=fmt, method=method)
    sim_model, sim_config = st.session_state.get("fp8-sim-config", (None, None))
    if sim_config is None or sim_model != handle.id:
        st.caption("The simulation runs the selected layer on the sample texts; press the button to start it.")
        return
    sim = run_verb(lambda progress: simulate(handle, sim_config, progress=progress), label="Transient simulation")
    if sim is not None:
        summary = sim.value.summary()
        k1, k2, k3 = st.columns(3)
        k1.metric("Overflows, delayed scaling", summary["overflows_delayed"])
        k2.metric("Overflows, geometry-aware", summary["overflows_geometry"])
        k3.metric("Rel. error geometry / delayed",
                  f"{summary['mean_rel_error_geometry']:.3f} / {summary['mean_rel_error_delayed']:.3f}")
        st.plotly_chart(transient_figure(sim.value), width="stretch", key="fp8-transient")
        steps = pd.DataFrame(sim.value.table())
        table_downloads(steps, f"fp8-transient-{handle.id}", key="fp8-transient-export")


# The theory and the simulation are a click away: the first view is the bounds and the scales they give.
lazy_tabs({"Scale factors": scales_tab, "Rank-aware vs rank-agnostic concentration": concentration_tab,
           "Training transient: delayed vs geometry-aware scaling": transient_tab}, key="fp8-more")
