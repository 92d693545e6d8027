"""NAG ranking over a sharded corpus: per-document features computed once as a corpus job (local or Ray,
backend.corpus), then any number of re-rankings against new targets read the stored Parquet shards only.

Per document the job stores id, domain, quality, a preview, token counts and the method's features: `top`
(`[L * stored_k]` int32 neuron indices, flattened `[L, stored_k]`) for "nag", `embedding` (`[384]` float32) for
"embedding", nothing more for "random". Scores from a job equal `rank`'s on the same pool (tests/nag).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa

from backend.corpus.documents import Notices, chunks, iter_documents
from backend.corpus.engine import EngineConfig
from backend.corpus.jobs import JobSummary, iter_tables, job, run_job
from backend.corpus.shards import Shard
from backend.errors import UserError
from backend.models.loading import ModelHandle
import backend.nag.embedding as embedding
from backend.nag.extract import ExtractConfig, effective_max_length, extract_batched, tokenize
from backend.nag.featurecache import FEATURE_READS
from backend.nag.profile import similarity
from backend.nag.rank import RANK_READS, SLICE_DOCS, RankConfig, Ranking, assemble, preview
from backend.nag.scorers import SCORERS, random_score
from backend.nag.subject import OnModel
from backend.nag.targets import TargetSet
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.verbs import Verb, register, source_digest

KIND = "nag-features"


@dataclass(frozen=True)
class NagFeatureTask:
    """What a NAG corpus job computes; `batch_size`: documents per model slice (not part of the key)."""

    model_id: str
    fingerprint: str
    method: str
    extract: ExtractConfig
    n_layers: int
    batch_size: int = SLICE_DOCS

    def key(self) -> dict:
        return {"model": self.fingerprint, "method": self.method, "impact": self.extract.impact,
                "max_length": self.extract.max_length, "stored_k": self.extract.stored_k,
                "n_layers": self.n_layers, "code": features_code()}

    def open(self) -> "NagFeatureWorker":
        from backend.models import load

        return NagFeatureWorker(self, load(self.model_id))


class NagFeatureWorker:
    def __init__(self, task: NagFeatureTask, handle: ModelHandle) -> None:
        self.task, self.handle, self.fingerprint = task, handle, handle.fingerprint
        if task.method == "embedding":
            from backend.models.sentence_embedder import get_embedder

            get_embedder()  # loaded once per worker, before the first shard

    def run(self, shard: Shard) -> tuple[pa.Table, list[str]]:
        notices = Notices()
        tables = [self._slice(part) for part in chunks(iter_documents(shard.path, notices=notices),
                                                       self.task.batch_size)]
        return (pa.concat_tables(tables) if tables else pa.table({"id": pa.array([], pa.string())}),
                notices.messages("shard"))

    def _slice(self, docs) -> pa.Table:
        task, texts = self.task, [d.text for d in docs]
        columns = {"id": [d.id for d in docs], "domain": [d.domain or "" for d in docs],
                   "quality": pa.array([d.quality for d in docs], pa.float64()),
                   "preview": [preview(d) for d in docs]}
        if task.method == "nag":
            feats = extract_batched(self.handle, texts, task.extract)
            columns["n_tokens"] = pa.array([f.n_tokens for f in feats], pa.int64())
            columns["used_tokens"] = pa.array([f.used_tokens for f in feats], pa.int64())
            columns["top"] = pa.array([f.top.reshape(-1) for f in feats], pa.list_(pa.int32()))
            return pa.table(columns)
        encoded = tokenize(self.handle, texts, effective_max_length(self.handle, task.extract))
        columns["n_tokens"] = pa.array([n for _, n in encoded], pa.int64())
        columns["used_tokens"] = pa.array([min(n, task.extract.max_length) for _, n in encoded], pa.int64())
        if task.method == "embedding":
            from backend.nag.embedding import embed

            columns["embedding"] = pa.array(list(embed(texts)), pa.list_(pa.float32()))
        return pa.table(columns)


@cache
def features_code() -> str:
    """The job's code version, derived like a verb's: the worker and the feature code it runs (a change to either
    starts a new job instead of resuming one whose shards the old code wrote)."""
    return source_digest((NagFeatureWorker, embedding, *FEATURE_READS))


def feature_job(handle: ModelHandle, corpus: str, config: RankConfig, engine: EngineConfig = EngineConfig(),
                batch_size: int = SLICE_DOCS, progress: Progress = silent) -> JobSummary:
    """Compute (or resume) the per-document features of `corpus` for `config`'s method."""
    task = NagFeatureTask(handle.id, handle.fingerprint, config.method, config.extract, handle.info.n_layers,
                          batch_size)
    return run_job(KIND, task, corpus, engine, progress)


