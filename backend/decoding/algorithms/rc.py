"""RC: reasoning-summary cycles in place of one long autoregressive decode.

Each cycle generates reasoning from the question (and, after the first, the previous cycle's summary) up to
the per-cycle budget (`max_new_tokens`), extracts an answer from it, then asks the model to summarise its own
trace (`summary_tokens` at most) and restarts from the question plus that summary. No prompt ever holds more
than the question, one summary and one cycle's reasoning, so the total budget can far exceed what the model
was trained to write in one go (the paper's extrapolation). The last cycle writes no summary; the result's
output and answer are the last cycle's. All generation is the kernel's (greedy, or sampling at `temperature`);
`total_tokens`, when set, caps every generated token (summaries included) and `cycles` is then the most.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

import backend.decoding.rc_prompts as prompts
from backend.decoding.config import MAX_NEW_TOKENS, MAX_TOKEN_BUDGET, DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.result import Cycle, Outcome
from backend.errors import UserError
from backend.models.rules import check_room
from backend.params import Config, param, require

MAX_CYCLES = 32
MAX_SUMMARY_TOKENS = 512
ADVICE = "Lower max_new_tokens or summary_tokens."


@dataclass(frozen=True)
class RCOptions(Config):
    cycles: int = param(4, "reasoning-summary cycles (the most, when total_tokens is set)", ge=1, le=MAX_CYCLES)
    total_tokens: int = param(0, "generated tokens of all cycles, summaries included (0: cycles decide)",
                              ge=0, le=MAX_TOKEN_BUDGET)
    summary_tokens: int = param(64, "new tokens of each summary", ge=1, le=MAX_SUMMARY_TOKENS)
    summary_instruction: str = param(prompts.DEFAULT_SUMMARY_INSTRUCTION,
                                     "what the model is asked after its reasoning (a user turn of its chat "
                                     "template; plain text without one)")
    temperature: float = param(0.0, "0: greedy; otherwise sampling at this temperature", ge=0, le=10)

    def __post_init__(self) -> None:
        super().__post_init__()
        require(isinstance(self.summary_instruction, str) and self.summary_instruction.strip() != "",
                "summary_instruction must be a non-empty text.")

    @staticmethod
    def of(config: DecodeConfig) -> RCOptions:
        return RCOptions(**config.extra)


def planned_tokens(config: DecodeConfig) -> int:
    """The most generated tokens a run may spend: total_tokens, or every cycle's budget and all but the last
    cycle's summary."""
    o = RCOptions.of(config)
    return o.total_tokens or o.cycles * config.max_new_tokens + (o.cycles - 1) * o.summary_tokens


def _check(config: DecodeConfig) -> None:
    o = RCOptions.of(config)
    require(o.total_tokens == 0 or o.total_tokens >= config.max_new_tokens,
            f"total_tokens must be 0 (cycles decide) or at least max_new_tokens, the per-cycle budget "
            f"({config.max_new_tokens}), got {o.total_tokens}.")


def _check_context(ctx: DecodeContext, budget: int, o: RCOptions) -> None:
    """Refuse, before any forward, a cycle that cannot fit. The largest prompt is a later cycle's summary
    request: the question, the previous summary, a full cycle of reasoning and the instruction, with room left
    for the new summary."""
    tok = ctx.handle.tokenizer
    fixed = prompts.summary_ids(tok, prompts.restart_text(ctx.prompt, ""), "", o.summary_instruction,
                                ctx.chat).shape[1]
    check_room(ctx.model, fixed + budget + o.summary_tokens, o.summary_tokens,
               f"RC's longest prompt (the question with the summary request, {fixed} tokens, + the previous summary, "
               f"summary_tokens = {o.summary_tokens}, + a full cycle, max_new_tokens = {budget})", ADVICE)


