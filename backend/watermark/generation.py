"""Generate text with a watermark method (or the baseline), cached in the store, streaming sentences as chosen.

Every method samples through the same sentence loop; a method only supplies its SamplingHook
(candidates per sentence, chooser, logits processor), so generation never branches on its name.
The cached computation is the verb `generate_verb` ("watermark generate"); `generate` is its call with a watcher.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.params import Config, param
from backend.progress import Progress, silent
from backend.store import Computed, ModelRef
from backend.verbs import Verb, register
import backend.watermark.identities as identities
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.disclosure import keyed
from backend.watermark.keys import is_demo, secret_tag
from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.methods import METHODS, WatermarkMethod
from backend.watermark.synthid.config import SynthIDConfig
from backend.watermark.sampling import ChosenSentence, LoopResult, SamplingConfig, first_candidate, sentence_loop
from backend.watermark.verb_reads import WRITING

MAX_PROMPT_CHARS = 4000


@dataclass(frozen=True)
class GenerateRequest(Config):
    """Everything a generation depends on (the cache key). `secret_tag` is a one-way tag of the master
    secret, so results are recomputed if the secret changes; the secret itself is never in here.
    Each method with a config has a field named after it (what `WatermarkMethod.config_in` reads); only
    the method in use keeps non-default settings, so the others never split the cache."""

    prompt: str
    # KGW by default: its own detector flags a default-length text at the first try in seconds on CPU, where IPMark
    # needs about five times the sentences, each chosen among B candidates (bench/watermark_first_try.py)
    method: str = param("kgw", "watermark method (none: the unwatermarked baseline)", choices=METHODS)
    model_address: int = 0
    user_address: int = 0
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    ipmark: IPMarkConfig = field(default_factory=IPMarkConfig)
    kgw: KGWConfig = field(default_factory=KGWConfig)
    hf_kgw: HFKGWConfig = field(default_factory=HFKGWConfig)
    synthid: SynthIDConfig = field(default_factory=SynthIDConfig)
    secret_tag: str = ""


@dataclass(frozen=True)
class Generation:
    method: str
    prompt: str
    text: str
    sentences: tuple[ChosenSentence, ...]
    model_address: int
    user_address: int
    candidates_sampled: int
    seconds: float
    context_full: bool = False  # ended before max_sentences: one more sentence would not fit the model's context

    def context_note(self) -> str:
        """The line the page and CLI show when the context rule ended the text ("" otherwise)."""
        return (f"The text ends after {len(self.sentences)} sentences: one more would not fit the model's context "
                "(a shorter prompt or fewer tokens per sentence leave room for more)." if self.context_full else "")


@dataclass(frozen=True)
class PartialGeneration:
    """What a generation has written so far, streamed after each chosen sentence (never stored: the store keeps
    only the finished Generation)."""

    method: str
    text: str  # the text so far: exactly how the finished text begins
    sentences: tuple[ChosenSentence, ...]
    candidates_sampled: int
    max_sentences: int  # the length asked for (the text may end before it)

    @property
    def latest(self) -> ChosenSentence:
        return self.sentences[-1]

    def to_json(self) -> dict:
        return {"method": self.method, "text": self.text, "sentences": [s.__dict__ for s in self.sentences],
                "candidates_sampled": self.candidates_sampled, "max_sentences": self.max_sentences}


def _identity(method: WatermarkMethod, model_address: int, user_address: int) -> tuple[int, int]:
    """The identity a method's keys come from, checked against the registry (the baseline has none)."""
    if method.is_baseline or method.identity_free:  # keys from the method's own settings
        return 0, 0
    if method.identifies_users:
        identities.get_user(model_address, user_address)
        return model_address, user_address
    identities.get_model(model_address)
    return model_address, 0


