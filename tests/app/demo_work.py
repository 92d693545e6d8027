"""Work for the tests of app/ui/run.py: a small verb (not registered: the listing and the contract test cover the
product's verbs only) and a corpus job that waits for the test between its steps."""
from __future__ import annotations

import threading
from dataclasses import dataclass

from backend.corpus.jobs import JobSummary
from backend.errors import UserError
from backend.store import ModelRef
from backend.verbs import Verb

BAD_TOKEN = "No such token: `<b>x</b>` (a user's text, shown as typed)"


@dataclass(frozen=True)
class DoubleConfig:
    n: int = 1
    fail: bool = False  # the user's mistake: a UserError
    interrupt: bool = False  # ends the script run at its progress step, as Streamlit does for a Stop's rerun


def _double(subject, config: DoubleConfig, progress) -> int:
    progress(0.5, "halfway")
    if config.interrupt:
        import streamlit as st

        st.stop()
    if config.fail:
        raise UserError(BAD_TOKEN)
    return 2 * config.n


def _tiny(subject) -> ModelRef:
    return ModelRef("tiny", "f00d")


DOUBLE = Verb("demo", "double", DoubleConfig, _double, "double a number", ref=_tiny)


def waiting_job(corpus: str, progress, started: threading.Event, go_on: threading.Event) -> JobSummary:
    """A corpus job of two steps: it says it started, then waits for `go_on` before its second step."""
    progress(0.0, f"shard 1 of 2 of {corpus}")
    started.set()
    if not go_on.wait(60):
        raise AssertionError("the test never let the job go on")
    progress(0.5, "shard 2 of 2")
    return JobSummary(job_id="job-1", kind="demo", out_dir="", shards=2, processed=2, skipped=0, rows=10,
                      checksum="", status="done", seconds=0.0)


def job_then_wait(corpus: str, progress, task, started: threading.Event, go_on: threading.Event) -> JobSummary:
    """A real corpus job of `task`, then a wait for `go_on` before it ends: the page watches it still running with
    its shards done."""
    from backend.corpus.jobs import run_job

    summary = run_job("count", task, corpus, progress=progress)
    started.set()
    if not go_on.wait(60):
        raise AssertionError("the test never let the job end")
    return summary