@dataclass(frozen=True)
class JobRankKey:
    job: str
    checksum: str
    config: RankConfig
    targets: tuple[tuple[str, str], ...]


@dataclass(frozen=True, eq=False)
class JobAndTargets(OnModel):
    record: dict  # the finished job's row (backend.corpus.jobs.job)
    target_sets: tuple[TargetSet, ...]


def _job_rank_key(inputs: JobAndTargets, config: RankConfig) -> JobRankKey:
    return JobRankKey(inputs.record["job_id"], inputs.record["checksum"], config,
                      tuple((t.name, t.digest) for t in inputs.target_sets))


def _rank_job_on(inputs: JobAndTargets, config: RankConfig, progress: Progress) -> Ranking:
    return _rank_job(inputs.handle, inputs.record, list(inputs.target_sets), config, progress)


# A re-ranking reads the job's stored features with the ranking's own code.
rank_job_verb = register(Verb("nag", "rank-job", RankConfig, _rank_job_on, "a finished corpus job's documents "
                              "ranked against target sets (its stored features only)",
                              reads=(sys.modules[__name__], *RANK_READS), key=_job_rank_key, ref=OnModel.model))


def rank_job(handle: ModelHandle, job_id: str, target_sets: list[TargetSet], config: RankConfig,
             progress: Progress = silent) -> Computed[Ranking]:
    """Rank a finished feature job against `target_sets` (cached per job checksum, config and targets)."""
    return rank_job_verb(JobAndTargets(handle, job(job_id), tuple(target_sets)), config, progress)


def _check(handle: ModelHandle, record: dict, config: RankConfig) -> dict:
    import json

    stored = json.loads(record["config"])
    if record["kind"] != KIND:
        raise UserError(f"Job {record['job_id']} is a {record['kind']} job, not NAG features.")
    if record["fingerprint"] != handle.fingerprint:
        raise UserError(f"Job {record['job_id']} was computed with another model; load that model or run a new job.")
    wanted = {"method": config.method, "impact": config.impact, "max_length": config.max_length}
    differ = [k for k, v in wanted.items() if stored[k] != v]
    if differ:
        raise UserError(f"Job {record['job_id']} stored features for other settings ({', '.join(differ)}: "
                        f"{', '.join(str(stored[k]) for k in differ)}); run a job with these settings.")
    if config.top_k > stored["stored_k"]:
        raise UserError(f"top_k {config.top_k} exceeds the {stored['stored_k']} neurons stored per layer by the job.")
    return stored


def _rank_job(handle: ModelHandle, record: dict, target_sets: list[TargetSet], config: RankConfig,
              progress: Progress) -> Ranking:
    stored = _check(handle, record, config)
    if not record["rows"]:
        raise UserError("The corpus job has no document to rank.")
    state = SCORERS.get(config.method).prepare(handle, target_sets, config.extract, scaled(progress, 0.0, 0.2))
    ids, domains, previews, quality, sims, tokens = [], [], [], [], [], []
    truncated = 0
    for table in iter_tables(record["job_id"]):
        n = table.num_rows
        doc_ids = table.column("id").to_pylist()
        if config.method == "nag":
            flat = np.asarray(table.column("top").combine_chunks().flatten(), dtype=np.int32)
            tops = flat.reshape(n, stored["n_layers"], stored["stored_k"])[:, :, :config.top_k]
            sim = np.stack([similarity(tops, weights) for weights in state.weights])
        elif config.method == "embedding":
            vectors = np.asarray(table.column("embedding").combine_chunks().flatten(), dtype=np.float32)
            sim = (state @ vectors.reshape(n, -1).T).astype(np.float64)
        else:
            sim = np.array([[random_score(config.seed, d, m) for d in doc_ids] for m in range(state)])
        n_tok = table.column("n_tokens").to_numpy()
        truncated += int((n_tok > table.column("used_tokens").to_numpy()).sum())
        ids += doc_ids
        domains += table.column("domain").to_pylist()
        previews += table.column("preview").to_pylist()
        quality += [np.nan if q is None else q for q in table.column("quality").to_pylist()]
        sims.append(sim)
        tokens.append(n_tok.astype(np.int64))
    notices = list(getattr(state, "notices", ()))
    return assemble(handle.display_name, config, target_sets, ids, domains, previews, quality,
                    np.concatenate(sims, axis=1), np.concatenate(tokens), truncated, 0, notices,
                    scaled(progress, 0.2, 1.0), read_tokens=effective_max_length(handle, config.extract))
