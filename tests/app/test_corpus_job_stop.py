"""The corpus-jobs panel's Stop: the background job ends at its next progress step and says it can resume."""
import threading
import time

from app.ui import corpus_jobs


def test_stop_ends_a_running_corpus_job_at_its_next_step():
    started, shards_done = threading.Event(), []

    def launch(corpus, progress):  # a job over many shards, reporting after each
        for i in range(1000):
            progress(i / 1000, f"shard {i}")
            started.set()
            shards_done.append(i)
            time.sleep(0.01)
        raise AssertionError("the job should have been stopped")

    corpus_jobs._launch("test-stop", "corpus", launch)
    assert started.wait(30)
    state = corpus_jobs._running["test-stop"]
    state["stop"] = True  # what the Stop button does
    deadline = time.monotonic() + 30
    while not state.get("stopped") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state["stopped"].startswith("Corpus job: stopped after ") and not state["error"] and state["job"] is None
    assert "the shards finished before it are stored" in state["stopped"]
    assert len(shards_done) < 1000
