"""Model layer: allowlist, loading (incl. the embedded SmolLM2), hooks, fingerprints, and the one generation kernel.

The only package that touches transformers internals. Every feature generates through `kernel.decode` (a policy
over the batched, cache-carrying `decoding.IncrementalDecoder`), stops by `rules.stop_ids`, is refused by
`rules.check_room` before any forward when it would not fit the context (batches skip and count instead:
`rules.keep_fitting`, shown as `skipped_line`; see backend/models/rules.py), and runs teacher-forced forwards through
`rules.forward_logits` or `hooks.capture` (both refuse an input over the context); all of them hold the model's lock
(`locks.model_lock`).
"""
from backend.models.embedded import GEMMA_TERMS_URL
from backend.models.loading import ModelHandle, load, loaded_ids, memory_use
from backend.models.allowlist import ModelSpec, default_model_id, get_spec, list_models
from backend.models.rules import skipped_line

__all__ = ["GEMMA_TERMS_URL", "ModelHandle", "ModelSpec", "default_model_id", "get_spec", "list_models", "load",
           "loaded_ids", "memory_use", "skipped_line"]
