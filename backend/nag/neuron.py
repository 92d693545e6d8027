"""`neuron_detail`: the drill-down of one MLP neuron (a click on the graph or the profile; `nag neuron` on the CLI).

- Top-activating contexts: over the first `max_docs` pool documents (file order; the sample pool is shuffled), each
  document's strongest token by |up-projection output| (the per-token quantity NAG's default impact averages),
  with its context; the documents with the largest such activation, one context per document.
- Activation histogram: the signed up-projection output of every scanned token.
- Logit effects: the tokens its down-projection column promotes and suppresses (backend.models.mlp_readout).
- Where it fires among the targets: per target set, the share of its documents with the neuron in their layer
  top-K and its profile weight (the NAG's own numbers).
"""
from __future__ import annotations

import dataclasses
import hashlib
import sys
from dataclasses import dataclass

import numpy as np
import torch

from backend.corpus.documents import Document
from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.models.mlp_readout import mlp_up_at, neuron_logit_effects
import backend.nag.profile as profile
import backend.nag.targets as targets
from backend.nag.extract import ReadsFeatures, effective_max_length, length_batches, pad_batch, pad_id, tokenize
from backend.nag.featurecache import FEATURE_READS
from backend.nag.subject import OnModel
from backend.nag.targets import TargetSet, target_profiles
from backend.params import param
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.verbs import Verb, register


@dataclass(frozen=True)
class NeuronConfig(ReadsFeatures):
    """One neuron and how much of the pool is read for it."""

    layer: int = param(0, "layer of the neuron", ge=0)
    neuron: int = param(0, "index of the MLP intermediate neuron", ge=0)
    max_docs: int = param(40, "pool documents scanned for its activations (the first ones, file order)", ge=1,
                          le=5000)
    contexts: int = param(8, "top-activating contexts listed (one per document)", ge=1, le=50)
    window: int = param(10, "context tokens shown on each side of the strongest token", ge=0, le=64)
    top_tokens: int = param(10, "promoted and suppressed tokens listed", ge=1, le=100)
    bins: int = param(40, "histogram bins", ge=5, le=200)


@dataclass(frozen=True)
class NeuronKey:
    config: NeuronConfig
    documents: str  # digest of the scanned documents' ids and texts
    targets: tuple[tuple[str, str], ...]  # (name, digest)


@dataclass(frozen=True)
class Context:
    doc_id: str
    domain: str
    position: int  # token index of the strongest token in the document
    activation: float  # signed up-projection output there
    left: str
    token: str
    right: str


@dataclass(frozen=True)
class TokenEffect:
    token: str
    id: int
    effect: float  # logit per unit activation, up to a positive factor


@dataclass(frozen=True)
class TargetFiring:
    name: str
    documents: int
    in_top_k: float  # share of the target's documents with the neuron in their layer top-K
    weight: float  # the neuron's profile weight (share of the target's top-K slots at that layer)


@dataclass(frozen=True)
class NeuronDetail:
    """hist_counts `[bins]`, hist_edges `[bins + 1]` over every scanned token's activation."""

    model: str
    config: NeuronConfig
    scanned_docs: int
    scanned_tokens: int
    contexts: tuple[Context, ...]
    hist_counts: np.ndarray
    hist_edges: np.ndarray
    promoted: tuple[TokenEffect, ...]
    suppressed: tuple[TokenEffect, ...]
    targets: tuple[TargetFiring, ...]

    def to_json(self) -> dict:
        rows = lambda items: [dataclasses.asdict(x) for x in items]  # noqa: E731
        return {"model": self.model, "layer": self.config.layer, "neuron": self.config.neuron,
                "scanned_docs": self.scanned_docs, "scanned_tokens": self.scanned_tokens,
                "contexts": rows(self.contexts), "promoted": rows(self.promoted), "suppressed": rows(self.suppressed),
                "targets": rows(self.targets),
                "histogram": {"counts": self.hist_counts.tolist(), "edges": [round(float(e), 5)
                                                                             for e in self.hist_edges]}}


def check_neuron(handle: ModelHandle, layer: int, neuron: int) -> None:
    info = handle.info
    if not 0 <= layer < info.n_layers:
        raise UserError(f"Layer {layer} does not exist: the model has layers 0-{info.n_layers - 1}.")
    if not 0 <= neuron < info.intermediate_size:
        raise UserError(f"Neuron {neuron} does not exist: each layer has MLP neurons 0-{info.intermediate_size - 1}.")


