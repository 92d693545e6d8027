"""The corpus-jobs panel's Stop: the background job ends at its next progress step and says it can resume."""
import threading

from app.ui import corpus_jobs
from tests.support.waiting import wait_until


def test_stop_ends_a_running_corpus_job_at_its_next_step():
    started, stop_pressed, shards_done = threading.Event(), threading.Event(), []

    def launch(corpus, progress):  # a job over many shards, reporting after each
        for i in range(1000):
            progress(i / 1000, f"shard {i}")
            started.set()
            shards_done.append(i)
            stop_pressed.wait(30)  # the first shard lasts until Stop is pressed; the next report must end the job
        raise AssertionError("the job should have been stopped")

    corpus_jobs._launch("test-stop", "corpus", launch)
    assert started.wait(30)
    state = corpus_jobs._running["test-stop"]
    state["stop"] = True  # what the Stop button does
    stop_pressed.set()
    wait_until(lambda: state.get("stopped"), 30, "the job to say it stopped")
    assert state["stopped"].startswith("Corpus job: stopped after ") and not state["error"] and state["job"] is None
    assert "the shards finished before it are stored" in state["stopped"]
    assert shards_done == [0]  # ended at the first progress report after Stop
