"""`neuron_detail`: the drill-down of one MLP neuron (a click on the graph or the profile; `nag neuron` on the CLI).

- Top-activating contexts: over the first `max_docs` pool documents (file order; the sample pool is shuffled), each
  document's strongest token by |up-projection output| (the per-token quantity NAG's default impact averages),
  with its context; the documents with the largest such activation, one context per document.
- Activation histogram: the signed up-projection output of every scanned token.
- Logit effects: the tokens its down-projection column promotes and suppresses (backend.models.mlp_readout).
- Where it fires among the targets: per target set, the share of its documents with the neuron in their layer
  top-K and its profile weight (the NAG's own numbers).

Several neurons read the same documents in one forward per batch (`compute_neurons`): `neuron_details` prepares
every neuron of the graph a page shows that way and stores each under the key a click on it reads.
"""
from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from backend.corpus.documents import Document
from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.models.mlp_readout import mlp_up_columns, neuron_logit_effects
import backend.models.mlp_readout as mlp_readout
import backend.nag.profile as profile
import backend.nag.targets as targets
from backend.nag.extract import ReadsFeatures, effective_max_length, length_batches, pad_batch, pad_id, tokenize
from backend.nag.featurecache import FEATURE_READS
from backend.nag.subject import OnModel
from backend.nag.targets import TargetSet, target_profiles
from backend.params import param
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.store.artifacts import ComputedMany
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


Neuron = tuple[int, int]  # (layer, neuron)


@torch.no_grad()
def activations(handle: ModelHandle, ids: list[list[int]], neurons: Sequence[Neuron], batch_tokens: int = 2048,
                progress: Progress = silent) -> dict[Neuron, list[np.ndarray]]:
    """Per neuron, per document, `[tokens]` its up-projection output at every token (right-padded batches; one
    forward per batch for all the neurons, stopped after the deepest layer)."""
    columns: dict[int, list[int]] = {}
    for layer, neuron in dict.fromkeys(neurons):
        columns.setdefault(layer, []).append(neuron)
    out = {(layer, n): [None] * len(ids) for layer, ns in columns.items() for n in ns}
    batches = length_batches([len(x) for x in ids], max(batch_tokens, max(len(x) for x in ids)))
    for b, rows in enumerate(batches):
        batch, mask = pad_batch([ids[i] for i in rows], pad_id(handle), handle.device)
        read = mlp_up_columns(handle.model, batch, mask, columns)
        for layer, ns in columns.items():
            values = read[layer].float().cpu().numpy()
            for c, n in enumerate(ns):
                for row, i in enumerate(rows):
                    out[layer, n][i] = values[row, :len(ids[i]), c]
        progress((b + 1) / len(batches), f"activations of {sum(map(len, batches[:b + 1]))}/{len(ids)} documents")
    return out  # type: ignore[return-value]


def _effects(handle: ModelHandle, values: torch.Tensor, order: torch.Tensor) -> tuple[TokenEffect, ...]:
    return tuple(TokenEffect(handle.tokenizer.decode([i]), int(i), float(values[i])) for i in order.tolist())


def compute_neurons(handle: ModelHandle, configs: Sequence[NeuronConfig], documents: list[Document],
                    target_sets: list[TargetSet], progress: Progress = silent) -> list[NeuronDetail]:
    """The drill-downs of several neurons over the same documents in one pass (a single neuron is a pass of one,
    so a click and the batch that prepares every neuron of a graph give the same numbers): the documents are
    tokenised once and run once for all the neurons, the targets' profiles read once."""
    if not configs:
        return []
    extract = configs[0].extract
    if any(c.extract != extract for c in configs):
        raise ValueError("compute_neurons: every neuron must be read with the same extraction settings")
    tok = handle.tokenizer
    encoded = [ids for ids, _ in tokenize(handle, [d.text for d in documents], effective_max_length(handle, extract))]
    keep = [i for i, ids in enumerate(encoded) if ids]
    acts_of = activations(handle, [encoded[i] for i in keep], [(c.layer, c.neuron) for c in configs],
                          progress=scaled(progress, 0.0, 0.8))
    profiles = target_profiles(handle, target_sets, extract, scaled(progress, 0.8, 0.9)) if target_sets else None
    details = []
    for config in configs:
        layer, neuron = config.layer, config.neuron
        acts = acts_of[layer, neuron]
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
        firing = () if profiles is None else tuple(
            TargetFiring(name, int(tops.shape[0]), float((tops[:, layer] == neuron).any(axis=1).mean()),
                         float(profiles.weights[m, layer, neuron]))
            for m, (name, tops) in enumerate(zip(profiles.names, profiles.tops)))
        details.append(NeuronDetail(model=handle.display_name, config=config, scanned_docs=len(keep),
                                    scanned_tokens=int(every.size), contexts=tuple(contexts), hist_counts=counts,
                                    hist_edges=edges, promoted=_effects(handle, values, values.topk(k).indices),
                                    suppressed=_effects(handle, values, (-values).topk(k).indices), targets=firing))
        progress(0.9 + 0.1 * len(details) / len(configs), f"neuron {len(details)}/{len(configs)} read")
    progress(1.0, "neuron drill-downs done")
    return details


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
    return compute_neurons(inputs.handle, [config], list(inputs.documents), list(inputs.target_sets), progress)[0]


# The neuron's activations, logit effects and where it fires among the targets' profiles.
neuron_verb = register(Verb("nag", "neuron", NeuronConfig, _neuron_on, "one MLP neuron: top-activating contexts, "
                            "activation histogram, logit effects, where it fires among the targets",
                            reads=(sys.modules[__name__], mlp_readout, targets, profile, *FEATURE_READS), key=_neuron_key,
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


def neuron_details(handle: ModelHandle, configs: Sequence[NeuronConfig], pool: list[Document],
                   target_sets: list[TargetSet] = (), progress: Progress = silent) -> ComputedMany[NeuronDetail]:
    """The drill-downs of several neurons (a graph's), each stored under the key a click on that neuron asks for
    (`neuron_detail`): one store read when they are stored, else the missing ones computed together in one pass
    (`compute_neurons`) and stored. Every config scans the same `max_docs` of `pool`."""
    if not configs:
        return ComputedMany(values=[], hits=0, computed=0)
    for config in configs:
        check_neuron(handle, config.layer, config.neuron)
    if len({c.max_docs for c in configs}) > 1:
        raise ValueError("neuron_details: every neuron must scan the same documents")
    documents = tuple(pool[:configs[0].max_docs])
    if not documents:
        raise UserError("The candidate pool has no non-empty document.")
    inputs = ScannedDocuments(handle, documents, tuple(target_sets))
    return neuron_verb.many(inputs, [_neuron_key(inputs, c) for c in configs],
                            lambda missing: compute_neurons(handle, [k.config for k in missing], list(documents),
                                                            list(target_sets), progress))
