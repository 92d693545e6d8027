"""Entropy-aware on-policy distillation (EOPD) signals on a student (base) rollout with a teacher (reasoning).

Per token t of the student's own rollout, with distributions at the rollout temperature:
  H_T(t)       teacher entropy over the full vocabulary (nats)
  g_t          [H_T(t) >= tau]
  RKL(t)       KL(pi_S || pi_T) exactly, and its sampled k1 estimate log pi_S(y_t) - log pi_T(y_t)
  FKL_k(t)     sum_{v in TopK_T} p~_T(v) (log p~_T(v) - log pi_S(v)), p~_T = teacher renormalised on its top k
  EOPD term    k1(t) + alpha * g_t * FKL_k(t);  plain on-policy distillation keeps k1(t) alone.
Batch means divide by all valid tokens (gated or not), as the loss does.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import torch

import backend.disagreement.divergences as divergences
import backend.disagreement.rollout as rollout_module
import backend.disagreement.scoring as scoring
from backend.disagreement.divergences import entropy, kl
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.rollout import ProblemSet, prompt_ids, rollout_logprobs
from backend.disagreement.scoring import RolloutConfig, rollouts
from backend.params import Config, param, same_as
from backend.progress import Progress, scaled, silent
from backend.verbs import Verb

EOPD_SIGNALS = ("teacher_entropy", "gate", "reverse_kl", "reverse_kl_k1", "forward_kl_topk", "eopd_term",
                "plain_term")


@dataclass(frozen=True)
class EopdParams(Config):
    tau: float = param(0.8, "teacher-entropy gate tau (nats)", ge=0)
    top_k: int = param(16, "teacher top-k the forward KL is taken over", ge=1)
    alpha: float = param(1.0, "weight of the gated forward-KL term", ge=0)


def at_temperature(logp: torch.Tensor, temperature: float) -> torch.Tensor:
    """Log-probs of the distribution at `temperature` (greedy rollouts use temperature 1)."""
    t = temperature if temperature > 0 else 1.0
    return torch.log_softmax(logp / t, dim=-1)


def eopd_signals(logp_student: torch.Tensor, logp_teacher: torch.Tensor, tokens: torch.Tensor,
                 params: EopdParams) -> dict[str, np.ndarray]:
    """Every EOPD_SIGNALS entry `[L]` for log-probs `[L, V]` and generated tokens `[L]`."""
    h_teacher = entropy(logp_teacher)
    g = (h_teacher >= params.tau).float()
    index = tokens.long().view(-1, 1)
    k1 = (logp_student.gather(1, index) - logp_teacher.gather(1, index)).view(-1)
    k = min(params.top_k, logp_teacher.shape[-1])
    top_logp, top_idx = logp_teacher.topk(k, dim=-1)
    renorm = torch.log_softmax(top_logp, dim=-1)
    fkl = (renorm.exp() * (renorm - logp_student.gather(1, top_idx))).sum(-1)
    out = {"teacher_entropy": h_teacher, "gate": g, "reverse_kl": kl(logp_student, logp_teacher).clamp_min(0),
           "reverse_kl_k1": k1, "forward_kl_topk": fkl, "eopd_term": k1 + params.alpha * g * fkl,
           "plain_term": k1}
    return {name: v.numpy().astype(np.float32) for name, v in out.items()}


@dataclass(frozen=True)
class EopdSummary:
    n_tokens: int
    gated_share: float
    mean_teacher_entropy: float
    mean_reverse_kl: float
    mean_forward_kl_topk_gated: float  # over gated tokens only
    loss_eopd: float  # mean of the EOPD term over all valid tokens
    loss_plain: float  # mean of the plain reverse-KL (k1) term


def summarise(signals: list[dict[str, np.ndarray]]) -> EopdSummary:
    pooled = {name: np.concatenate([s[name] for s in signals]) if signals else np.zeros(0) for name in EOPD_SIGNALS}
    n = len(pooled["gate"])
    gated = pooled["gate"] > 0
    mean = (lambda x: float(x.mean()) if len(x) else float("nan"))
    return EopdSummary(n_tokens=n, gated_share=mean(pooled["gate"]),
                       mean_teacher_entropy=mean(pooled["teacher_entropy"]),
                       mean_reverse_kl=mean(pooled["reverse_kl"]),
                       mean_forward_kl_topk_gated=mean(pooled["forward_kl_topk"][gated]),
                       loss_eopd=mean(pooled["eopd_term"]), loss_plain=mean(pooled["plain_term"]))


@dataclass(frozen=True)
class EopdConfig(Config):
    problems: ProblemSet = param(ProblemSet(n=20), "problems whose base rollouts are scored")
    params: EopdParams = param(EopdParams(), "gate and loss parameters")
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")
    temperature: float = param(1.0, "rollout temperature (0: greedy, signals at temperature 1)", ge=0)
    seed: int = param(0, "sampling seed of the rollouts")


@dataclass(frozen=True)
class EopdResult:
    problem_ids: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]  # per rollout, the student's tokens
    signals: tuple[dict[str, np.ndarray], ...]  # per rollout, EOPD_SIGNALS -> [L]
    summary: EopdSummary
    skipped: tuple[str, ...] = ()  # problems left out by the context rule (their rollouts' batch skipped them)


def rollout_eopd(pair: Pair, problem, token_ids: tuple[int, ...], params: EopdParams,
                 temperature: float) -> dict[str, np.ndarray]:
    prompt = prompt_ids(pair.base, problem)
    tokens = list(token_ids)
    student = at_temperature(rollout_logprobs(pair.base, prompt, tokens), temperature)
    teacher = at_temperature(rollout_logprobs(pair.reasoning, prompt, tokens), temperature)
    return eopd_signals(student, teacher, torch.tensor(tokens, dtype=torch.long), params)


def compute_eopd(pair: Pair, config: EopdConfig, progress: Progress = silent) -> EopdResult:
    """EOPD signals on the base model's own rollouts over a problem set, and their batch summary."""
    batch = rollouts(pair, RolloutConfig(config.problems, "base", config.max_new_tokens, config.temperature,
                                         config.seed), scaled(progress, 0.0, 0.8)).value
    by_id = {p.id: p for p in config.problems.problems()}
    signals = []
    for i, r in enumerate(batch.rollouts):
        progress(0.8 + 0.2 * i / len(batch.rollouts), f"teacher signals {i + 1}/{len(batch.rollouts)}")
        signals.append(rollout_eopd(pair, by_id[r.problem_id], r.token_ids, config.params, config.temperature))
    return EopdResult(problem_ids=tuple(r.problem_id for r in batch.rollouts),
                      tokens=tuple(r.tokens for r in batch.rollouts), signals=tuple(signals),
                      summary=summarise(signals), skipped=batch.skipped)


eopd: Verb[EopdConfig, EopdResult] = pair_verb(
    "eopd", EopdConfig, compute_eopd, "EOPD signals on the base model's own rollouts, and their batch summary",
    reads=(sys.modules[__name__], scoring, rollout_module, divergences))