def make_request(prompt: str, method: str, model_address: int = 0, user_address: int = 0,
                 sampling: SamplingConfig = SamplingConfig(), *configs: Config,
                 key_holder: bool = True) -> GenerateRequest:
    """A validated request (identity checked against the registry). `configs`: method configs (e.g. an
    IPMarkConfig); the one of the method in use is kept, the others are ignored. `key_holder` False (a remote
    page user): a registered identity's key may not sign, only the demo's (backend.watermark.disclosure)."""
    chosen = METHODS.get(method)
    if not key_holder and keyed(chosen) and not is_demo(model_address):
        raise UserError("Generating with a registered identity signs text as that identity: on a server reachable "
                        "from other machines only its operator may (or use the demo identity, a public key).")
    if not prompt or not prompt.strip():
        raise UserError("The prompt is empty.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise UserError(f"The prompt is too long ({len(prompt):,} characters; {MAX_PROMPT_CHARS:,} at most).")
    model_address, user_address = _identity(chosen, model_address, user_address)
    settings = {m.field: m.config() for m in METHODS if m.config is not None}
    if chosen.config is not None:
        settings[chosen.field] = next((c for c in configs if isinstance(c, chosen.config)), settings[chosen.field])
    return GenerateRequest(prompt=prompt, method=method, model_address=model_address, user_address=user_address,
                           sampling=sampling, **settings,
                           secret_tag="" if chosen.is_baseline or chosen.identity_free else secret_tag())


def run_generation(handle: ModelHandle, request: GenerateRequest,
                   on_partial: Callable[[PartialGeneration], None] | None = None,
                   progress: Progress = silent) -> Generation:
    """One pass of the sentence loop; `on_partial` sees the text after each sentence chosen, in order."""
    start = time.perf_counter()
    hook = METHODS.get(request.method).run(handle, request)

    def streamed(so_far: LoopResult) -> None:
        on_partial(PartialGeneration(method=request.method, text=so_far.text, sentences=so_far.sentences,
                                     candidates_sampled=so_far.candidates_sampled,
                                     max_sentences=request.sampling.max_sentences))

    loop = sentence_loop(handle, request.prompt, request.sampling, hook.n_candidates, hook.choose or first_candidate,
                         logits_processors=hook.logits_processors, watermark_processors=hook.watermark_processors,
                         on_sentence=None if on_partial is None else streamed, progress=progress)
    return Generation(method=request.method, prompt=request.prompt, text=loop.text, sentences=loop.sentences,
                      model_address=request.model_address, user_address=request.user_address,
                      candidates_sampled=loop.candidates_sampled, seconds=time.perf_counter() - start,
                      context_full=loop.context_full)


@dataclass(frozen=True)
class Watched:
    """A model whose generation someone watches: `on_partial` sees the text after each sentence chosen. The subject
    of `generate_verb` when a page or the CLI streams."""

    handle: ModelHandle
    on_partial: Callable[[PartialGeneration], None]


def model_of(subject: ModelHandle | Watched) -> ModelRef:
    """The generate verb's model: a watched one is stored as its model alone, so the watcher never enters the cache
    key."""
    return ModelRef.of(subject.handle if isinstance(subject, Watched) else subject)


def compute_generation(subject: ModelHandle | Watched, request: GenerateRequest,
                       progress: Progress = silent) -> Generation:
    """The generate verb's computation: one pass of the sentence loop on the subject's model, streamed to its watcher
    when it has one."""
    if isinstance(subject, Watched):
        return run_generation(subject.handle, request, subject.on_partial, progress)
    return run_generation(subject, request, progress=progress)


generate_verb = register(Verb("watermark", "generate", GenerateRequest, compute_generation,
                              "a text written with a watermark method (or the unwatermarked baseline), sentence by "
                              "sentence", reads=(run_generation, Generation, *WRITING), ref=model_of))


def generate(handle: ModelHandle, request: GenerateRequest,
             on_partial: Callable[[PartialGeneration], None] | None = None,
             progress: Progress = silent) -> Computed[Generation]:
    """Cached generation; on a cache hit nothing is streamed (the caller shows the stored sentences). A run stopped
    midway (an exception from a callback) stores nothing: what was streamed is the caller's to keep as partial."""
    return generate_verb(handle if on_partial is None else Watched(handle, on_partial), request, progress)
