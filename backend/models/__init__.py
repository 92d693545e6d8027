"""Model layer: allowlist, loading (incl. the embedded SmolLM2), hooks, incremental decoding, fingerprints.

The only package that touches transformers internals.
"""
from backend.models.choice import arithmetic_reasoner, translator
from backend.models.embedded import GEMMA_TERMS_URL
from backend.models.loading import ModelHandle, load, loaded_ids
from backend.models.registry import ModelSpec, default_model_id, get_spec, list_models

__all__ = ["GEMMA_TERMS_URL", "ModelHandle", "ModelSpec", "arithmetic_reasoner", "default_model_id", "get_spec", "list_models", "load",
           "loaded_ids", "translator"]
