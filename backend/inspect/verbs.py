"""The inspect verbs: `verb(handle, Config, progress) -> Computed[Result]`, each cached in the store under
(inspect, action, model fingerprint, config, code version) like every other feature's artifacts."""
from __future__ import annotations

from backend.inspect.attention import CODE_VERSION as ATTENTION_VERSION
from backend.inspect.attention import AttentionResult, HeadResult, compute_attention, compute_head
from backend.inspect.attribution import CODE_VERSION as ATTRIBUTION_VERSION
from backend.inspect.attribution import AttributionResult, compute_attribution
from backend.inspect.config import AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import CODE_VERSION as DLA_VERSION
from backend.inspect.dla import DlaResult, compute_dla
from backend.inspect.lens import CODE_VERSION as LENS_VERSION
from backend.inspect.lens import LensResult, compute_lens
from backend.progress import Progress, silent
from backend.store import Computed, ModelRef, cached

FEATURE = "inspect"


def _cached(handle, action: str, config, compute, version: str, progress: Progress):
    """One verb: the computation on the handle's model and tokenizer, through the store."""
    return cached(FEATURE, action, ModelRef.of(handle), config,
                  lambda: compute(handle.model, handle.tokenizer, config, progress), code_version=version)


def lens(handle, config: LensConfig = LensConfig(), progress: Progress = silent) -> Computed[LensResult]:
    return _cached(handle, "lens", config, compute_lens, LENS_VERSION, progress)


def dla(handle, config: DlaConfig = DlaConfig(), progress: Progress = silent) -> Computed[DlaResult]:
    return _cached(handle, "dla", config, compute_dla, DLA_VERSION, progress)


def attention(handle, config: AttentionConfig = AttentionConfig(),
              progress: Progress = silent) -> Computed[AttentionResult]:
    return _cached(handle, "attention", config, compute_attention, ATTENTION_VERSION, progress)


def head(handle, config: HeadConfig = HeadConfig(), progress: Progress = silent) -> Computed[HeadResult]:
    return _cached(handle, "head", config, compute_head, ATTENTION_VERSION, progress)


def attribute(handle, config: AttributeConfig = AttributeConfig(),
              progress: Progress = silent) -> Computed[AttributionResult]:
    return _cached(handle, "attribute", config, compute_attribution, ATTRIBUTION_VERSION, progress)
