"""The "Corpus jobs" panel (NAG and Watermark pages): launch a local job on an uploaded or server-side corpus,
watch its progress, open a finished job and export its rows. The job runs in a background thread of this
server (app.ui.run.start_in_background): its progress and Stop belong to the browser session that started it; its
shards and totals are read back from the store (backend.corpus.jobs), so any session sees them."""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import streamlit as st

from app.ui.guarded import guarded
from app.ui.run import background_progress, background_run, start_in_background
from app.ui.text import literal
from backend.corpus import jobs
from backend.corpus.capped import MAX_SHARDS, SHARD_UPLOAD, check_shard_set, check_upload
from backend.corpus.shards import SHARD_SUFFIXES
from backend.corpus.uploads import save_upload_set
from backend.progress import Partial

MAX_DOWNLOAD_ROWS = 200_000  # larger jobs: export on the server (the path is shown)
PREVIEW_ROWS = 200  # rows of a job's output shown on the page (running or opened)
KEPT_ON_STOP = "the shards finished before it are stored (a re-run skips them)"


def _launch(key: str, corpus: str, launch: Callable) -> None:
    """The job in a background thread, watched by this browser session only (app.ui.run keeps it per session)."""
    start_in_background(key, "Corpus job", lambda progress: launch(corpus, progress), kept=KEPT_ON_STOP)


def _progress_view(key: str) -> None:
    run = background_progress(key)
    if run is not None and run.running and run.so_far is not None:
        _rows_so_far(run.so_far)
    if run is not None and not run.running and run.result is not None:
        job = run.result
        st.success(f"Job {job.job_id}: {job.rows:,} rows, {job.processed} shard(s) run, {job.skipped} already done, "
                   f"{len(job.failed)} failed.")


def _rows_so_far(so_far: Partial) -> None:
    """While a job runs: the rows its finished shards wrote (the first PREVIEW_ROWS), read back from the store."""
    rows = guarded(lambda: _first_rows(so_far.value))
    if rows is None or rows.num_rows == 0:
        return
    st.caption(f"So far: {so_far.line()} finished; the first {rows.num_rows:,} rows of their output (the job goes on).")
    st.dataframe(rows.to_pandas(), hide_index=True, width="stretch")


def _first_rows(job_id: str) -> pa.Table:
    taken: list[pa.Table] = []
    for table in jobs.iter_tables(job_id):
        taken.append(table)
        if sum(t.num_rows for t in taken) >= PREVIEW_ROWS:
            break
    return pa.concat_tables(taken).slice(0, PREVIEW_ROWS) if taken else pa.table({})


def corpus_jobs_panel(kind: str, launch: Callable, key: str, open_job: Callable[[str], None] | None = None) -> None:
    """`launch(corpus, progress) -> JobSummary` runs the page's job locally; `open_job(job_id)` shows a finished
    job the page's way (e.g. NAG re-ranks it against the current targets); without it, rows are previewed."""
    # Its body (a store query, the jobs table) runs only while it is open: most visits never open it.
    panel = st.expander("Corpus jobs", expanded=False, key=f"{key}-panel", on_change="rerun")
    if not panel.open:
        return
    with panel:
        st.caption("A corpus is a file, a folder or a glob of JSONL / Parquet / TXT shards, streamed shard by shard; "
                   "a re-run skips the shards already done. Large corpora: `python -m backend ... --engine ray`.")
        source = st.radio("Corpus", ["Server path", "Upload"], horizontal=True, key=f"{key}-source",
                          persist_state="session")
        if source == "Server path":
            corpus = st.text_input("File, folder or glob on the server", key=f"{key}-path",
                                   persist_state="session").strip()
        else:
            files = st.file_uploader("Shards", type=[s.lstrip(".") for s in SHARD_SUFFIXES],
                                     accept_multiple_files=True, key=f"{key}-upload",
                                     max_upload_size=SHARD_UPLOAD.upload_mb,
                                     help=f"Up to {MAX_SHARDS} shards at a time; each "
                                          f"{SHARD_UPLOAD.describe()}.")
            corpus = guarded(lambda: str(_save_shards(files))) if files else ""
        running = background_run(key)
        busy = running is not None and running.running
        if st.button("Run local job", disabled=not corpus or busy, key=f"{key}-run"):
            _launch(key, corpus, launch)
            busy = True
        _watch(key, busy)
        _jobs_table(kind, key, open_job)


def _save_shards(files) -> Path:
    """The uploaded shards on disk, each checked against its caps first (the set by its sizes alone); once per
    set of uploaded files, not on every rerun of the page."""
    saved: dict = st.session_state.setdefault("corpus-shards-saved", {})
    ids = tuple(f.file_id for f in files)
    if ids not in saved:
        check_shard_set([(f.name, f.size) for f in files])
        for f in files:
            check_upload(f.getvalue(), f.name, SHARD_UPLOAD)
        saved.clear()  # one set per session: the previous one stays on disk for its jobs, not in memory here
        saved[ids] = save_upload_set([(f.name, f.getvalue()) for f in files])
    return saved[ids]


def _watch(key: str, busy: bool) -> None:
    if busy:
        st.fragment(lambda: _progress_view(key), run_every=2.0)()
    else:
        _progress_view(key)


def _jobs_table(kind: str, key: str, open_job: Callable[[str], None] | None) -> None:
    frame = guarded(lambda: jobs.list_jobs(kind))
    if frame is None or frame.empty:
        st.caption("No corpus job yet.")
        return
    shown = frame[["job_id", "corpus", "status", "done_shards", "failed_shards", "shards", "rows", "engine",
                   "seconds", "updated"]].astype({"updated": str})
    st.dataframe(shown, hide_index=True, width="stretch")
    chosen = st.selectbox("Open a job", list(frame["job_id"]), key=f"{key}-open", persist_state="session")
    if not chosen:
        return
    shards = guarded(lambda: jobs.job_shards(chosen))
    if shards is not None and (shards["status"] == "failed").any():
        st.warning("Some shards could not be read (the job went on without them):")
        st.dataframe(shards.loc[shards["status"] == "failed", ["path", "error"]], hide_index=True, width="stretch")
    if open_job is not None:
        open_job(chosen)
    else:
        first = guarded(lambda: next(jobs.iter_tables(chosen), None))  # the first shard's file only
        if first is not None:
            st.dataframe(first.slice(0, PREVIEW_ROWS).to_pandas(), hide_index=True, width="stretch")
    _export(chosen, int(frame.loc[frame["job_id"] == chosen, "rows"].iloc[0]), key)


def _export(job_id: str, rows: int, key: str) -> None:
    if rows > MAX_DOWNLOAD_ROWS:
        st.caption(f"{rows:,} rows: export on the server with `jobs.export_job('{job_id}', OUT.parquet)`; shards in "
                   f"{literal(str(jobs.job(job_id)['out_dir']))}.")
        return
    if st.button("Prepare Parquet export", key=f"{key}-export-{job_id}"):
        with tempfile.NamedTemporaryFile(suffix=".parquet") as tmp:
            guarded(lambda: jobs.export_job(job_id, tmp.name))
            data = Path(tmp.name).read_bytes()
        st.download_button("Download job rows (Parquet)", data, file_name=f"corpus-job-{job_id}.parquet",
                           mime="application/octet-stream", key=f"{key}-download-{job_id}")

