"""The Ray engine (one local Ray with 2 CPUs for the module): the same NAG scores, top-k and scan rows as the
local path, a worker killed mid-run retried with no duplicated or missing rows, bad shards reported per shard."""
import numpy as np
import pandas as pd
import pytest

from backend.corpus.engine import EngineConfig
from backend.corpus.jobs import iter_tables, run_job
from backend.models import load
from backend.nag import RankConfig, TargetSet, rank, samples
from backend.nag.corpus_job import feature_job, rank_job
from tests.corpus.support import CountTask, add_bad_shards, processed, write_corpus, write_single

RAY = EngineConfig(engine="ray", workers=2)
# where several actors prove nothing more (the engine's sharding and merging over two actors are checked by the
# sharded-corpus test): one actor, as each costs about 6 CPU-seconds of start-up (torch, transformers and the
# backend imported in a fresh process), and a killed actor is restarted and retried as one of two would be
ONE_ACTOR = EngineConfig(engine="ray", workers=1)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray = pytest.importorskip("ray")
    from backend.corpus.ray_engine import ensure_ray

    ensure_ray(RAY, num_cpus=2)
    yield
    ray.shutdown()


def test_nag_rank_on_ray_equals_the_local_path(tmp_path, fresh_store):
    handle = load("tiny-llama")
    pool = write_single(tmp_path / "pool.jsonl", 200)
    targets = [TargetSet("science", tuple(samples.sample_targets("science")[:3]))]
    config = RankConfig(top_k=8, max_length=48, budget=0.3)
    local = rank(handle, pool, targets, config).value
    job = feature_job(handle, str(pool), config, ONE_ACTOR, batch_size=64)
    ranked = rank_job(handle, job.job_id, targets, config).value
    assert ranked.ids == local.ids
    assert np.array_equal(ranked.similarity, local.similarity)
    assert np.array_equal(ranked.order, local.order) and np.array_equal(ranked.selected_by, local.selected_by)
    assert local.to_frame().head(20).equals(ranked.to_frame().head(20))
    # a new target re-ranks the stored features: no shard runs again
    other = [TargetSet("code", tuple(samples.sample_targets("code")[:3]))]
    assert feature_job(handle, str(pool), config, ONE_ACTOR).processed == 0
    assert np.array_equal(rank_job(handle, job.job_id, other, config).value.similarity,
                          rank(handle, pool, other, config).value.similarity)


def test_sharded_corpus_gives_the_same_rows_on_both_engines(tmp_path, fresh_store):
    handle = load("tiny-llama")
    corpus = write_corpus(tmp_path / "c", 240, 4)
    config = RankConfig(top_k=8, max_length=48)
    on_ray = feature_job(handle, str(corpus), config, RAY)
    tables = [t for t in iter_tables(on_ray.job_id)]
    import shutil

    shutil.rmtree(on_ray.out_dir)  # the local run recomputes every shard into the same job
    local = feature_job(handle, str(corpus), config, EngineConfig())
    assert local.processed == 4 and local.checksum == on_ray.checksum and on_ray.rows == 240
    assert all(a.equals(b) for a, b in zip(tables, iter_tables(local.job_id)))


def test_a_killed_worker_is_retried_and_bad_shards_are_reported_in_one_job(tmp_path, fresh_store):
    """One job meets both faults (one Ray job: each costs seconds of worker start-up): a worker killed mid-shard is
    retried with no duplicated or missing rows, and the bad shards are reported per shard while the job completes."""
    corpus = write_corpus(tmp_path / "c", 240, 6)
    add_bad_shards(corpus)
    summary = run_job("count", CountTask(tmp_path, kill_on="part-02.txt"), str(corpus), ONE_ACTOR)
    assert (tmp_path / "once-part-02.txt").exists()  # the worker did die there
    assert summary.status == "done with failed shards" and summary.rows == 240 and summary.processed == 9
    failed = sorted(p.split("/")[-1] for p, _ in summary.failed)
    assert failed == ["bad-bytes.txt", "wrong-schema.jsonl"]
    rows = pd.concat([t.to_pandas() for t in iter_tables(summary.job_id)])
    assert len(rows) == 240
    assert sorted(processed(tmp_path)) == sorted(p.name for p in corpus.iterdir() if p.name not in failed)


def test_watermark_scan_on_ray_equals_local(tmp_path, fresh_store):
    from backend.watermark import identities
    from backend.watermark.scan import ScanConfig, scan

    identities.add_model("scan-model")
    identities.bulk_add_users(1, 3)
    corpus = write_corpus(tmp_path / "c", 40, 2)
    local = scan(str(corpus), ScanConfig(), EngineConfig(), str(tmp_path / "local.parquet"))
    import shutil

    shutil.rmtree(local.out_dir)
    on_ray = scan(str(corpus), ScanConfig(), ONE_ACTOR, str(tmp_path / "ray.parquet"))
    a, b = pd.read_parquet(tmp_path / "local.parquet"), pd.read_parquet(tmp_path / "ray.parquet")
    assert len(a) == 40 and a.equals(b) and on_ray.checksum == local.checksum
    assert set(a["verdict"]) <= {"not watermarked", "too short to decide"}