def _generate(ctx: DecodeContext, ids: torch.Tensor, room: int, temperature: float, what: str, on_step):
    check_room(ctx.model, ids.shape[1], room, f"RC: {what}", ADVICE)  # a re-encoded trace can run over the estimate
    greedy = temperature == 0
    roll = ctx.rollout(1, 1.0 if greedy else temperature, room, greedy=greedy, context_ids=ids, on_step=on_step)
    return roll.row(0), roll.tokens_generated, roll.forward_passes


def run_rc(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    o = RCOptions.of(config)
    if not ctx.prompt:
        raise UserError("RC writes new prompts from the question's text, and this run has none.")
    budget, planned = config.max_new_tokens, planned_tokens(config)
    _check_context(ctx, budget, o)
    tok = ctx.handle.tokenizer
    ids, text, cycles, last = ctx.prompt_ids, ctx.prompt, [], []
    spent = passes = 0

    def step(k: int, part: str, room: int):
        base = spent
        return lambda t: ctx.progress(min(1.0, (base + t + 1) / planned),
                                      f"cycle {k + 1}/{o.cycles}: {part}, token {t + 1}/{room}")

    for k in range(o.cycles):
        room = budget if not o.total_tokens else min(budget, o.total_tokens - spent)
        if room <= 0:
            break
        prompt_tokens = int(ids.shape[1])
        last, used, fw = _generate(ctx, ids, room, o.temperature, f"cycle {k + 1}'s prompt",
                                   step(k, "reasoning", room))
        spent, passes = spent + used, passes + fw
        reasoning = ctx.text(last)
        summary, summary_used = "", 0
        # a summary only when another cycle follows it (with at least one token of room)
        s_room = o.summary_tokens if not o.total_tokens else min(o.summary_tokens, o.total_tokens - spent - 1)
        if k < o.cycles - 1 and s_room > 0:
            request = prompts.summary_ids(tok, text, reasoning, o.summary_instruction, ctx.chat)
            written, summary_used, fw = _generate(ctx, request, s_room, o.temperature,
                                                  f"cycle {k + 1}'s summary request", step(k, "summary", s_room))
            spent, passes = spent + summary_used, passes + fw
            summary = ctx.text(written).strip()
            text = prompts.restart_text(ctx.prompt, summary)
            ids = prompts.restart_ids(tok, ctx.prompt, summary, ctx.chat)
        cycles.append(Cycle(prompt_tokens=prompt_tokens, reasoning=reasoning, reasoning_tokens=used,
                            answer=ctx.answer(last), summary=summary, summary_tokens=summary_used))
        if not summary_used:
            break
    answers = ", ".join("-" if c.answer is None else str(c.answer) for c in cycles)
    return Outcome(token_ids=tuple(last), tokens_generated=spent, forward_passes=passes, cycles=tuple(cycles),
                   notes=(f"{len(cycles)} cycle(s) of up to {budget} tokens, {spent} tokens in all; "
                          f"answer after each cycle: {answers}",))


def _at_budget(config: DecodeConfig, budget: int) -> DecodeConfig:
    """x b: b cycles (about b per-cycle budgets of reasoning, plus the summaries)."""
    return config.replace(extra={**config.extra, "cycles": max(1, min(MAX_CYCLES, budget)), "total_tokens": 0})


def _reference(config: DecodeConfig) -> tuple[str, DecodeConfig]:
    """Plain decoding (greedy, or sampling at RC's temperature) allowed RC's whole token budget in one go."""
    o = RCOptions.of(config)
    tokens = min(MAX_NEW_TOKENS, planned_tokens(config))
    kind = "Greedy" if o.temperature == 0 else "Sampling"
    ref = DecodeConfig(strategy="greedy" if o.temperature == 0 else "sampling", max_new_tokens=tokens,
                       seed=config.seed, temperature=o.temperature or 1.0)
    return f"{kind} at RC's budget ({tokens} tokens)", ref


STRATEGIES.register(StrategySpec(
    "rc", "RC (reasoning-summary cycles)",
    "Cycles of reasoning up to a per-cycle budget; the model summarises its trace and restarts from the question "
    "plus the summary; an answer after every cycle.",
    run_rc, options=RCOptions, at_budget=_at_budget, check=_check, reference=_reference))
