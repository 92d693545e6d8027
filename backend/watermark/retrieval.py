"""Who wrote it: hierarchical retrieval over the identity registry, and the flat scan it replaces.

Hierarchical (O(M + U_m) key evaluations): score every registered model on its model-level
sentences, keep the models whose exact p-value passes a lenient pre-filter (`filter_p`, plus the
best-scoring model), then score only the users of those models on their user-level sentences.
Flat (O(M * U)): score every (model, user) pair on all its sentences and take the best total z.
Both read the same signatures, computed once per text; users are ranked by cheap z-scores and exact
p-values are computed for the winners only.

Every level of the reported match is the best of K keys and carries its family-wise p-value
(backend.watermark.stats: Šidák for the model level over the M model keys and for the user level over
the user keys scored, Bonferroni for the total over every registered identity).
Decision (family-wise level alpha): the text is watermarked by model m if the smaller of the corrected
model-level and corrected total p-values, doubled (Bonferroni over these two tests), is <= alpha
(`Match.p_decision`); the user is named if, in addition, its corrected user-level p <= alpha.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from backend.watermark.keys import model_key, user_key
from backend.watermark.scoring import MODEL, USER, bits_of, level_messages, prepare
from backend.watermark.signatures import Signature
from backend.watermark.stats import LevelScore, best_of, bonferroni, level_score

FILTER_P = 0.01  # model-level p-value a model needs for its users to be scored (plus the best model)


@dataclass(frozen=True)
class Match:
    """One identity's evidence; `user_address` 0 and `user` None when the model has no users. Each level is
    the best of its K keys (`LevelScore.compared`) with its family-wise p (`LevelScore.p_corrected`)."""

    model_address: int
    user_address: int
    model: LevelScore
    user: LevelScore | None
    total: LevelScore
    model_significant: bool
    user_significant: bool
    p_decision: float = 1.0  # the corrected p-value the verdict is taken on (see the module docstring)


@dataclass(frozen=True)
class Retrieval:
    best: Match | None
    models: tuple[tuple[int, float, float], ...]  # (model address, model-level z, log10 p), best first
    surviving_models: tuple[int, ...]
    keys_evaluated: int
    seconds: float
    method: str  # "hierarchical" | "flat"


def _z(sem: list[int], syn: list[int], w_sem: float, w_syn: float) -> float:
    var = (w_sem ** 2 * len(sem) + w_syn ** 2 * len(syn)) / 4
    if var <= 0:
        return 0.0
    return (w_sem * (sum(sem) - len(sem) / 2) + w_syn * (sum(syn) - len(syn) / 2)) / math.sqrt(var)


def _match(m, u, msgs, model_bits, user_bits, w_sem, w_syn, alpha, n_models, n_user_keys, n_identities) -> Match:
    """The evidence of (m, u) as the best of n_models model keys, n_user_keys user keys and n_identities
    identities (the totals)."""
    model = best_of(level_score(MODEL, len(msgs[MODEL].sentence_ids), *model_bits, w_sem, w_syn), n_models)
    user = None if user_bits is None else best_of(
        level_score(USER, len(msgs[USER].sentence_ids), *user_bits, w_sem, w_syn), n_user_keys)
    sem = model_bits[0] + (user_bits[0] if user_bits else [])
    syn = model_bits[1] + (user_bits[1] if user_bits else [])
    n = model.n_sentences + (user.n_sentences if user else 0)
    total = best_of(level_score("total", n, sem, syn, w_sem, w_syn), n_identities, "bonferroni")
    p_decision = bonferroni(min(model.p_family, total.p_family), 2)
    model_ok = p_decision <= alpha
    user_ok = model_ok and user is not None and user.p_family <= alpha
    return Match(model_address=m, user_address=u, model=model, user=user, total=total, model_significant=model_ok,
                 user_significant=user_ok, p_decision=p_decision)


def identities(registry: dict[int, list[int]]) -> int:
    """Registered identities: every (model, user) pair plus each model without users."""
    return sum(len(users) or 1 for users in registry.values())


def hierarchical(sigs: list[Signature], registry: dict[int, list[int]], w_sem: float, w_syn: float,
                 alpha: float, filter_p: float = FILTER_P) -> Retrieval:
    start = time.perf_counter()
    per_model = {}
    prep = prepare(sigs)
    for m in registry:
        mk = model_key(m)
        msgs = level_messages(prep, mk)
        bits = bits_of(mk, msgs[MODEL])
        per_model[m] = (msgs, bits, level_score(MODEL, len(msgs[MODEL].sentence_ids), *bits, w_sem, w_syn))
    order = sorted(per_model, key=lambda m: (-per_model[m][2].z, m))
    surviving = tuple(m for m in order if per_model[m][2].p_value <= filter_p and per_model[m][2].n_bits > 0)
    keys, best = len(registry), None
    guess = tuple(order[:1]) if any(s.usable for s in sigs) else ()
    scored = tuple(dict.fromkeys(surviving + guess))
    n_user_keys, n_identities = sum(len(registry[m]) for m in scored), identities(registry)
    for m in scored:
        msgs, model_bits, _ = per_model[m]
        top_u, top_bits, top_z = 0, None, -math.inf
        for u in registry[m]:
            bits = bits_of(user_key(m, u), msgs[USER])
            z = _z(*bits, w_sem, w_syn)
            if z > top_z:
                top_u, top_bits, top_z = u, bits, z
        keys += len(registry[m])
        match = _match(m, top_u, msgs, model_bits, top_bits, w_sem, w_syn, alpha, len(registry), n_user_keys,
                       n_identities)
        if best is None or _rank(match) > _rank(best):
            best = match
    ranking = tuple((m, per_model[m][2].z, per_model[m][2].log10_p) for m in order)
    return Retrieval(best=best, models=ranking, surviving_models=surviving, keys_evaluated=keys,
                     seconds=time.perf_counter() - start, method="hierarchical")


def _rank(match: Match) -> tuple:
    return (match.model_significant, -match.p_decision, -match.total.log10_p, match.total.z)


def flat(sigs: list[Signature], registry: dict[int, list[int]], w_sem: float, w_syn: float,
         alpha: float) -> Retrieval:
    """Every (model, user) key scored on every sentence of its levels; the best total z wins."""
    start = time.perf_counter()
    keys, ranking, top = 0, [], None
    all_users = sum(len(u) for u in registry.values())
    prep = prepare(sigs)
    for m, users in registry.items():
        mk = model_key(m)
        msgs = level_messages(prep, mk)
        model_bits = bits_of(mk, msgs[MODEL])
        model = level_score(MODEL, len(msgs[MODEL].sentence_ids), *model_bits, w_sem, w_syn)
        ranking.append((m, model.z, model.log10_p))
        keys += 1
        for u in users:
            bits = bits_of(user_key(m, u), msgs[USER])
            z = _z(model_bits[0] + bits[0], model_bits[1] + bits[1], w_sem, w_syn)
            keys += 1
            if top is None or z > top[0]:
                top = (z, m, u, msgs, model_bits, bits, len(users))
        if not users and (top is None or model.z > top[0]):
            top = (model.z, m, 0, msgs, model_bits, None, 0)
    best = None
    if top is not None:
        _, m, u, msgs, model_bits, bits, _ = top
        best = _match(m, u, msgs, model_bits, bits, w_sem, w_syn, alpha, len(registry), all_users,
                      identities(registry))
    ranking.sort(key=lambda item: (-item[1], item[0]))
    surviving = (best.model_address,) if best is not None and best.model_significant else ()
    return Retrieval(best=best, models=tuple(ranking), surviving_models=surviving, keys_evaluated=keys,
                     seconds=time.perf_counter() - start, method="flat")
