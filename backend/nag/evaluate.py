"""Precision@k of the ranking methods against domain labels, and the cached deactivation check
(`deactivation_check`; the zeroing itself is `backend.nag.deactivate`)."""
from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, replace

import numpy as np

from backend.corpus.documents import Document, Source
from backend.errors import UserError
from backend.models.loading import ModelHandle
import backend.nag.deactivate as deactivate
import backend.nag.profile as profile
import backend.nag.targets as targets
from backend.nag.deactivate import Deactivation, DeactivationConfig, deactivation
from backend.nag.extract import ExtractConfig
from backend.nag.featurecache import FEATURE_READS
from backend.nag.rank import RankConfig, Ranking, rank
from backend.nag.scorers import SCORERS
from backend.nag.select import precision_at_k
from backend.nag.subject import OnModel
from backend.nag.targets import TargetSet, target_profiles
from backend.progress import Partial, Progress, SubProgress, report_partial, scaled, silent, unshown
from backend.store import Computed
from backend.verbs import Verb, register

DEFAULT_KS = (5, 10, 20, 50, 100)


def relevance(ranking: Ranking, relevant_domains: tuple[str, ...] | None = None) -> np.ndarray:
    """`[N]` bool: the document's domain is one of the targets' (default: target names that are pool domains)."""
    wanted = set(relevant_domains or ranking.target_names) & set(ranking.domains)
    if not ranking.labelled or not wanted:
        raise UserError("Precision@k needs domain labels in the pool that match the target names.")
    return np.array([d in wanted for d in ranking.domains])


def precision_curve(ranking: Ranking, ks: tuple[int, ...] = DEFAULT_KS,
                    relevant_domains: tuple[str, ...] | None = None) -> dict[int, float]:
    return precision_at_k(ranking.order, relevance(ranking, relevant_domains), ks)


@dataclass(frozen=True)
class Comparison:
    """precision `[methods, ks]`: share of target-domain documents among each method's top k."""

    model: str
    targets: tuple[str, ...]
    methods: tuple[str, ...]
    ks: tuple[int, ...]
    precision: np.ndarray
    relevant: int  # documents of the target domain(s) in the pool

    def rows(self) -> list[dict]:
        return [{"method": m, **{f"P@{k}": round(float(p), 4) for k, p in zip(self.ks, row)}}
                for m, row in zip(self.methods, self.precision)]


def compare(handle: ModelHandle, pool: Source, target_sets: list[TargetSet], config: RankConfig = RankConfig(),
            methods: tuple[str, ...] | None = None, ks: tuple[int, ...] = DEFAULT_KS,
            pool_name: str | None = None, progress: Progress = silent) -> Comparison:
    """Rank with each method (default: every registered scorer; each cached on its own), report precision@k."""
    methods = SCORERS.names() if methods is None else tuple(methods)
    rows, relevant = [], 0

    def so_far() -> Comparison:
        return Comparison(model=handle.display_name, targets=tuple(t.name for t in target_sets),
                          methods=tuple(methods[:len(rows)]), ks=tuple(ks), precision=np.asarray(rows),
                          relevant=relevant)

    for i, method in enumerate(methods):
        # a method's partial ranking has no precision yet: the comparison grows method by method
        ranking = rank(handle, pool, target_sets, replace(config, method=method), pool_name,
                       SubProgress(progress, i / len(methods), (i + 1) / len(methods), convert=unshown)).value
        rows.append([precision_curve(ranking, ks)[k] for k in ks])
        relevant = int(relevance(ranking).sum())
        report_partial(progress, Partial(so_far(), len(rows), len(methods), "methods"))
    return so_far()


@dataclass(frozen=True)
class DeactivationKey:
    extract: ExtractConfig
    config: DeactivationConfig
    targets: tuple[tuple[str, str], ...]
    heldout: str
    target: int


@dataclass(frozen=True, eq=False)
class TargetsAndHeldout(OnModel):
    target_sets: tuple[TargetSet, ...]
    heldout: tuple[Document, ...]
    extract: ExtractConfig  # the features the targets' profiles are made of
    target: int  # which target set's neurons are zeroed


def _deactivation_key(inputs: TargetsAndHeldout, config: DeactivationConfig) -> DeactivationKey:
    digest = hashlib.sha256("|".join(f"{d.domain}:{d.digest}" for d in inputs.heldout).encode()).hexdigest()[:20]
    return DeactivationKey(inputs.extract, config, tuple((t.name, t.digest) for t in inputs.target_sets), digest,
                           inputs.target)


def _deactivation_on(inputs: TargetsAndHeldout, config: DeactivationConfig, progress: Progress) -> Deactivation:
    profiles = target_profiles(inputs.handle, list(inputs.target_sets), inputs.extract, scaled(progress, 0.0, 0.1))
    return deactivation(inputs.handle, profiles, list(inputs.heldout), config, inputs.target,
                        scaled(progress, 0.1, 1.0))


# The zeroing (deactivate.py) of the neurons the target's profile (targets.py, profile.py) selects.
deactivate_verb = register(Verb("nag", "deactivate", DeactivationConfig, _deactivation_on, "the deactivation "
                                "check: held-out loss with one target's neurons zeroed vs random neurons",
                                reads=(deactivate, targets, profile, *FEATURE_READS),
                                key=_deactivation_key, ref=OnModel.model))


def deactivation_check(handle: ModelHandle, target_sets: list[TargetSet], heldout: list[Document],
               extract: ExtractConfig = ExtractConfig(), config: DeactivationConfig = DeactivationConfig(),
               target: int = 0, progress: Progress = silent) -> Computed[Deactivation]:
    """Cached deactivation check of target set number `target`."""
    return deactivate_verb(TargetsAndHeldout(handle, tuple(target_sets), tuple(heldout), extract, target), config,
                           progress)
