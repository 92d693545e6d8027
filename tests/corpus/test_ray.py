"""The Ray engine (one local Ray with 2 CPUs for the module): the same NAG scores, top-k and scan rows as the
local path, a worker killed mid-run retried with no duplicated or missing rows, bad shards reported per shard."""
import numpy as np
import pandas as pd
import pytest

from backend.corpus.documents import iter_documents, write_documents
from backend.corpus.engine import EngineConfig
from backend.corpus.jobs import iter_tables, run_job
from backend.corpus.shards import list_shards
from backend.models import load
from backend.nag import RankConfig, TargetSet, rank, samples
from backend.nag.corpus_job import feature_job, rank_job
from tests.corpus.support import CountTask, add_bad_shards, processed, write_corpus

RAY = EngineConfig(engine="ray", workers=2)
# where several actors prove nothing more (the engine's sharding and merging over two actors are checked by the
# sharded-corpus test): one actor, as each costs about 6 CPU-seconds of start-up (torch, transformers and the
# backend imported in a fresh process), and a killed actor is restarted and retried as one of two would be. On one
# torch thread, as each of `make test`'s workers gets (tests/conftest.py): by default a lone actor takes both of the
# local Ray's CPUs, and two threads spinning beside the other test worker's ran several times slower.
ONE_ACTOR = EngineConfig(engine="ray", workers=1, cpus_per_worker=1)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray = pytest.importorskip("ray")
    from backend.corpus.ray_engine import ensure_ray

    ensure_ray(RAY, num_cpus=2)
    yield
    ray.shutdown()


def test_nag_features_of_a_sharded_corpus_on_ray_rank_and_store_as_the_local_path(tmp_path, fresh_store):
    """One Ray job (each costs seconds of actor start-up) over a corpus of JSONL, Parquet and TXT shards on two
    actors: ranked from its stored features it equals `rank` over the same documents in one file, a new target re-ranks
    them with no shard run again, and the local engine writes the same rows into the same job."""
    handle = load("tiny-llama")
    corpus = write_corpus(tmp_path / "c", 240, 4)
    pool = tmp_path / "pool.jsonl"  # the corpus's documents, as its shards are read, in one file
    pool.write_bytes(write_documents([d for shard in list_shards(corpus) for d in iter_documents(shard.path)],
                                     "jsonl"))
    targets = [TargetSet("science", tuple(samples.sample_targets("science")[:3]))]
    config = RankConfig(top_k=8, max_length=48, budget=0.3)
    # two slices per shard (60 documents each), as the page's default slices a larger shard
    on_ray = feature_job(handle, str(corpus), config, RAY, batch_size=32)
    assert on_ray.processed == 4 and on_ray.rows == 240
    local = rank(handle, pool, targets, config).value
    ranked = rank_job(handle, on_ray.job_id, targets, config).value
    assert ranked.ids == local.ids
    assert np.array_equal(ranked.similarity, local.similarity)
    assert np.array_equal(ranked.order, local.order) and np.array_equal(ranked.selected_by, local.selected_by)
    assert local.to_frame().head(20).equals(ranked.to_frame().head(20))
    # a new target re-ranks the stored features: no shard runs again
    other = [TargetSet("code", tuple(samples.sample_targets("code")[:3]))]
    assert feature_job(handle, str(corpus), config, RAY).processed == 0
    assert np.array_equal(rank_job(handle, on_ray.job_id, other, config).value.similarity,
                          rank(handle, pool, other, config).value.similarity)
    tables = [t for t in iter_tables(on_ray.job_id)]
    import shutil

    shutil.rmtree(on_ray.out_dir)  # the local run recomputes every shard into the same job
    local_job = feature_job(handle, str(corpus), config, EngineConfig(), batch_size=32)
    assert local_job.processed == 4 and local_job.checksum == on_ray.checksum
    assert all(a.equals(b) for a, b in zip(tables, iter_tables(local_job.job_id), strict=True))


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
    corpus = write_corpus(tmp_path / "c", 16, 2)  # two shards; each document is a sentence-embedder forward
    local = scan(str(corpus), ScanConfig(), EngineConfig(), str(tmp_path / "local.parquet"))
    import shutil

    shutil.rmtree(local.out_dir)
    on_ray = scan(str(corpus), ScanConfig(), ONE_ACTOR, str(tmp_path / "ray.parquet"))
    a, b = pd.read_parquet(tmp_path / "local.parquet"), pd.read_parquet(tmp_path / "ray.parquet")
    assert len(a) == 16 and a.equals(b) and on_ray.checksum == local.checksum
    assert set(a["verdict"]) <= {"not watermarked", "too short to decide"}
