"""Home: what each view does, the loaded model, the store's status."""
import streamlit as st

from app.figures.runs import runs_per_feature
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.scope import listed_session
from app.views import FEATURES, TOOLS
from app.ui.text import literal
from backend.models import GEMMA_TERMS_URL
from backend.store import RunFilter, count_runs, list_runs, status

EMBEDDED_NOTE = ("Embedded offline models: SmolLM2-135M-Instruct (the default) and Gemma-3-270M base, the model "
                 "that translates (MT heads opens on it).")
GEMMA_TERMS = f"Gemma is provided under and subject to the [Gemma Terms of Use]({GEMMA_TERMS_URL})."

st.title("Interpretability & decoding dashboard")
st.write("Live results from real transformer models: every figure is computed from the selected model and "
         "cached in DuckDB, and every computation is also available headless as `python -m backend …`.")

st.subheader("Views")
for view in (*FEATURES, *TOOLS):
    with st.container(border=True):
        st.markdown(f"**{view.title}** — {view.summary}")
        if view.finding:
            st.caption(f"Reproduces: {view.finding}")

left, right = st.columns(2)
with left:
    st.subheader("Model")
    handle = current_model()
    if handle is not None:
        info = handle.summary()
        st.markdown(f"**{literal(handle.display_name)}**")
        st.dataframe({"": ["parameters", "architecture", "layers × heads (kv heads)", "fingerprint", "device",
                           "load time"],
                      "value": [f"{info['parameters'] / 1e6:.1f} M", info["architecture"],
                                f"{info['layers']} × {info['heads']} ({info['kv_heads']})", info["fingerprint"],
                                info["device"], f"{info['load_seconds']:.2f} s"]},
                     hide_index=True, width="stretch")
    st.caption(EMBEDDED_NOTE)
    st.markdown(GEMMA_TERMS)
with right:
    st.subheader("Artifact store")
    store = guarded(status)
    session = listed_session()  # the runs the Runs page lists, counted by the same function
    runs = guarded(lambda: list_runs(RunFilter(session=session, limit=10_000)))
    total = guarded(lambda: count_runs(RunFilter(session=session)))
    if store is not None and runs is not None and total is not None:
        c1, c2, c3 = st.columns(3)
        c1.metric("Artifacts", store.artifacts)
        c2.metric("Runs", total)
        c3.metric("Size", f"{store.size_bytes / 1e6:.1f} MB")
        st.caption(f"`{store.path}` · artifacts by origin: "
                   + ", ".join(f"{n} {origin}" for origin, n in store.by_origin.items())
                   + ("" if session is None else " · runs: this browser session's"))
        st.plotly_chart(runs_per_feature(runs), width="stretch", key="home-runs-per-feature")
