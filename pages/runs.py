"""Runs: list, filter, reopen, export and delete stored computations."""
import json

import streamlit as st

from app.figures.runs import runs_timeline
from app.ui.downloads import deferred_download, table_downloads
from app.ui.guarded import guarded
from app.ui.scope import delete_rights, listed_session
from app.ui.text import literal
from backend.store import (RunFilter, count_runs, delete_runs, list_runs, preview_delete, reopen, result_json,
                           to_jsonable)


def delete_section(own, rights) -> None:
    """Pick runs of `own` (the ones this session may delete), see exactly what goes, confirm, delete."""
    doomed = st.multiselect("Runs to delete", own["run_id"], help=rights.reason)
    plan = guarded(lambda: preview_delete(list(doomed), rights.session)) if doomed else None
    if plan is not None:  # exactly what the button removes: shipped, imported and others' results stay
        st.info(literal(f"Deletes {plan.describe()}"))
    sure = st.checkbox(f"Yes, delete {len(doomed)} run(s) and the stored results listed above", value=False,
                       disabled=plan is None, key="runs-confirm", persist_state="session")
    if st.button("Delete selected", type="primary", disabled=not (plan is not None and sure)):
        done = guarded(lambda: delete_runs(list(doomed), rights.session))
        if done is not None:
            st.session_state["runs-flash"] = f"Deleted {done.describe()}"
            st.rerun()


st.title("Runs")
st.caption("Every request is a run; identical requests share one stored artifact and are served from DuckDB.")

if "runs-flash" in st.session_state:
    st.success(literal(st.session_state.pop("runs-flash")))

# A shared server shows each browser session its own runs (prompts are private), unless started shared.
session = listed_session()
if session is None:
    st.caption("Shared mode (DASH_SHARED_RUNS=1): every session's runs are listed.")
else:
    st.caption("Showing the runs of this browser session (kept in this tab's link). Cached results are still "
               "shared: an identical request from anyone is served from the store.")
total = guarded(lambda: count_runs(RunFilter(session=session)))
if total is None:
    st.stop()
st.metric("Runs", total)
everything = guarded(lambda: list_runs(RunFilter(session=session, limit=100_000)))
if everything is None:
    st.stop()

c1, c2, c3 = st.columns(3)
feature = c1.selectbox("Feature", ["(all)", *sorted(everything["feature"].unique())])
model_id = c2.selectbox("Model", ["(all)", *sorted(everything["model_id"].unique())])
source = c3.selectbox("Source", ["(all)", "computed", "cached", "stopped"],
                      help="stopped: its user stopped it (Stop button, closed tab, Ctrl-C); nothing was stored")
runs = list_runs(RunFilter(feature=None if feature == "(all)" else feature,
                           model_id=None if model_id == "(all)" else model_id,
                           cached=None if source in ("(all)", "stopped") else source == "cached",
                           status={"(all)": None, "stopped": "stopped"}.get(source, "done"), session=session,
                           limit=100_000))

st.plotly_chart(runs_timeline(runs), width="stretch", key="runs-timeline")
st.dataframe(runs, hide_index=True, width="stretch",
             column_config={"params": st.column_config.TextColumn(width="large")})
table_downloads(runs, "runs", key="runs-export")

st.subheader("Reopen a run")  # always there: the page reads the same with or without runs yet
if runs.empty:
    st.caption("Nothing to reopen yet: the runs of this session that match the filters above appear here once a "
               "page has computed or read a result.")
else:
    by_id = runs.set_index("run_id")
    # Nothing is reopened until a run is picked: reading and drawing a full result on every visit of the page
    # cost every user's view of it.
    run_id = st.selectbox("Run", runs["run_id"], index=None, placeholder="Pick a run to see its settings and result",
                          key="runs-reopen", persist_state="session",
                          format_func=lambda r: f"{r} · {by_id.loc[r, 'feature']} · {by_id.loc[r, 'created']}")
    opened = guarded(lambda: reopen(run_id)) if run_id is not None else None
    if opened is not None:
        record, value = opened
        origin = "cached" if record["cached"] else f"computed in {record['seconds']:.2f} s"
        st.markdown(f"**{record['feature']} / {record['action']}** on {literal(record['model_id'])} ({origin})")
        st.json(json.loads(record["params"]), expanded=False)
        with st.expander("Result", expanded=False):
            st.json(to_jsonable(value), expanded=1)
        deferred_download(st, "Download result (JSON)", lambda: result_json(record, value),
                          file_name=f"run-{run_id}.json", mime="application/json")
    rights = delete_rights()  # a runs link grants reading, not deleting
    with st.expander("Delete runs"):
        if not rights.allowed:
            st.info(rights.reason)
        else:
            delete_section(runs if rights.session is None else runs[runs["session"] == rights.session], rights)
