"""Who wrote it: hierarchical retrieval over the identity registry, and the flat scan it replaces.

Hierarchical (O(M + U_m) key evaluations): score every registered model on its model-level
sentences, keep the models whose exact p-value passes a lenient pre-filter (`filter_p`, plus the
best-scoring model), then score only the users of those models on their user-level sentences.
Flat (O(M * U)): score every (model, user) pair on all its sentences and take the best total z.
Both read the same signatures, computed once per text; users are ranked by cheap z-scores and exact
p-values are computed for the winners only.

Decision, one level at a time (a gatekeeping procedure: the user level is tested only behind its model):
- model level: the model is decided on its own sentences' bits, as the best of the M model keys, Šidák-corrected
  over the M registered models only. "Watermarked by model m" therefore stands whatever the number of users;
- user level (only under a model that passed): the user's bits on the user-level sentences, Šidák-corrected over
  the users of that model only (the hierarchical search scores no other user's key for it; the flat scan,
  which picks the user among every registered user, corrects over all of them).
Each level's p-value carries its correction and the family it was corrected over (`LevelScore.family`): the
p-values shown are the ones the verdict is taken on. The total (both levels under one identity) is kept as the
evaluation's ROC statistic only, uncorrected; it decides nothing: a best-of-every-user total would dilute with
the user count (100,000 users cost it 17 bits), which is what let a crowd of users hide a model.
The price is paid on small registries: the model level reads only its own sentences (about half), so at
alpha = 1e-3 a text needs about 10 fully marked sentences to be flagged where the total needed about 8 with two
users (40 draws of corpus sentences carrying every bit: 6 / 8 / 10 / 12 sentences flagged 25 / 55 / 85 / 100%,
against 48 / 100 / 100 / 100% for the old rule with 2 users and 15 / 42 / 78 / 95% with 100,000 users).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from backend.watermark.keys import model_key, user_key, user_keys
from backend.watermark.scoring import MODEL, USER, bits_of, level_messages, prepare
from backend.watermark.signatures import Signature
from backend.watermark.stats import LevelScore, best_of, labelled, level_score

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
    p_decision: float = 1.0  # the corrected p-value the verdict is taken on: the model level's (module docstring)


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


def _match(m, u, msgs, model_bits, user_bits, w_sem, w_syn, alpha, n_models, n_user_keys, users_family) -> Match:
    """The evidence of (m, u): the model level as the best of n_models model keys, the user level as the best of
    n_user_keys user keys (`users_family` names them); the total is one identity's raw evidence (the ROC
    statistic), never corrected and never decisive."""
    model = labelled(best_of(level_score(MODEL, len(msgs[MODEL].sentence_ids), *model_bits, w_sem, w_syn), n_models),
                     _count(n_models, "model"))
    user = None if user_bits is None else labelled(
        best_of(level_score(USER, len(msgs[USER].sentence_ids), *user_bits, w_sem, w_syn), n_user_keys),
        users_family)
    sem = model_bits[0] + (user_bits[0] if user_bits else [])
    syn = model_bits[1] + (user_bits[1] if user_bits else [])
    n = model.n_sentences + (user.n_sentences if user else 0)
    total = level_score("total", n, sem, syn, w_sem, w_syn)
    model_ok = model.n_bits > 0 and model.p_family <= alpha
    user_ok = model_ok and user is not None and user.n_bits > 0 and user.p_family <= alpha
    return Match(model_address=m, user_address=u, model=model, user=user, total=total, model_significant=model_ok,
                 user_significant=user_ok, p_decision=model.p_family)


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


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
    for m in scored:
        msgs, model_bits, _ = per_model[m]
        top_u = best_user(m, registry[m], msgs[USER], w_sem, w_syn)
        top_bits = bits_of(user_key(m, top_u), msgs[USER]) if top_u else None
        keys += len(registry[m])
        match = _match(m, top_u, msgs, model_bits, top_bits, w_sem, w_syn, alpha, len(registry), len(registry[m]),
                       f"{_count(len(registry[m]), 'user')} of model {m}")
        if best is None or _rank(match) > _rank(best):
            best = match
    ranking = tuple((m, per_model[m][2].z, per_model[m][2].log10_p) for m in order)
    return Retrieval(best=best, models=ranking, surviving_models=surviving, keys_evaluated=keys,
                     seconds=time.perf_counter() - start, method="hierarchical")


def best_user(m: int, users: list[int], messages, w_sem: float, w_syn: float) -> int:
    """The user of model m whose key scores highest on the user-level messages (the first on a tie; 0: no users).

    Every user of a model is scored on the same messages, so the weighted score alone ranks them (the z-score is
    the same affine function of it for all). A user is abandoned as soon as its bits so far plus every remaining
    weight cannot beat the best score yet: on a registry of 100,000 users most keys are dropped after two or three
    bits instead of all of them, with the same winner as scoring every bit."""
    items = sorted([(w_sem, msg) for msg in messages.sem] + [(w_syn, msg) for msg in messages.syn],
                   key=lambda item: -item[0])
    remaining = [sum(w for w, _ in items[i:]) for i in range(len(items) + 1)]
    top_u, top = 0, -math.inf
    for u, key in user_keys(m, users):
        if top >= remaining[0] - 1e-9:  # the best has every bit: nobody after it can beat it
            break
        score = 0.0
        for i, (weight, msg) in enumerate(items):
            if score + remaining[i] <= top + 1e-9:  # cannot strictly exceed the best: the first best stays
                break
            score += weight * (key.mac(msg)[-1] & 1)
        else:
            if score > top + 1e-9 or not top_u:
                top_u, top = u, score
    return top_u


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
                      f"{_count(all_users, 'user')} (every registered user: the flat scan picks among all)")
    ranking.sort(key=lambda item: (-item[1], item[0]))
    surviving = (best.model_address,) if best is not None and best.model_significant else ()
    return Retrieval(best=best, models=tuple(ranking), surviving_models=surviving, keys_evaluated=keys,
                     seconds=time.perf_counter() - start, method="flat")
