"""Watermark scan of a corpus: every document through the methods' detection interface (`methods.detect`),
as a corpus job (local or Ray, backend.corpus), one row per document:

id, verdict, flagged, score, z, p_value (the method's), p_model / p_user and their corrections as the verdict
takes them (backend.watermark.retrieval: the model level over the M registered models, the user level over the
users of that model), p_total (the identity's raw total evidence, the ROC statistic: it decides nothing, so it
has no corrected value), the attributed model / user, sentences and sentences used.

Workers read the identity registry once, from a snapshot taken by the driver (detection would otherwise
open the shared store for every document); a registry changed after the scan started is not seen by it.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

import pyarrow as pa

from backend.corpus.engine import EngineConfig
from backend.corpus.jobs import JobSummary, export_job, run_job
from backend.corpus.shards import Shard
from backend.params import Config, param
from backend.progress import Progress, silent
from backend.verbs import source_digest
import backend.watermark.identities as identities
from backend.watermark.demo import tagged
from backend.watermark.methods import METHODS, SEARCHES, DetectRequest, detect, watermark_names
from backend.watermark.verb_reads import DETECTION

KIND = "watermark-scan"
BATCH = 64


@cache
def code_digest() -> str:
    """The code a scan's rows come from, for the job key. A scan is a corpus job, not a store artifact (its shards
    are files under the job's folder), so it is no verb; but a job resumed by code that writes other rows would mix
    rows of two versions, so its key carries this digest of this module (the row, the schema, the registry snapshot)
    and of every method's detection, derived as a verb's code version is (backend.verbs.source_digest)."""
    return source_digest((sys.modules[__name__], *DETECTION))


@dataclass(frozen=True)
class ScanConfig(Config):
    method: str = param("ipmark", "watermark method to test for", choices=watermark_names)
    search: str = param("hierarchical", "identity search: hierarchical or flat", choices=SEARCHES)
    model_address: int = param(0, "model identity whose key to test (kgw needs it; 0: search)", ge=0)
    model_id: str = param("", "language model whose tokenizer detection needs (kgw; empty: the default model)")


@dataclass(frozen=True)
class RegistrySnapshot:
    names: dict[int, str]
    users: dict[int, list[int]]
    labels: dict[tuple[int, int], str] = field(default_factory=dict)

    @classmethod
    def take(cls) -> RegistrySnapshot:
        names = {m.address: m.name for m in identities.list_models()}
        users = {m: [] for m in names} | identities.all_users_by_model()
        frames = [identities.users_frame(m, limit=identities.MAX_BULK * 10) for m in users if users[m]]
        labels = {}
        for frame in frames:
            for address, label in zip(frame["address"], frame["label"]):
                m, u = address.split(".")
                labels[(int(m), int(u))] = label
        return cls(names, users, labels)

    def digest(self) -> str:
        text = json.dumps([sorted(self.names.items()), sorted(self.users.items())])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextmanager
def _snapshot_registry(snap: RegistrySnapshot) -> Iterator[None]:
    """Serve the registry reads detection makes from the snapshot while a shard is scanned."""
    def get_user(m, u):
        return identities.UserIdentity(int(m), int(u), snap.labels.get((int(m), int(u)), ""))

    replaced = {"list_models": lambda: [identities.ModelIdentity(a, n) for a, n in sorted(snap.names.items())],
                "all_users_by_model": lambda: {m: list(u) for m, u in snap.users.items() if u},
                "get_user": get_user}
    saved = {name: getattr(identities, name) for name in replaced}
    for name, fn in replaced.items():
        setattr(identities, name, fn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(identities, name, fn)


@dataclass(frozen=True)
class ScanTask:
    config: ScanConfig
    snapshot: RegistrySnapshot
    fingerprint: str  # the sentence embedder's or the language model's: what the verdicts depend on
    batch_size: int = BATCH

    def key(self) -> dict:
        return {"config": self.config.__dict__, "registry": self.snapshot.digest(), "model": self.fingerprint,
                "code": code_digest()}

    def open(self) -> ScanWorker:
        return ScanWorker(self)


def _model_handle(config: ScanConfig):
    from backend.models import default_model_id, load

    return load(config.model_id or default_model_id())


def _fingerprint(config: ScanConfig) -> str:
    if METHODS.get(config.method).needs_model_to_detect:
        return _model_handle(config).fingerprint
    from backend.models.sentence_embedder import get_embedder

    return get_embedder().fingerprint


class ScanWorker:
    def __init__(self, task: ScanTask) -> None:
        self.task = task
        method = METHODS.get(task.config.method)
        self.handle = _model_handle(task.config) if method.needs_model_to_detect else None
        self.fingerprint = _fingerprint(task.config)

    def run(self, shard: Shard) -> tuple[pa.Table, list[str]]:
        from backend.corpus.documents import Notices, iter_documents

        notices, rows = Notices(), []
        request = DetectRequest(method=self.task.config.method, search=self.task.config.search,
                                model_address=self.task.config.model_address, handle=self.handle)
        with _snapshot_registry(self.task.snapshot):
            for doc in iter_documents(shard.path, notices=notices):
                rows.append(self._row(doc.id, detect(doc.text, request)))
        return pa.Table.from_pylist(rows, schema=SCHEMA), notices.messages("shard")

    def _row(self, doc_id: str, d) -> dict:
        levels = {getattr(s, "level", ""): s for s in d.levels}
        raw = lambda level: getattr(levels.get(level), "p_value", None)  # noqa: E731
        family = lambda level: getattr(levels.get(level), "p_family", None)  # noqa: E731
        report = d.report
        total = getattr(report, "total", None)
        return {"id": doc_id, "verdict": d.verdict, "flagged": d.flagged, "score": float(d.score),
                "z": d.z, "p_value": d.p_value,
                "p_model": raw("model"), "p_model_corrected": family("model"),
                "p_user": raw("user"), "p_user_corrected": family("user"),
                "p_total": getattr(total, "p_value", None), "p_total_corrected": None,
                "p_corrected": getattr(d, "p_corrected", None),  # the method's own family-wise p, where it has one
                "model_address": d.model_address,
                "model_name": tagged(d.model_name, d.model_address or d.guess_model),  # "demo" on every demo row "user_address": d.user_address,
                "user_label": d.user_label, "sentences": getattr(report, "n_sentences", None),
                "sentences_used": getattr(report, "n_usable", None), "evidence": d.evidence}


SCHEMA = pa.schema([("id", pa.string()), ("verdict", pa.string()), ("flagged", pa.bool_()), ("score", pa.float64()),
                    ("z", pa.float64()), ("p_value", pa.float64()), ("p_model", pa.float64()),
                    ("p_model_corrected", pa.float64()), ("p_user", pa.float64()), ("p_user_corrected", pa.float64()),
                    ("p_total", pa.float64()), ("p_total_corrected", pa.float64()), ("p_corrected", pa.float64()), ("model_address", pa.int64()),
                    ("model_name", pa.string()), ("user_address", pa.int64()), ("user_label", pa.string()),
                    ("sentences", pa.int64()), ("sentences_used", pa.int64()), ("evidence", pa.string())])


def scan(corpus: str, config: ScanConfig | None = None, engine: EngineConfig = EngineConfig(),
         out: str | None = None, progress: Progress = silent) -> JobSummary:
    """Scan (or resume scanning) `corpus`; with `out`, also write every row into one Parquet file.
    (No ScanConfig() default at import: its choices are the registered methods, known after load_all.)"""
    config = config or ScanConfig()
    task = ScanTask(config=config, snapshot=RegistrySnapshot.take(), fingerprint=_fingerprint(config))
    start = time.perf_counter()
    summary = run_job(KIND, task, corpus, engine, progress)
    if out:
        export_job(summary.job_id, out)
    progress(1.0, f"scanned {summary.rows} documents in {time.perf_counter() - start:.1f} s")
    return summary
