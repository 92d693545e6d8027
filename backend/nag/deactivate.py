"""Deactivation check: does the NAG hold neurons the target domain needs?

Zero the up-projection rows of the heaviest profile neurons (the same number per layer, `share` of all
MLP neurons in total) and measure the mean next-token loss (nats/token) on held-out text of every
domain, against the same number of random neurons per layer (several draws, NAG neurons excluded).
The weights are restored afterwards, under the model's lock.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from backend.corpus.documents import Document
from backend.errors import UserError
from backend.models.architecture import mlp_up_proj, output_axis
from backend.models.loading import ModelHandle
from backend.models.locks import model_lock
from backend.models.rules import forward_logits
from backend.nag.extract import pad_batch, length_batches, pad_id, read_length
from backend.nag.profile import top_profile_neurons
from backend.nag.targets import TargetProfiles
from backend.params import Config, param
from backend.progress import Progress, silent


@dataclass(frozen=True)
class DeactivationConfig(Config):
    """The NAG neurons are spread evenly over layers (at least one per layer); losses read `max_length` tokens
    of each held-out document."""

    share: float = param(0.0015, "fraction of all MLP neurons to zero", gt=0, lt=1)
    n_random: int = param(3, "random draws of as many neurons (the baseline the NAG effect is read against)", ge=1,
                          le=100)
    seed: int = param(0, "seed of the random draws")
    max_length: int = param(120, "tokens per held-out document", ge=2)
    batch_tokens: int = param(1024, "padded tokens per forward", ge=1)


@dataclass(frozen=True)
class Deactivation:
    """Losses in nats/token per held-out domain `[D]`: base, NAG-zeroed, random-zeroed `[n_random, D]`.
    nag_neurons `[L, per_layer]`; share: the fraction actually zeroed."""

    model: str
    target: str
    domains: tuple[str, ...]
    base: np.ndarray
    nag: np.ndarray
    random: np.ndarray
    nag_neurons: np.ndarray
    per_layer: int
    share: float
    read_tokens: int = 0  # tokens read of each held-out document: max_length within the model's context
    truncated: int = 0  # held-out documents longer than read_tokens (their first read_tokens are scored)

    @property
    def nag_increase(self) -> np.ndarray:
        return self.nag - self.base

    @property
    def random_increase(self) -> np.ndarray:
        return self.random.mean(axis=0) - self.base

    def summary(self) -> dict:
        """Increases on the target domain and on the mean of the other domains, and the NAG/random ratio."""
        out = {"target": self.target, "neurons_zeroed": int(self.nag_neurons.size),
               "share_of_all_neurons": self.share, "tokens_read_per_document": self.read_tokens,
               "documents_truncated": self.truncated}
        if self.target in self.domains:
            t = self.domains.index(self.target)
            others = [i for i in range(len(self.domains)) if i != t]
            out.update(nag_target=float(self.nag_increase[t]), random_target=float(self.random_increase[t]),
                       nag_other=float(self.nag_increase[others].mean()) if others else None,
                       random_other=float(self.random_increase[others].mean()) if others else None,
                       ratio_target=float(self.nag_increase[t] / max(abs(self.random_increase[t]), 1e-9)))
        return out


@contextmanager
def zeroed(model: nn.Module, neurons: dict[int, np.ndarray]) -> Iterator[None]:
    """Zero the up-projection weights (and bias) producing the given intermediate neurons; restore on exit."""
    saved = []
    with model_lock(model), torch.no_grad():
        try:
            for layer, idx in neurons.items():
                proj = mlp_up_proj(model, layer)
                index = torch.as_tensor(np.asarray(idx), dtype=torch.long, device=proj.weight.device)
                dim = output_axis(proj)  # the weight's axis of the neurons it produces
                saved.append((proj.weight, dim, index, proj.weight.index_select(dim, index).clone()))
                proj.weight.index_fill_(dim, index, 0.0)
                if getattr(proj, "bias", None) is not None:
                    saved.append((proj.bias, 0, index, proj.bias.index_select(0, index).clone()))
                    proj.bias.index_fill_(0, index, 0.0)
            yield
        finally:
            for tensor, dim, index, values in reversed(saved):
                tensor.index_copy_(dim, index, values)


@torch.no_grad()
def domain_losses(handle: ModelHandle, docs: list[Document], domains: tuple[str, ...], max_length: int,
                  batch_tokens: int) -> np.ndarray:
    """`[D]` token-weighted mean next-token loss of the first max_length tokens of each document (within the model's
    context: `read_length`), per domain."""
    max_length = read_length(handle.model, max_length)
    encoded = [ids[:max_length] for ids in handle.tokenizer([d.text for d in docs], add_special_tokens=False)
               ["input_ids"]]
    nll, count = np.zeros(len(domains)), np.zeros(len(domains))
    for rows in length_batches([len(e) for e in encoded], batch_tokens):
        ids, mask = pad_batch([encoded[i] for i in rows], pad_id(handle), handle.device)
        logits = forward_logits(handle.model, ids, mask)[:, :-1]
        logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        valid = mask[:, 1:].to(logp.dtype)
        for row, i in enumerate(rows):
            d = domains.index(docs[i].domain)
            nll[d] -= float((logp[row] * valid[row]).sum())
            count[d] += float(valid[row].sum())
    return nll / np.maximum(count, 1.0)


def random_neurons(rng: np.random.Generator, n_neurons: int, exclude: np.ndarray) -> dict[int, np.ndarray]:
    out = {}
    for layer, avoid in enumerate(exclude):
        choices = np.setdiff1d(np.arange(n_neurons), avoid)
        out[layer] = np.sort(rng.choice(choices, size=len(avoid), replace=False))
    return out


def deactivation(handle: ModelHandle, profiles: TargetProfiles, heldout: list[Document],
                 config: DeactivationConfig = DeactivationConfig(), target: int = 0,
                 progress: Progress = silent) -> Deactivation:
    docs = [d for d in heldout if d.domain]
    if not docs:
        raise UserError("Deactivation needs held-out documents with a domain label.")
    domains = tuple(dict.fromkeys(d.domain for d in docs))
    n_layers, n_neurons = handle.info.n_layers, handle.info.intermediate_size
    per_layer = max(1, int(round(config.share * n_neurons)))
    nag = top_profile_neurons(profiles.weights[target], per_layer)
    rng = np.random.default_rng(config.seed)
    draws = [random_neurons(rng, n_neurons, nag) for _ in range(config.n_random)]
    steps = 2 + len(draws)

    def losses(neurons: dict[int, np.ndarray] | None, step: int, label: str) -> np.ndarray:
        progress(step / steps, f"held-out loss: {label}")
        if neurons is None:
            return domain_losses(handle, docs, domains, config.max_length, config.batch_tokens)
        with zeroed(handle.model, neurons):
            return domain_losses(handle, docs, domains, config.max_length, config.batch_tokens)

    read = read_length(handle.model, config.max_length)
    truncated = sum(len(ids) > read for ids in handle.tokenizer([d.text for d in docs], add_special_tokens=False)
                    ["input_ids"])  # counted and shown (summary), never cut silently
    base = losses(None, 0, "intact model")
    nag_loss = losses({layer: nag[layer] for layer in range(n_layers)}, 1, "NAG neurons zeroed")
    random_loss = np.stack([losses(d, 2 + r, f"random neurons zeroed ({r + 1}/{len(draws)})")
                            for r, d in enumerate(draws)]) if draws else np.zeros((0, len(domains)))
    progress(1.0, "deactivation done")
    return Deactivation(model=handle.display_name, target=profiles.names[target], domains=domains, base=base,
                        nag=nag_loss, random=random_loss, nag_neurons=nag, per_layer=per_layer,
                        share=per_layer * n_layers / (n_layers * n_neurons), read_tokens=read, truncated=truncated)
