"""The inspect verbs: `verb(handle, Config, progress) -> Computed[Result]`, each cached in the store under
(inspect, action, model fingerprint, config, code version) like every other feature's artifacts."""
from __future__ import annotations

from backend.inspect.attention import CODE_VERSION as ATTENTION_VERSION
from backend.inspect.attention import AttentionResult, HeadResult, compute_attention, compute_head
from backend.inspect.config import AttentionConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import CODE_VERSION as DLA_VERSION
from backend.inspect.dla import DlaResult, compute_dla
from backend.inspect.lens import CODE_VERSION as LENS_VERSION
from backend.inspect.lens import LensResult, compute_lens
from backend.progress import Progress, silent
from backend.store import Computed, ModelRef, cached

FEATURE = "inspect"


def lens(handle, config: LensConfig = LensConfig(), progress: Progress = silent) -> Computed[LensResult]:
    return cached(FEATURE, "lens", ModelRef.of(handle), config,
                  lambda: compute_lens(handle.model, handle.tokenizer, config, progress),
                  code_version=LENS_VERSION)


def dla(handle, config: DlaConfig = DlaConfig(), progress: Progress = silent) -> Computed[DlaResult]:
    return cached(FEATURE, "dla", ModelRef.of(handle), config,
                  lambda: compute_dla(handle.model, handle.tokenizer, config, progress),
                  code_version=DLA_VERSION)


def attention(handle, config: AttentionConfig = AttentionConfig(), progress: Progress = silent
              ) -> Computed[AttentionResult]:
    return cached(FEATURE, "attention", ModelRef.of(handle), config,
                  lambda: compute_attention(handle.model, handle.tokenizer, config, progress),
                  code_version=ATTENTION_VERSION)


def head(handle, config: HeadConfig = HeadConfig(), progress: Progress = silent) -> Computed[HeadResult]:
    return cached(FEATURE, "head", ModelRef.of(handle), config,
                  lambda: compute_head(handle.model, handle.tokenizer, config, progress),
                  code_version=ATTENTION_VERSION)
