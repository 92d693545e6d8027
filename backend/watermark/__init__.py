"""Watermarks: IPMark-style hierarchical personalised sentence-level watermark (model and user identity)
and the KGW token-level baseline; model-free detection with hierarchical identity retrieval; uploads,
attacks and a robustness evaluation.

Modules: keys (master secret, HMAC keys), registry (identities in DuckDB), segment (the one sentence
segmenter), signatures/skeleton (semantic and syntactic signatures; the sentence embedder is the shared
backend.models.sentence_embedder), scoring/stats/retrieval (keyed bits, exact p-values, hierarchical vs
flat search), sampling (sentence-level candidate generation), methods (the Registry of methods and the
common detection summary; ipmark/method.py and kgw/method.py register themselves), generation, uploads,
attacks (a Registry) and paraphrase, metrics/quality/evaluation.
"""
