"""Corpus jobs on the local engine: shards from a file / directory / glob, resume after a crash (only the
missing shards run, no duplicated or missing rows), bad shards reported per shard, edited shards redone."""
import pytest

from backend.corpus.engine import EngineConfig
from backend.corpus.jobs import job_shards, list_jobs, run_job, shard_files
from backend.corpus.shards import list_shards
from backend.errors import UserError
from tests.corpus.support import CountTask, add_bad_shards, processed, write_corpus
from tests.support.waiting import wait_until


def _ids(job_id):
    """(shard file, document id) of every stored row (TXT shards number their lines: ids repeat across shards)."""
    import pyarrow.parquet as pq

    return [(path.name, i) for path in shard_files(job_id) for i in pq.read_table(path).column("id").to_pylist()]


def test_corpus_spec_is_a_file_a_directory_or_a_glob(tmp_path):
    corpus = write_corpus(tmp_path / "c", 60, 6)
    assert len(list_shards(corpus)) == 6
    assert [s.name for s in list_shards(str(corpus / "*.jsonl"))] == ["part-00.jsonl", "part-03.jsonl"]
    assert len(list_shards(corpus / "part-01.parquet")) == 1
    with pytest.raises(UserError, match="No corpus shards"):
        list_shards(str(tmp_path / "nothing-*.jsonl"))


def test_interrupted_run_resumes_with_only_the_missing_shards(tmp_path, fresh_store):
    corpus = write_corpus(tmp_path / "c", 240, 6)
    with pytest.raises(RuntimeError, match="crash"):
        run_job("count", CountTask(tmp_path, fail_on="part-03.jsonl"), str(corpus))
    first = processed(tmp_path)
    assert first == ["part-00.jsonl", "part-01.parquet", "part-02.txt"]
    summary = run_job("count", CountTask(tmp_path), str(corpus))
    assert processed(tmp_path)[len(first):] == ["part-03.jsonl", "part-04.parquet", "part-05.txt"]
    assert (summary.skipped, summary.processed, summary.rows, summary.status) == (3, 3, 240, "done")
    ids = _ids(summary.job_id)
    assert len(ids) == len(set(ids)) == 240
    again = run_job("count", CountTask(tmp_path), str(corpus))
    assert again.processed == 0 and again.checksum == summary.checksum
    assert list_jobs("count").iloc[0]["rows"] == 240


def test_bad_shards_are_reported_per_shard_and_the_rest_completes(tmp_path, fresh_store):
    corpus = write_corpus(tmp_path / "c", 60, 3)
    add_bad_shards(corpus)
    summary = run_job("count", CountTask(tmp_path), str(corpus))
    failed = {p.split("/")[-1]: e for p, e in summary.failed}
    assert set(failed) == {"bad-bytes.txt", "wrong-schema.jsonl"}
    assert "not UTF-8" in failed["bad-bytes.txt"] and "no 'text'" in failed["wrong-schema.jsonl"]
    assert summary.rows == 60 and summary.status == "done with failed shards"
    status = dict(zip(job_shards(summary.job_id)["path"].str.split("/").str[-1], job_shards(summary.job_id)["status"]))
    assert status["empty.jsonl"] == "empty" and status["part-00.jsonl"] == "done"


def test_an_edited_shard_is_redone_and_a_deleted_file_recomputed(tmp_path, fresh_store):
    corpus = write_corpus(tmp_path / "c", 60, 3)
    first = run_job("count", CountTask(tmp_path), str(corpus))
    (corpus / "part-00.jsonl").write_text('{"id": "new", "text": "an edited shard"}\n')
    second = run_job("count", CountTask(tmp_path), str(corpus))
    assert second.processed == 1 and second.rows == 41 and second.checksum != first.checksum
    next(p for p in (tmp_path / "jobs").rglob("shard-000001-*.parquet")).unlink()
    assert run_job("count", CountTask(tmp_path), str(corpus)).processed == 1
    ids = _ids(second.job_id)
    assert len(ids) == len(set(ids)) == 41 and "new" in {i for _, i in ids}


def test_engine_config_is_validated():
    with pytest.raises(UserError):
        EngineConfig(engine="spark")


KILLED = """
import sys
from backend.corpus.jobs import run_job
from tests.corpus.support import CountTask
run_job("count", CountTask(sys.argv[1], kill_on="part-03.jsonl"), sys.argv[2])
"""


def test_a_job_whose_process_died_reads_stale_and_resumes(tmp_path, fresh_store, monkeypatch):
    """Issue 46 §4 #13: a killed corpus job stayed "running" forever. Its heartbeat stops with its process, so its
    row reads stale once STALE_AFTER_S has passed, and running it again resumes it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from backend.corpus import jobs
    from backend.store.db import release

    corpus = write_corpus(tmp_path / "c", 120, 6)
    release()
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path), str(corpus)], cwd=root, timeout=120,
                           env=dict(os.environ, DASH_STORE=str(fresh_store)), capture_output=True, text=True)
    assert child.returncode == 1, child.stderr  # ended in the middle of shard 4, as a kill would
    assert list_jobs("count").iloc[0]["status"] == jobs.RUNNING  # its heartbeat is still fresh
    monkeypatch.setattr(jobs, "STALE_AFTER_S", 0.5)
    wait_until(lambda: list_jobs("count").iloc[0]["status"] == jobs.STALE, 60, "the dead job's row to read stale")
    summary = run_job("count", CountTask(tmp_path), str(corpus))
    assert (summary.skipped, summary.processed, summary.status) == (3, 3, "done")
    assert list_jobs("count").iloc[0]["status"] == "done"


def test_a_live_job_keeps_its_heartbeat(tmp_path, fresh_store, monkeypatch):
    """The heartbeat keeps a long job "running" past STALE_AFTER_S while its process lives: its row is touched
    later than STALE_AFTER_S after it was written, and still reads running."""
    import threading

    from backend.corpus import jobs

    monkeypatch.setattr(jobs, "HEARTBEAT_S", 0.1)
    monkeypatch.setattr(jobs, "STALE_AFTER_S", 0.6)
    corpus = write_corpus(tmp_path / "c", 20, 2)
    gate = threading.Event()

    class Slow(CountTask):
        def run(self, shard):
            gate.wait(120)  # held until the test has seen the row; the bound only ends a hung test
            return super().run(shard)

    worker = threading.Thread(target=run_job, args=("count", Slow(tmp_path), str(corpus)))
    worker.start()

    def touched_past_the_stale_window():
        rows = list_jobs("count")
        if len(rows) and (rows.iloc[0]["updated"] - rows.iloc[0]["created"]).total_seconds() > jobs.STALE_AFTER_S:
            return rows.iloc[0]["status"]

    try:
        seen = wait_until(touched_past_the_stale_window, 60, "a heartbeat later than STALE_AFTER_S")
    finally:
        gate.set()
        worker.join()
    assert seen == jobs.RUNNING


def test_a_job_hands_its_id_to_a_watcher_as_each_shard_ends(tmp_path, fresh_store):
    from tests.support.partials import PartialsSeen

    seen = PartialsSeen()
    summary = run_job("count", CountTask(tmp_path), str(write_corpus(tmp_path / "c", 60, 3)), progress=seen)
    assert seen.done() == [1, 2, 3] and {(p.value, p.total, p.unit) for p in seen.partials} == {
        (summary.job_id, 3, "shards")}
