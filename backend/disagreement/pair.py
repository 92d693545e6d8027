"""A base model and a reasoning model that can be compared token by token.

Token-level comparison only makes sense when both models read and write the same token ids, so a
pair is refused unless the two tokenizers have the identical vocabulary (token -> id) and the same output size.
Their end-of-sequence tokens may differ (a base model and its chat fine-tune often do): either ends a
sequence.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from backend.errors import UserError
from backend.models import ModelHandle, get_spec, list_models, load
from backend.models.allowlist import adapter_on_disk
from backend.models.rules import stop_ids
from backend.progress import Progress, scaled, silent
from backend.store import ModelRef
from backend.verbs import Verb, register

# The Disagreement page's reasoning model (the arithmetic adapter): of the project's adapters, the one whose
# intervention sweep comes closest to the paper's target (README). The everyday-arithmetic adapter reasons better
# but puts more differing tokens on its path, so guided intervention cannot get under a 25% intervention rate with
# it. (The Decoding page's reasoner is app.model_choice.arithmetic_reasoner.)
DEFAULT_REASONING_ID = "smollm2-135m-arith-reasoner"


@dataclass(frozen=True)
class Pair:
    base: ModelHandle
    reasoning: ModelHandle

    @property
    def ref(self) -> ModelRef:
        """One cache identity for the pair: both ids for people, both fingerprints for the key."""
        digest = hashlib.sha256(f"{self.base.fingerprint}|{self.reasoning.fingerprint}".encode()).hexdigest()
        return ModelRef(f"{self.base.id} + {self.reasoning.id}", digest[:16])

    @property
    def label(self) -> str:
        return f"{self.base.display_name} (base) vs {self.reasoning.display_name} (reasoning)"

    @property
    def stops(self) -> frozenset[int]:
        """Tokens that end a sequence: either model's EOS (a base and its chat fine-tune may differ,
        e.g. <|endoftext|> vs <|im_end|>), by the one stop rule (backend.models.rules.stop_ids)."""
        return stop_ids(self.base) | stop_ids(self.reasoning)


def pair_ref(pair: Pair) -> ModelRef:
    """What a disagreement verb is keyed on: the pair's one identity (`Verb.ref`)."""
    return pair.ref


def pair_verb(name: str, config: type, compute, help: str, reads: tuple = (), key=None) -> Verb:
    """Register a disagreement verb: `compute(pair, config, progress)`, cached under the pair's identity."""
    return register(Verb("disagreement", name, config, compute, help, reads=reads, key=key, ref=pair_ref))


def _output_size(handle: ModelHandle) -> int:
    return int(handle.model.get_output_embeddings().weight.shape[0])


_CHECKED: set[tuple[str, str]] = set()  # (base, reasoning) fingerprints found comparable: the page checks every run,
# and reading two 50k-token vocabularies takes ~0.1 s


def check_pair(base: ModelHandle, reasoning: ModelHandle) -> Pair:
    """The pair, or a UserError saying why the two models cannot be compared token by token."""
    if (base.fingerprint, reasoning.fingerprint) in _CHECKED:
        return Pair(base, reasoning)
    names = f"{base.display_name} and {reasoning.display_name}"
    vb, vr = base.tokenizer.get_vocab(), reasoning.tokenizer.get_vocab()
    if vb != vr:
        differing = len(set(vb.items()) ^ set(vr.items()))
        raise UserError(f"{names} do not share a tokenizer ({len(vb)} vs {len(vr)} tokens, {differing} "
                        "token/id entries differ). Token-level disagreement needs the same vocabulary; "
                        "pick a reasoning model built on the same base (e.g. a fine-tune or its adapter).")
    if _output_size(base) != _output_size(reasoning):
        raise UserError(f"{names} share a vocabulary but their output layers differ in size "
                        f"({_output_size(base)} vs {_output_size(reasoning)}).")
    _CHECKED.add((base.fingerprint, reasoning.fingerprint))
    return Pair(base, reasoning)


def load_pair(base_id: str, reasoning_id: str, progress: Progress = silent) -> Pair:
    base = load(base_id, progress=scaled(progress, 0.0, 0.5))
    reasoning = load(reasoning_id, progress=scaled(progress, 0.5, 1.0))
    return check_pair(base, reasoning)


def reasoning_candidates(base_id: str) -> list[str]:
    """Allowlisted ids likely to pair with `base_id`, best first, without loading anything.

    An adapter model over the same source comes first (the project's own reasoning model), then
    other models whose local tokenizer file is byte-identical to the base's.
    """
    specs = {s.id: s for s in list_models()}
    if base_id not in specs:
        return []
    base = specs[base_id]
    adapters = [s.id for s in specs.values() if s.id != base_id and s.adapter and s.source == base.source
                and adapter_on_disk(s)]
    same_tokenizer = []
    base_tok = _tokenizer_digest(base.source)
    if base_tok is not None:
        same_tokenizer = [s.id for s in specs.values() if s.id != base_id and not s.adapter
                          and _tokenizer_digest(s.source) == base_tok]
    return adapters + same_tokenizer


def _tokenizer_digest(source: str) -> str | None:
    from pathlib import Path

    path = Path(source) / "tokenizer.json"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def default_reasoning_id(base_id: str) -> str:
    """The page's default partner for `base_id`: the project's reasoner when it pairs, else a candidate."""
    candidates = reasoning_candidates(base_id)
    if DEFAULT_REASONING_ID in candidates:
        return DEFAULT_REASONING_ID
    if candidates:
        return candidates[0]
    try:
        get_spec(DEFAULT_REASONING_ID)
        return DEFAULT_REASONING_ID
    except UserError:
        return base_id
