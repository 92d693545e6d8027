"""The particle drill-down: rebuilt from the recorded history, its numbers are the SMC trace's numbers."""
import dataclasses
import json

import numpy as np
import pytest
import torch

from backend.__main__ import main
from backend.decoding import DecodeConfig, run_one
from backend.decoding.algorithms.smc import smc_round
from backend.decoding.particle import ParticleConfig, particle, rebuild
from backend.decoding.resampling import ess
from backend.decoding.run import run, run_key
from backend.errors import UserError
from backend.models import load
from backend.store import ModelRef, cached
from tests.decoding.helpers import prompt_ids

PROMPT = "Tom has 3 apples."
CONFIG = DecodeConfig(strategy="asmc", n=4, max_new_tokens=8, ess_threshold=1.0, seed=0)


def test_rebuilt_rows_are_the_final_particles():
    handle = load("tiny-llama")
    r = smc_round(handle.model, prompt_ids(handle), 5, 4.0, 7, (), torch.Generator().manual_seed(0),
                  ess_threshold=1.0, stop_at_eos=False)
    p = r.trace
    assert p.has_history and p.resampled.any()
    for i in range(5):
        tokens, ancestry = rebuild(p, p.genealogy.shape[0] - 1, i)
        assert tokens == r.rows[i]
    for t in range(p.genealogy.shape[0]):  # the ESS chart is computed from the recorded weights
        assert ess(torch.from_numpy(p.log_weight_history[t])) == pytest.approx(float(p.ess[t]))


def test_particle_matches_the_ess_history_and_genealogy(fresh_store):
    handle = load("tiny-llama")
    run = run_one(handle, PROMPT, CONFIG).value
    p = run.particles[0]
    assert p.resampled.any(), "the test needs a resampling event"
    event = int(np.flatnonzero(p.resampled)[0])
    last = p.genealogy.shape[0] - 1
    for step, row in ((event, -1), (event, 2), (last, 0), (0, 1)):
        done = particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 0, step, row))
        d = done.value
        assert not d.recomputed and d.step == step and len(d.weights) == step + 1
        np.testing.assert_allclose(d.ess, p.ess[: step + 1])  # the ESS chart's values
        for s in range(step + 1):
            assert d.log_weights[s] == p.log_weight_history[s, d.ancestry[s]]
            w = np.exp(p.log_weight_history[s] - p.log_weight_history[s].max())
            assert d.weights[s] == pytest.approx(w[d.ancestry[s]] / w.sum())
        assert d.ancestry[step] == p.genealogy[step, d.row] and d.row in d.offspring
        assert [r.step for r in d.replacements] == [s for s in np.flatnonzero(p.resampled) if s <= step]
        for r in d.replacements:
            assert p.genealogy[r.step, r.row] == r.parent and (r.replaced is None) == (r.parent == r.row)
    final = particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 0, last, 0)).value
    assert final.text == run.candidates[0].text  # the final particle is the candidate the run chose among
    chosen = particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 0, event, -1)).value
    assert p.log_weight_history[event, chosen.ancestry[event]] == p.log_weight_history[event].max()
    assert particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 0, event, 2)).cached


def _old_format(result):
    return dataclasses.replace(result, particles=tuple(dataclasses.replace(
        q, tokens=np.zeros((0, 0), dtype=np.int64), log_weight_history=np.zeros((0, 0))) for q in result.particles))


def test_a_run_stored_before_the_history_is_rebuilt_by_decoding_again(tmp_path, monkeypatch):
    handle = load("tiny-llama")
    key = run_key(PROMPT, CONFIG)
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "first.duckdb"))
    fresh = run_one(handle, PROMPT, CONFIG).value
    expected = particle(handle, ParticleConfig(key, 0, 5, 1)).value
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "old.duckdb"))  # a store holding the run in the old format
    old = _old_format(fresh)
    cached(run.feature, run.name, ModelRef.of(handle), key, lambda: old, code_version=run.code_version)
    assert not run_one(handle, PROMPT, CONFIG).value.particles[0].has_history
    rebuilt = particle(handle, ParticleConfig(key, 0, 5, 1)).value
    assert rebuilt.recomputed and rebuilt.text == expected.text
    np.testing.assert_array_equal(rebuilt.log_weights, expected.log_weights)
    assert not run_one(handle, PROMPT, CONFIG).value.particles[0].has_history  # the stored run is left as it was
    other = DecodeConfig(strategy="asmc", n=4, max_new_tokens=8, ess_threshold=1.0, seed=4)
    # an old-format artifact under the key of another seed's run: decoding again cannot reproduce it
    cached(run.feature, run.name, ModelRef.of(handle), run_key(PROMPT, other), lambda: old,
           code_version=run.code_version)
    with pytest.raises(UserError, match="predates the particle history"):
        particle(handle, ParticleConfig(run_key(PROMPT, other), 0, 1, 0))
    assert not old.particles[0].has_history and key != run_key(PROMPT, other)


def test_out_of_range_and_non_particle_runs(fresh_store):
    handle = load("tiny-llama")
    with pytest.raises(UserError, match="Step 99 is out of range"):
        particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 0, 99, 0))
    with pytest.raises(UserError, match="Particle 4 is out of range"):
        particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 0, 1, 4))
    with pytest.raises(UserError, match="Round 1 is out of range"):
        particle(handle, ParticleConfig(run_key(PROMPT, CONFIG), 1, 1, 0))
    with pytest.raises(UserError, match="needs an ASMC run"):
        particle(handle, ParticleConfig(run_key(PROMPT, DecodeConfig(strategy="greedy", max_new_tokens=4)), 0, 0))


def test_particle_cli(capsys, fresh_store):
    args = ["decode", "particle", "--model", "tiny-llama", "--prompt", PROMPT, "--n", "4", "--max-new-tokens", "8",
            "--ess-threshold", "1.0", "--seed", "0", "--step", "2", "--particle", "1", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    p = run_one(load("tiny-llama"), PROMPT, CONFIG).value.particles[0]
    assert out["row"] == 1 and out["ess"] == pytest.approx(p.ess[:3].tolist()) and len(out["weights"]) == 3
    assert main([*args[:-1], "--step", "50", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Step 50 is out of range") and err.count("\n") == 1
