"""Generate text with a watermark method (or none), cached in the store, streaming sentences as chosen."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.progress import Progress, silent
from backend.store import Computed, ModelRef, cached
from backend.watermark import registry
from backend.watermark.ipmark import embed as ipmark_embed
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.keys import secret_tag
from backend.watermark.kgw import embed as kgw_embed
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.methods import BASELINE, GENERATION_CHOICES
from backend.watermark.sampling import ChosenSentence, SamplingConfig, first_candidate, sentence_loop

CODE_VERSION = "2"  # 2: candidates after the first sentence start with whitespace
MAX_PROMPT_CHARS = 4000


@dataclass(frozen=True)
class GenerateRequest:
    """Everything a generation depends on (the cache key). `secret_tag` is a one-way tag of the master
    secret, so results are recomputed if the secret changes; the secret itself is never in here."""

    prompt: str
    method: str  # "ipmark" | "kgw" | "none"
    model_address: int = 0
    user_address: int = 0
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    ipmark: IPMarkConfig = field(default_factory=IPMarkConfig)
    kgw: KGWConfig = field(default_factory=KGWConfig)
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


def make_request(prompt: str, method: str, model_address: int = 0, user_address: int = 0,
                 sampling: SamplingConfig = SamplingConfig(), ipmark: IPMarkConfig = IPMarkConfig(),
                 kgw: KGWConfig = KGWConfig()) -> GenerateRequest:
    """A validated request (identity checked against the registry)."""
    if method not in GENERATION_CHOICES:
        raise UserError(f"Unknown method {method!r}; choose one of {', '.join(GENERATION_CHOICES)}.")
    if not prompt or not prompt.strip():
        raise UserError("The prompt is empty.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise UserError(f"The prompt is too long ({len(prompt):,} characters; {MAX_PROMPT_CHARS:,} at most).")
    if not 1 <= sampling.max_sentences <= 50:
        raise UserError("Generate between 1 and 50 sentences.")
    if method == "ipmark":
        registry.get_user(model_address, user_address)
    elif method == "kgw":
        registry.get_model(model_address)
        user_address = 0
    else:
        model_address = user_address = 0
    # only the settings of the method in use enter the cache key
    return GenerateRequest(prompt, method, model_address, user_address, sampling,
                           ipmark if method == "ipmark" else IPMarkConfig(),
                           kgw if method == "kgw" else KGWConfig(),
                           secret_tag() if method != BASELINE else "")


def run_generation(handle: ModelHandle, request: GenerateRequest,
                   on_sentence: Callable[[ChosenSentence], None] | None = None,
                   progress: Progress = silent) -> Generation:
    start = time.perf_counter()
    if request.method == "ipmark":
        loop = ipmark_embed.embed(handle, request.prompt, request.model_address, request.user_address,
                                  request.ipmark, request.sampling, on_sentence, progress)
    elif request.method == "kgw":
        loop = kgw_embed.embed(handle, request.prompt, request.model_address, request.kgw, request.sampling,
                               on_sentence, progress)
    else:
        loop = sentence_loop(handle, request.prompt, request.sampling, 1, first_candidate,
                             on_sentence=on_sentence, progress=progress)
    return Generation(request.method, request.prompt, loop.text, loop.sentences, request.model_address,
                      request.user_address, loop.candidates_sampled, time.perf_counter() - start)


def generate(handle: ModelHandle, request: GenerateRequest,
             on_sentence: Callable[[ChosenSentence], None] | None = None,
             progress: Progress = silent) -> Computed[Generation]:
    """Cached generation; on a cache hit nothing is streamed (the caller shows the stored sentences)."""
    return cached("watermark", "generate", ModelRef.of(handle), request,
                  lambda: run_generation(handle, request, on_sentence, progress), code_version=CODE_VERSION)
