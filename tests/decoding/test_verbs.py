"""Decoding's cached computations are registered verbs: listed by `python -m backend verbs`, and a decode stored
under the run verb's key (its RunKey and the code version derived from the strategies' source)."""
from backend.decoding import DecodeConfig, run_one
from backend.decoding.algorithms import asmc, basic, mh, rc
from backend.decoding.run import run, run_key
from backend.models import load
from backend.store import ModelRef
from backend.store.artifacts import artifact_key
from backend.store.codec import canonical_params
from tests.support.verb_versions import assert_listed_by_the_cli

DECODING_VERBS = {"run", "run-history", "batch", "particle", "convexity", "convexity-batch"}


def test_every_cached_computation_is_a_registered_verb_listed_by_the_cli(capsys):
    assert_listed_by_the_cli("decoding", DECODING_VERBS, capsys)


def test_a_decode_is_stored_under_its_run_key_and_a_version_that_follows_the_strategies(fresh_store):
    config = DecodeConfig(strategy="greedy", max_new_tokens=4)
    handle = load("tiny-llama")
    done = run_one(handle, "Tom has 3 apples.", config)
    assert done.key == artifact_key("decoding", "run", ModelRef.of(handle).fingerprint,
                                    canonical_params(run_key("Tom has 3 apples.", config)), run.code_version)
    # every built-in strategy's module enters the version: a changed algorithm is never served an old decode
    assert {basic, mh, asmc, rc} <= set(run.reads)
