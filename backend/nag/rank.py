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
from backend.nag.scorers import SCORERS, ScoredSoFar, SliceScores
from backend.nag.select import select
from backend.nag.targets import TargetSet
from backend.params import param
from backend.progress import Partial, Progress, SubProgress, report_partial, silent, unshown, wants_partials
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


@dataclass
class _ScoredPool:
    """What the pool's slices scored so far hold, per document in file order (no whole texts)."""

    ids: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    previews: list[str] = field(default_factory=list)
    quality: list[float] = field(default_factory=list)
    sims: list[np.ndarray] = field(default_factory=list)
    tokens: list[np.ndarray] = field(default_factory=list)
    truncated: int = 0
    hits: int = 0

    def add(self, docs: list[Document], result: SliceScores) -> None:
        self.ids += [d.id for d in docs]
        self.domains += [d.domain or "" for d in docs]
        self.previews += [preview(d) for d in docs]
        self.quality += [np.nan if d.quality is None else d.quality for d in docs]
        self.sims.append(result.sim)
        self.tokens.append(result.n_tokens)
        self.truncated += result.truncated
        self.hits += result.cache_hits

    def plus(self, docs: list[Document], result: SliceScores) -> _ScoredPool:
        more = _ScoredPool(list(self.ids), list(self.domains), list(self.previews), list(self.quality),
                           list(self.sims), list(self.tokens), self.truncated, self.hits)
        more.add(docs, result)
        return more

    def ranking(self, handle: ModelHandle, config: RankConfig, target_sets: list[TargetSet], notices: list[str],
                progress: Progress = silent) -> Ranking:
        return assemble(handle.display_name, config, target_sets, self.ids, self.domains, self.previews,
                        self.quality, np.concatenate(self.sims, axis=1), np.concatenate(self.tokens), self.truncated,
                        self.hits, notices, progress, read_tokens=effective_max_length(handle, config.extract))


def _compute(handle: ModelHandle, pool: Source, name: str | None, target_sets: list[TargetSet],
             config: RankConfig, progress: Progress) -> Ranking:
    """The whole pool scored slice by slice, then ranked; the ranking of the documents scored so far is handed to
    the progress's watcher as the scorer reports them (the page's table grows batch by batch)."""
    total = count_documents(pool, name)
    if total == 0:
        raise UserError("The candidate pool has no non-empty document.")
    scorer = SCORERS.get(config.method)
    state = scorer.prepare(handle, target_sets, config.extract, SubProgress(progress, 0.0, 0.1, convert=unshown))
    reader_notices = Notices()
    scored = _ScoredPool()

    def ranked(so_far: _ScoredPool) -> Partial | None:
        """The documents scored so far, ranked (with a budget of their tokens: the selection is not final)."""
        try:
            ranking = so_far.ranking(handle, config, target_sets, [])
        except UserError:  # e.g. no quality field in the documents so far: nothing to show yet
            return None
        return Partial(ranking, len(ranking.ids), total, "documents")

    def with_the_slices_before(part: list[Document], partial: Partial) -> Partial | None:
        if not isinstance(partial.value, ScoredSoFar):
            return None
        return ranked(scored.plus([part[i] for i in partial.value.positions], partial.value.scores))

    for part in chunks(iter_documents(pool, name=name, notices=reader_notices), SLICE_DOCS):
        done = len(scored.ids)
        share = SubProgress(progress, 0.1 + 0.85 * done / total, 0.1 + 0.85 * (done + len(part)) / total,
                            convert=lambda partial, part=part: with_the_slices_before(part, partial))
        scored.add(part, scorer.run(state, handle, part, config.extract, config.seed, share))
        so_far = ranked(scored) if len(scored.ids) < total and wants_partials(progress) else None
        if so_far is not None:
            report_partial(progress, so_far)
    notices = list(getattr(state, "notices", ())) + reader_notices.messages("pool")
    return scored.ranking(handle, config, target_sets, notices, progress)


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
