"""Watermarks: IPMark-style hierarchical personalised sentence-level watermark (model and user identity)
and the KGW token-level baseline; model-free detection with hierarchical identity retrieval; uploads,
attacks and a robustness evaluation.

Modules: keys (master secret, HMAC keys), identities (the identity registry in DuckDB), segment (the one sentence
segmenter), signatures/skeleton (semantic and syntactic signatures; the sentence embedder is the shared
backend.models.sentence_embedder), scoring/stats/retrieval (keyed bits, exact p-values, hierarchical vs
flat search), sampling (sentence-level candidate generation), methods (the Registry of methods and the
common detection summary; ipmark/method.py and kgw/method.py register themselves), generation, uploads,
attacks (a Registry) and paraphrase, metrics/quality/evaluation.


Public face (the page and other callers import from here): `generate`, `detect`, `evaluate`, `scan` with their
requests and configs, `read_upload`, the METHODS registry and the identity registry module `identities`; the demo
identity and shipped examples (`demo`), every method's verdict at once (`verdict_table`) and a generation's
expected time (`expected_seconds`).
"""
from backend.watermark import demo, identities
from backend.watermark.corpus import human_texts
from backend.watermark.estimate import expected_seconds
from backend.watermark.evaluation import EvalConfig, evaluate, evaluate_verb, latest_evaluation
from backend.watermark.generation import GenerateRequest, generate, make_request
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.methods import BASELINE, METHODS, DetectRequest, detect, watermark_names
from backend.watermark.sampling import SamplingConfig
from backend.watermark.scan import scan
from backend.watermark.uploads import MAX_BYTES, MAX_CHARS, SUFFIXES, read_upload
from backend.watermark.verdicts import verdict_table

__all__ = ["BASELINE", "MAX_BYTES", "MAX_CHARS", "METHODS",
           "SUFFIXES", "DetectRequest", "EvalConfig", "GenerateRequest", "IPMarkConfig", "SamplingConfig", "demo",
           "detect", "evaluate", "evaluate_verb", "expected_seconds", "generate", "human_texts", "identities", "latest_evaluation",
           "make_request", "read_upload", "scan", "verdict_table", "watermark_names"]
