"""Rank a candidate pool against target sets and select a token budget (the page's main action).

The pool is streamed in slices of `SLICE_DOCS` documents: only ids, scores, token counts, domains and
short previews are kept, never whole texts. The result is cached under (model, pool bytes, target
texts, config); document features underneath are cached per document, so a new target re-uses them.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from backend.corpus.documents import Document, Notices, Source, chunks, iter_documents, source_digest
from backend.errors import UserError
from backend.models.loading import ModelHandle
import backend.nag.embedding as embedding
import backend.nag.profile as profile
import backend.nag.scorers as scorers
import backend.nag.select as selection
import backend.nag.targets as targets
from backend.nag.extract import ReadsFeatures, effective_max_length
from backend.nag.featurecache import FEATURE_READS
from backend.nag.scorers import SCORERS
from backend.nag.select import select
from backend.nag.targets import TargetSet
from backend.params import param
from backend.progress import Progress, scaled, silent
from backend.nag.subject import OnModel
from backend.store import Computed
from backend.verbs import Verb, register

SLICE_DOCS = 256
PREVIEW_CHARS = 160


@dataclass(frozen=True)
class RankConfig(ReadsFeatures):
    """A ranking: the scorer, the NAG features it reads (as ExtractConfig) and the budgeted selection."""

    method: str = param("nag", "ranking method; " + SCORERS.help_text(), choices=SCORERS)
    budget: float = param(0.2, "fraction of the pool's tokens to select", gt=0, le=1)
    quality_weight: float = param(0.0, "score = (1 − w) · similarity + w · quality (needs a 'quality' field)",
                                  ge=0, le=1)
    seed: int = param(0, "seed of the random baseline")


@dataclass(frozen=True)
class RankKey:
    config: RankConfig
    pool: str
    targets: tuple[tuple[str, str], ...]  # (name, digest)


@dataclass(frozen=True)
class Ranking:
    """Per pool document (N) in file order: ids, domains ("" if unlabelled), previews, n_tokens `[N]`,
    similarity `[M, N]` (one row per target), distance `[M, N]` (1 - score), selected_by `[N]` (target
    index or -1), order `[N]` (ranking order). Budget and used tokens are in model tokens."""

    model: str
    config: RankConfig
    target_names: tuple[str, ...]
    ids: tuple[str, ...]
    domains: tuple[str, ...]
    previews: tuple[str, ...]
    n_tokens: np.ndarray
    similarity: np.ndarray
    distance: np.ndarray
    selected_by: np.ndarray
    order: np.ndarray
    budget_tokens: int
    used_tokens: tuple[int, ...]
    cache_hits: int
    notices: tuple[str, ...] = field(default=())

    @property
    def labelled(self) -> bool:
        return any(self.domains)

    def to_frame(self) -> pd.DataFrame:
        """One row per document in ranking order."""
        order = self.order
        best = self.distance.argmin(axis=0)
        target = np.where(self.selected_by >= 0, self.selected_by, best)
        cols = np.arange(len(self.ids))
        return pd.DataFrame({
            "rank": np.arange(1, len(order) + 1),
            "id": np.asarray(self.ids, dtype=object)[order],
            "domain": np.asarray(self.domains, dtype=object)[order],
            "target": np.asarray(self.target_names, dtype=object)[target[order]],
            "similarity": self.similarity[target, cols][order],
            "distance": self.distance[target, cols][order],
            "tokens": self.n_tokens[order],
            "selected": self.selected_by[order] >= 0,
            "preview": np.asarray(self.previews, dtype=object)[order],
        })

    def selected_ids(self) -> list[str]:
        return [self.ids[i] for i in self.order if self.selected_by[i] >= 0]


def count_documents(pool: Source, name: str | None = None) -> int:
    return sum(1 for _ in iter_documents(pool, name=name))


def _compute(handle: ModelHandle, pool: Source, name: str | None, target_sets: list[TargetSet],
             config: RankConfig, progress: Progress) -> Ranking:
    total = count_documents(pool, name)
    if total == 0:
        raise UserError("The candidate pool has no non-empty document.")
    scorer = SCORERS.get(config.method)
    state = scorer.prepare(handle, target_sets, config.extract, scaled(progress, 0.0, 0.1))
    reader_notices = Notices()
    ids, domains, previews, quality, sims, tokens = [], [], [], [], [], []
    truncated = hits = done = 0
    for part in chunks(iter_documents(pool, name=name, notices=reader_notices), SLICE_DOCS):
        result = scorer.run(state, handle, part, config.extract, config.seed,
                       scaled(progress, 0.1 + 0.85 * done / total, 0.1 + 0.85 * (done + len(part)) / total))
        ids += [d.id for d in part]
        domains += [d.domain or "" for d in part]
        previews += [preview(d) for d in part]
        quality += [np.nan if d.quality is None else d.quality for d in part]
        sims.append(result.sim)
        tokens.append(result.n_tokens)
        truncated += result.truncated
        hits += result.cache_hits
        done += len(part)
    notices = list(getattr(state, "notices", ())) + reader_notices.messages("pool")
    return assemble(handle.display_name, config, target_sets, ids, domains, previews, quality,
                    np.concatenate(sims, axis=1), np.concatenate(tokens), truncated, hits, notices, progress,
                    read_tokens=effective_max_length(handle, config.extract))


def assemble(model: str, config: RankConfig, target_sets: list[TargetSet], ids: list[str], domains: list[str],
             previews: list[str], quality: list[float], similarity: np.ndarray, n_tokens: np.ndarray, truncated: int,
             hits: int, notices: list[str], progress: Progress = silent, read_tokens: int | None = None) -> Ranking:
    """Scores of the whole pool -> the budgeted Ranking (shared by `rank` and the corpus-job re-ranking)."""
    total = len(ids)
    if truncated:
        notices.append(f"{truncated} pool document(s) are longer than {read_tokens or config.max_length} tokens "
                       "(max_length within the model's context): their features "
                       "use the first tokens only (the budget counts all their tokens).")
    scores = similarity
    if config.quality_weight > 0:
        q = np.asarray(quality, dtype=np.float64)
        if np.isnan(q).all():
            raise UserError("quality_weight > 0 needs a 'quality' field in the pool documents.")
        if np.isnan(q).any():
            notices.append(f"{int(np.isnan(q).sum())} pool document(s) have no quality score (counted as 0).")
        scores = (1 - config.quality_weight) * similarity + config.quality_weight * np.nan_to_num(q)[None, :]
    distance = 1.0 - scores
    chosen = select(distance, ids, n_tokens, config.budget)
    if not (chosen.selected_by >= 0).any():
        notices.append("No document fits the token budget; raise the budget fraction.")
    progress(1.0, f"ranked {total} documents")
    return Ranking(model=model, config=config, target_names=tuple(t.name for t in target_sets), ids=tuple(ids),
                   domains=tuple(domains), previews=tuple(previews), n_tokens=n_tokens, similarity=similarity,
                   distance=distance, selected_by=chosen.selected_by, order=chosen.order,
                   budget_tokens=chosen.budget_tokens, used_tokens=chosen.used_tokens, cache_hits=hits,
                   notices=tuple(notices))


def preview(doc: Document) -> str:
    text = " ".join(doc.text.split())
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"


@dataclass(frozen=True, eq=False)
class PoolAndTargets(OnModel):
    pool: Source  # a path or a binary file, streamed
    pool_name: str | None
    target_sets: tuple[TargetSet, ...]


def _rank_key(inputs: PoolAndTargets, config: RankConfig) -> RankKey:
    return RankKey(config, source_digest(inputs.pool), tuple((t.name, t.digest) for t in inputs.target_sets))


def _rank_on(inputs: PoolAndTargets, config: RankConfig, progress: Progress) -> Ranking:
    return _compute(inputs.handle, inputs.pool, inputs.pool_name, list(inputs.target_sets), config, progress)


# The code a ranking depends on: this module, the scorers with what they score from (profiles, embeddings,
# document features) and the budgeted selection (the corpus-job re-ranking reads these too).
RANK_READS = (sys.modules[__name__], scorers, targets, profile, selection, embedding, *FEATURE_READS)

rank_verb = register(Verb("nag", "rank", RankConfig, _rank_on, "a candidate pool ranked against target sets, with "
                          "the budgeted selection", reads=RANK_READS, key=_rank_key, ref=OnModel.model))


def rank(handle: ModelHandle, pool: Source, target_sets: list[TargetSet], config: RankConfig = RankConfig(),
         pool_name: str | None = None, progress: Progress = silent) -> Computed[Ranking]:
    """Rank `pool` (a path or a binary file) against `target_sets`; cached."""
    return rank_verb(PoolAndTargets(handle, pool, pool_name, tuple(target_sets)), config, progress)


def export_selected(pool: Source, ranking: Ranking, fmt: str, pool_name: str | None = None) -> bytes:
    """The selected documents (full texts, re-read from the pool), in selection order, as JSONL or Parquet."""
    from backend.corpus.documents import write_documents

    position = {doc_id: i for i, doc_id in enumerate(ranking.selected_ids())}
    docs = [d for d in iter_documents(pool, name=pool_name) if d.id in position]
    return write_documents(sorted(docs, key=lambda d: position[d.id]), fmt)
