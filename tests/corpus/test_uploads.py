"""Uploaded shards: one folder per distinct upload set, written whole or not at all, and pruned once old and
no open job can resume from them."""
import os
import time

import pytest

from backend.corpus.engine import EngineConfig
from backend.corpus.jobs import run_job
from backend.corpus.uploads import prune_uploads, save_upload_set, uploads_root
from tests.corpus.support import CountTask

SHARDS = [("a.txt", b"one\ntwo\n"), ("b.txt", b"three\n")]


def _age(folder, days):
    old = time.time() - days * 86400
    os.utime(folder, (old, old))


def test_the_same_upload_set_is_one_folder_and_another_set_another(fresh_store):
    first = save_upload_set(SHARDS)
    assert sorted(p.name for p in first.iterdir()) == ["a.txt", "b.txt"]
    assert save_upload_set(SHARDS) == first
    assert save_upload_set([SHARDS[0], ("b.txt", b"changed\n")]) != first
    assert not list(uploads_root().glob("*.partial"))


def test_old_uploads_are_pruned_unless_an_open_job_needs_them(fresh_store, tmp_path):
    (tmp_path / "log").mkdir()
    finished, stale, fresh = (save_upload_set([(f"{n}.txt", n.encode())]) for n in ("finished", "stale", "fresh"))
    run_job("count", CountTask(tmp_path / "log"), str(finished), EngineConfig())
    crashed = save_upload_set([("crash.txt", b"x\n")])
    with pytest.raises(RuntimeError, match="crash"):
        run_job("count", CountTask(tmp_path / "log", fail_on="crash.txt"), str(crashed), EngineConfig())
    for folder in (finished, stale, crashed):
        _age(folder, 30)
    removed = prune_uploads()
    assert set(removed) == {finished, stale}  # a finished job's rows are in its own shards
    assert crashed.is_dir() and fresh.is_dir()  # the crashed job can still resume; the new one is young
