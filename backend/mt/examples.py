"""Head-finding examples: teacher-force the clean answer in the clean and corrupted prompts and
pick the answer position where the two next-token distributions differ most (max KL(clean || corrupt)).

Everything later (patching, attribution, steering vectors) works at that one position: the
"last position" of the corrupted prefix that ends just before the chosen answer token.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.errors import UserError
from backend.models.hooks import capture
from backend.models.loading import ModelHandle
from backend.models.rules import NO_LIMIT, check_room, fits, room
from backend.mt.prompts import PromptPair


def encode(handle: ModelHandle, text: str) -> list[int]:
    """Raw-text ids (no chat template: the few-shot format is plain text)."""
    return list(handle.tokenizer(text)["input_ids"])


def encode_answer(handle: ModelHandle, text: str) -> list[int]:
    return list(handle.tokenizer(text, add_special_tokens=False)["input_ids"])


@dataclass(frozen=True)
class Example:
    """One prompt pair at its chosen position. Head outputs are `[layers, heads, head_dim]` (fp32)."""

    row: int
    corrupt_prefix: tuple[int, ...]  # corrupted prompt + answer tokens before the chosen one
    target: int  # the chosen answer token
    answer_offset: int  # index of the target inside the answer
    kl: float  # KL(clean || corrupt) at that position, nats
    clean_logp: float  # log p(target) in the clean run
    corrupt_logp: float  # log p(target) in the corrupted run
    clean_heads: torch.Tensor
    corrupt_heads: torch.Tensor


def _heads_at(run, position: int, n_layers: int) -> torch.Tensor:
    return torch.stack([run.head_outputs[layer][0, position] for layer in range(n_layers)]).float()


def build_example(handle: ModelHandle, pair: PromptPair, max_answer_tokens: int) -> Example:
    clean, corrupt = encode(handle, pair.clean), encode(handle, pair.corrupt)
    answer = encode_answer(handle, pair.answer)[:max_answer_tokens]
    if not answer:
        raise UserError(f"Row {pair.row}: the target sentence is empty after tokenisation.")
    check_room(handle.model, max(len(clean), len(corrupt)) + len(answer), 0, f"Row {pair.row}: the few-shot prompt",
               "Use fewer demonstrations or shorter sentences.")  # the context rule, before either forward
    n_layers = handle.info.n_layers
    device = handle.device
    clean_run = capture(handle.model, torch.tensor([clean + answer], device=device), heads=range(n_layers))
    corrupt_run = capture(handle.model, torch.tensor([corrupt + answer], device=device), heads=range(n_layers))
    m = len(answer)
    # The logits at position len(prompt) - 1 + j predict answer token j.
    clean_logp = torch.log_softmax(clean_run.logits[0, len(clean) - 1:len(clean) - 1 + m].float(), dim=-1)
    corrupt_logp = torch.log_softmax(corrupt_run.logits[0, len(corrupt) - 1:len(corrupt) - 1 + m].float(), dim=-1)
    kl = (clean_logp.exp() * (clean_logp - corrupt_logp)).sum(-1)  # KL(clean || corrupt) per answer position
    j = int(kl.argmax())
    clean_at, corrupt_at = len(clean) - 1 + j, len(corrupt) - 1 + j
    target = answer[j]
    return Example(row=pair.row, corrupt_prefix=tuple((corrupt + answer)[:corrupt_at + 1]), target=target,
                   answer_offset=j, kl=float(kl[j]), clean_logp=float(clean_logp[j, target]),
                   corrupt_logp=float(corrupt_logp[j, target]),
                   clean_heads=_heads_at(clean_run, clean_at, n_layers).cpu(),
                   corrupt_heads=_heads_at(corrupt_run, corrupt_at, n_layers).cpu())


_FITTED: dict[tuple, int] = {}  # fit_shots answers: the page asks on every run, and tokenising the set takes ~0.1 s


def fit_shots(handle: ModelHandle, data, src: str, tgt: str, wanted: int = 5, max_answer_tokens: int = 16,
              slack: int = 48) -> int:
    """The largest k <= wanted whose longest few-shot prompt (any demo language, plus the answer and some
    generation room) fits the model's context; at least 1. Small-context models get fewer demonstrations."""
    if room(handle.model, 0) == NO_LIMIT:
        return wanted
    key = (handle.fingerprint, data.digest, src, wanted, max_answer_tokens, slack)
    if key not in _FITTED:
        if len(_FITTED) >= 256:
            _FITTED.clear()
        _FITTED[key] = _fit_shots(handle, data, src, wanted, max_answer_tokens, slack)
    return _FITTED[key]


def _fit_shots(handle: ModelHandle, data, src: str, wanted: int, max_answer_tokens: int, slack: int) -> int:
    from backend.mt.prompts import Demo, demo_block, query

    rows = data.rows("heads")
    longest_demo = max(len(encode_answer(handle, demo_block([Demo(data.text(src, r), data.text(lang, r))])))
                       for r in rows for lang in data.languages if lang != src)
    longest_query = max(len(encode(handle, query(data.text(src, r)))) for r in range(len(data)))
    for k in range(wanted, 0, -1):
        if fits(handle.model, k * longest_demo + longest_query + max_answer_tokens, slack):
            return k
    return 1