@torch.no_grad()
def activations(handle: ModelHandle, ids: list[list[int]], layer: int, neuron: int, batch_tokens: int = 2048,
                progress: Progress = silent) -> list[np.ndarray]:
    """Per document, `[tokens]` the neuron's up-projection output at every token (right-padded batches)."""
    out: list[np.ndarray | None] = [None] * len(ids)
    batches = length_batches([len(x) for x in ids], max(batch_tokens, max(len(x) for x in ids)))
    for b, rows in enumerate(batches):
        batch, mask = pad_batch([ids[i] for i in rows], pad_id(handle), handle.device)
        values = mlp_up_at(handle.model, batch, mask, layer)[..., neuron].float().cpu().numpy()
        for row, i in enumerate(rows):
            out[i] = values[row, :len(ids[i])]
        progress((b + 1) / len(batches), f"activations of {sum(map(len, batches[:b + 1]))}/{len(ids)} documents")
    return out  # type: ignore[return-value]


def _effects(handle: ModelHandle, values: torch.Tensor, order: torch.Tensor) -> tuple[TokenEffect, ...]:
    return tuple(TokenEffect(handle.tokenizer.decode([i]), int(i), float(values[i])) for i in order.tolist())


def compute_neuron(handle: ModelHandle, config: NeuronConfig, documents: list[Document],
                   target_sets: list[TargetSet], progress: Progress = silent) -> NeuronDetail:
    layer, neuron, tok = config.layer, config.neuron, handle.tokenizer
    encoded = [ids for ids, _ in tokenize(handle, [d.text for d in documents],
                                          effective_max_length(handle, config.extract))]
    keep = [i for i, ids in enumerate(encoded) if ids]
    acts = activations(handle, [encoded[i] for i in keep], layer, neuron, progress=scaled(progress, 0.0, 0.8))
    strongest = [int(np.argmax(np.abs(a))) for a in acts]
    order = sorted(range(len(keep)), key=lambda j: (-abs(float(acts[j][strongest[j]])), j))[:config.contexts]
    contexts = []
    for j in order:
        ids, p, doc = encoded[keep[j]], strongest[j], documents[keep[j]]
        contexts.append(Context(doc.id, doc.domain or "", p, float(acts[j][p]),
                                tok.decode(ids[max(0, p - config.window):p]), tok.decode(ids[p:p + 1]),
                                tok.decode(ids[p + 1:p + 1 + config.window])))
    every = np.concatenate(acts) if acts else np.zeros(0)
    counts, edges = np.histogram(every, bins=config.bins)
    values = neuron_logit_effects(handle.model, layer, neuron).cpu()
    k = min(config.top_tokens, values.shape[0])
    profiles = target_profiles(handle, target_sets, config.extract, scaled(progress, 0.8, 1.0)) if target_sets \
        else None
    firing = () if profiles is None else tuple(
        TargetFiring(name, int(tops.shape[0]), float((tops[:, layer] == neuron).any(axis=1).mean()),
                     float(profiles.weights[m, layer, neuron]))
        for m, (name, tops) in enumerate(zip(profiles.names, profiles.tops)))
    progress(1.0, "neuron drill-down done")
    return NeuronDetail(model=handle.display_name, config=config, scanned_docs=len(keep),
                        scanned_tokens=int(every.size), contexts=tuple(contexts), hist_counts=counts,
                        hist_edges=edges, promoted=_effects(handle, values, values.topk(k).indices),
                        suppressed=_effects(handle, values, (-values).topk(k).indices), targets=firing)


def documents_digest(documents: list[Document]) -> str:
    return hashlib.sha256("|".join(f"{d.id}:{d.digest}" for d in documents).encode()).hexdigest()[:20]


@dataclass(frozen=True, eq=False)
class ScannedDocuments(OnModel):
    documents: tuple[Document, ...]  # the pool's first `max_docs`
    target_sets: tuple[TargetSet, ...]


def _neuron_key(inputs: ScannedDocuments, config: NeuronConfig) -> NeuronKey:
    return NeuronKey(config, documents_digest(list(inputs.documents)),
                     tuple((t.name, t.digest) for t in inputs.target_sets))


def _neuron_on(inputs: ScannedDocuments, config: NeuronConfig, progress: Progress) -> NeuronDetail:
    return compute_neuron(inputs.handle, config, list(inputs.documents), list(inputs.target_sets), progress)


# The neuron's activations, logit effects and where it fires among the targets' profiles.
neuron_verb = register(Verb("nag", "neuron", NeuronConfig, _neuron_on, "one MLP neuron: top-activating contexts, "
                            "activation histogram, logit effects, where it fires among the targets",
                            reads=(sys.modules[__name__], targets, profile, *FEATURE_READS), key=_neuron_key,
                            ref=OnModel.model))


def neuron_detail(handle: ModelHandle, config: NeuronConfig, pool: list[Document],
                  target_sets: list[TargetSet] = (), progress: Progress = silent) -> Computed[NeuronDetail]:
    """Cached drill-down of one neuron over the first `config.max_docs` of `pool`, with where it fires among
    `target_sets` (none: that part is empty)."""
    check_neuron(handle, config.layer, config.neuron)
    documents = tuple(pool[:config.max_docs])
    if not documents:
        raise UserError("The candidate pool has no non-empty document.")
    return neuron_verb(ScannedDocuments(handle, documents, tuple(target_sets)), config, progress)
