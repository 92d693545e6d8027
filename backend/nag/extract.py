"""Per-document NAG features: the top-K impact neurons of every layer, `[L, K]` indices.

Two paths over the same model and the same numbers:
- `extract_batched` (the project's): documents sorted by length, packed into right-padded batches of
  about `batch_tokens` tokens, one hooked forward per batch, no full-vocabulary logits.
- `extract_naive`: one document per forward, the loop a first implementation would write (kept for
  the benchmark and as a reference in tests).
Features are stored per (model, document text hash, impact, max_length) by `backend.nag.featurecache`,
so ranking against another target never runs the model again for a document seen before.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from backend.models.rules import room
from backend.models.hooks import capture
from backend.models.loading import ModelHandle
from backend.nag.impact import IMPACTS
from backend.params import Config, param, same_as
from backend.progress import Partial, Progress, report_partial, silent

STORE_K = 32  # neurons kept per layer in the cache: any top_k up to this reuses the stored features


@dataclass(frozen=True)
class ExtractConfig(Config):
    """What a document's NAG features are made of; `top_k` above the model's MLP width is refused where the
    model is known (`features_for`)."""

    impact: str = param("up_abs", "how a neuron's impact on a document is measured; " + IMPACTS.help_text(),
                         choices=IMPACTS)
    top_k: int = param(20, "neurons per layer per document", ge=1)
    max_length: int = param(120, "tokens read per document (longer: truncated)", ge=2)
    batch_tokens: int = param(2048, "padded tokens per forward", ge=1)

    @property
    def stored_k(self) -> int:
        return max(self.top_k, STORE_K)


@dataclass(frozen=True)
class ReadsFeatures(Config):
    """Base of a config that reads documents' NAG features: ExtractConfig's fields as declared there (its batch
    size aside) and the ExtractConfig they make."""

    impact: str = same_as(ExtractConfig, "impact")
    top_k: int = same_as(ExtractConfig, "top_k")
    max_length: int = same_as(ExtractConfig, "max_length")

    @property
    def extract(self) -> ExtractConfig:
        return ExtractConfig(self.impact, self.top_k, self.max_length)


@dataclass(frozen=True)
class DocFeatures:
    """One document: top `[L, stored_k]` int32 neuron indices by decreasing impact (ties: lower index first);
    n_tokens: tokens in the whole document; used_tokens: tokens read (<= max_length)."""

    top: np.ndarray
    n_tokens: int
    used_tokens: int


def read_length(model, max_length: int) -> int:
    """Tokens read of each document: max_length, within the model's context (the context rule: `room(model, 0)` is
    the longest input a forward may read). Callers count the documents cut (`used_tokens < n_tokens`)."""
    return min(max_length, room(model, 0))


def effective_max_length(handle: ModelHandle, config: ExtractConfig) -> int:
    return read_length(handle.model, config.max_length)


def tokenize(handle: ModelHandle, texts: Sequence[str], max_length: int) -> list[tuple[list[int], int]]:
    """(token ids truncated to max_length, full token count) per text; no special tokens (as the paper)."""
    encoded = handle.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [(ids[:max_length], len(ids)) for ids in encoded]


def top_neurons(impact: torch.Tensor, k: int) -> np.ndarray:
    """`[..., I]` impacts -> `[..., k]` indices of the largest, stable (equal impacts: lower index first)."""
    order = torch.sort(impact, dim=-1, descending=True, stable=True).indices[..., :k]
    return order.to(torch.int32).cpu().numpy()


def pad_batch(batch: list[list[int]], pad_id: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Right padding: real tokens keep positions 0..len-1 (the METHODS.md pitfall is left padding)."""
    width = max(len(ids) for ids in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, tokens in enumerate(batch):
        ids[row, :len(tokens)] = torch.tensor(tokens, dtype=torch.long)
        mask[row, :len(tokens)] = 1
    return ids.to(device), mask.to(device)


def pad_id(handle: ModelHandle) -> int:
    tok = handle.tokenizer
    return next((i for i in (tok.pad_token_id, tok.eos_token_id, 0) if i is not None))


def length_batches(lengths: Sequence[int], batch_tokens: int, max_padding: float = 0.1) -> list[list[int]]:
    """Indices grouped shortest documents first, so that (rows x longest row) stays within batch_tokens and
    padding stays under `max_padding` of the real tokens: on a CPU a padded token costs as much as a real
    one, so a wide length spread in one batch would cancel what batching saves."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        rows, width = len(current) + 1, lengths[i]  # ascending order: the newcomer is the longest
        if current and (rows * width > batch_tokens or rows * width > (1 + max_padding) * (real + width)):
            batches.append(current)
            current, real = [], 0
        current.append(i)
        real += lengths[i]
    if current:
        batches.append(current)
    return batches


def extract_batched(handle: ModelHandle, texts: Sequence[str], config: ExtractConfig,
                    progress: Progress = silent) -> list[DocFeatures]:
    """Features of `texts` (none empty), in input order, with the batched path."""
    max_length = effective_max_length(handle, config)
    encoded = tokenize(handle, texts, max_length)
    method = IMPACTS[config.impact]
    batches = length_batches([len(ids) for ids, _ in encoded], max(config.batch_tokens // method.cost, max_length))
    out: list[DocFeatures | None] = [None] * len(texts)
    for b, rows in enumerate(batches):
        ids, mask = pad_batch([encoded[i][0] for i in rows], pad_id(handle), handle.device)
        top = top_neurons(method.run(handle.model, ids, mask), config.stored_k)
        for row, i in enumerate(rows):
            out[i] = DocFeatures(top=top[row], n_tokens=encoded[i][1], used_tokens=len(encoded[i][0]))
        done = sum(map(len, batches[:b + 1]))
        report_partial(progress, Partial(tuple(out), done, len(texts), "documents"))  # None: not extracted yet
        progress((b + 1) / len(batches), f"impact of {done}/{len(texts)} documents")
    return out  # type: ignore[return-value]


def extract_naive(handle: ModelHandle, texts: Sequence[str], config: ExtractConfig,
                  progress: Progress = silent) -> list[DocFeatures]:
    """The same features, one unpadded document per forward, full logits (the benchmark's baseline)."""
    max_length = effective_max_length(handle, config)
    method = IMPACTS[config.impact]
    layers = range(handle.info.n_layers)
    out = []
    for n, text in enumerate(texts):
        full = handle.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([full[:max_length]], device=handle.device)
        if config.impact == "up_abs":  # the straightforward way: a full traced forward per document
            ups = capture(handle.model, ids, mlp_up=layers).mlp_up
            impact = torch.stack([ups[layer].abs().mean(1) for layer in layers], dim=1)
        else:
            impact = method.run(handle.model, ids, torch.ones_like(ids))
        out.append(DocFeatures(top=top_neurons(impact, config.stored_k)[0], n_tokens=len(full),
                               used_tokens=ids.shape[1]))
        progress((n + 1) / len(texts), f"impact of {n + 1}/{len(texts)} documents")
    return out
