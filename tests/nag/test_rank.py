"""Ranking end to end on a tiny model: budget, cache re-use across targets, notices, export, methods, CLI."""
import json
import re

import numpy as np
import pytest

from backend.__main__ import main
from backend.corpus.documents import Document
from backend.errors import UserError
from backend.models import load
from backend.nag import RankConfig, TargetSet, export_selected, iter_documents, rank
from backend.nag import extract as extract_module
from backend.nag import samples


def _pool(tmp_path, per_domain=4):
    docs = samples.load_small(samples.pool_path())
    rows = [d for domain in ("science", "code") for d in [d for d in docs if d.domain == domain][:per_domain]]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps({"id": d.id, "text": d.text, "domain": d.domain, "quality": d.quality}) + "\n"
                            for d in rows))
    return path


def _targets(domain, n=3):
    return [TargetSet(domain, tuple(samples.sample_targets(domain)[:n]))]


def test_rank_selects_budget_and_reuses_features_for_a_new_target(tmp_path, fresh_store, monkeypatch):
    handle = load("tiny-llama")
    pool = _pool(tmp_path)
    config = RankConfig(top_k=8, max_length=48)
    first = rank(handle, pool, _targets("science"), config)
    r = first.value
    assert not first.cached and len(r.ids) == 8 and r.similarity.shape == (1, 8)
    assert sum(r.used_tokens) <= r.budget_tokens == int(0.2 * r.n_tokens.sum())
    assert ((0 <= r.similarity) & (r.similarity <= 1)).all()
    frame = r.to_frame()
    assert list(frame["rank"]) == list(range(1, 9)) and frame["selected"].iloc[:int((r.selected_by >= 0).sum())].all()
    assert (np.diff(frame.loc[~frame["selected"], "distance"]) >= -1e-12).all()
    assert rank(handle, pool, _targets("science"), config).cached

    calls = []
    real = extract_module.extract_batched
    monkeypatch.setattr("backend.nag.featurecache.extract_batched",
                        lambda h, texts, c, p=None: calls.append(len(texts)) or real(h, texts, c))
    again = rank(handle, pool, _targets("code"), config).value
    assert again.cache_hits == 8            # no pool document went through the model again
    assert calls == [3]                      # only the three new target documents did


def test_single_target_truncation_and_quality_notices(tmp_path, fresh_store):
    handle = load("tiny-llama")
    pool = _pool(tmp_path, per_domain=2)
    one = [TargetSet("one", (Document("t", "a single target example about cells"),))]
    r = rank(handle, pool, one, RankConfig(top_k=4, max_length=16, quality_weight=0.5)).value
    text = " ".join(r.notices)
    assert "single document" in text and "longer than 16 tokens" in text
    assert r.distance.shape == (1, 4)


@pytest.mark.parametrize("bad,message", [
    (dict(method="nope"), "method must be one of nag, embedding, random, got 'nope'"),
    (dict(impact="nope"), "impact must be one of up_abs"),
    (dict(budget=0), "budget must be in (0, 1]"),
    (dict(quality_weight=1.5), "quality_weight must be in [0, 1]"),
    (dict(top_k=0), "top_k must be in [1, inf)"),
])
def test_bad_parameters_are_user_errors_on_construction(bad, message):
    with pytest.raises(UserError, match=re.escape(message)):
        RankConfig(**bad)


def test_top_k_wider_than_the_mlp_is_a_user_error(tmp_path, fresh_store):
    handle = load("tiny-llama")
    with pytest.raises(UserError, match="MLP width"):
        rank(handle, _pool(tmp_path, 1), _targets("science", 1), RankConfig(top_k=handle.info.intermediate_size + 1))


def test_empty_pool_and_empty_targets_are_user_errors(tmp_path):
    handle = load("tiny-llama")
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"text": ""}\n')
    with pytest.raises(UserError, match="no non-empty document"):
        rank(handle, empty, _targets("science", 1), RankConfig(top_k=4))
    with pytest.raises(UserError, match="no non-empty document"):
        rank(handle, _pool(tmp_path, 1), [TargetSet("x", ())], RankConfig(top_k=4))


def test_random_baseline_is_deterministic_and_export_keeps_selection_order(tmp_path, fresh_store):
    handle = load("tiny-llama")
    pool = _pool(tmp_path)
    a = rank(handle, pool, _targets("science", 1), RankConfig(method="random", seed=3, budget=0.5)).value
    b = rank(handle, pool, _targets("science", 1), RankConfig(method="random", seed=3, budget=0.5)).value
    assert list(a.order) == list(b.order)
    out = tmp_path / "sel.jsonl"
    out.write_bytes(export_selected(pool, a, "jsonl"))
    assert [d.id for d in iter_documents(out)] == a.selected_ids()


def test_cli_rank_writes_parquet_and_prints_json(tmp_path, capsys, fresh_store):
    import pandas as pd

    pool, out = _pool(tmp_path, 2), tmp_path / "scores.parquet"
    code = main(["nag", "rank", "--model", "tiny-llama", "--pool", str(pool), "--target-domain", "science",
                 "--target-domain", "code", "--top-k", "4", "--max-length", "32", "--out", str(out), "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["targets"] == ["science", "code"] and result["documents"] == 4
    assert "precision_at_k" in result
    assert len(pd.read_parquet(out)) == 4
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    assert main(["nag", "rank", "--model", "tiny-llama", "--pool", str(bad), "--json"]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_compare_reports_precision_for_every_method(tmp_path, fresh_store):
    from backend.nag import compare

    handle = load("tiny-llama")
    result = compare(handle, _pool(tmp_path), _targets("code", 2), RankConfig(top_k=4, max_length=32), ks=(1, 4, 8))
    assert result.methods == ("nag", "embedding", "random") and result.precision.shape == (3, 3)
    assert result.relevant == 4
    np.testing.assert_allclose(result.precision[:, -1], 0.5)  # at k = N every method has the base rate
    emb = dict(zip(result.methods, result.precision))["embedding"]
    assert emb[1] == 1.0  # sentence embeddings put a code document first for code targets


def test_document_embeddings_are_stored_once_per_text(fresh_store):
    from backend.nag.embedding import document_embeddings, embed

    docs = [Document("a", "Photosynthesis turns light into sugar."), Document("b", "def add(a, b): return a + b"),
            Document("c", "Photosynthesis turns light into sugar.")]
    first, hits = document_embeddings(docs)
    assert hits == 0 and first.shape == (3, 384)
    np.testing.assert_allclose(first, embed([d.text for d in docs]), atol=1e-6)
    again, hits = document_embeddings(docs[::-1])
    assert hits == 3
    np.testing.assert_array_equal(again, first[::-1])


def test_a_ranking_hands_the_documents_ranked_so_far_to_a_watcher_batch_by_batch(tmp_path, fresh_store,
                                                                                   monkeypatch):
    import importlib

    from tests.support.partials import PartialsSeen

    monkeypatch.setattr(extract_module, "length_batches", lambda lengths, batch_tokens: [[i] for i in
                                                                                         range(len(lengths))])
    # the module, not the function `rank` the package exports under its name
    monkeypatch.setattr(importlib.import_module("backend.nag.rank"), "SLICE_DOCS", 4)  # two slices of the eight documents
    seen = PartialsSeen()
    done = rank(load("tiny-llama"), _pool(tmp_path), _targets("science"), RankConfig(top_k=8, max_length=48),
                progress=seen).value
    # one extraction batch per document (the targets' profile's batches are not the pool's: not shown)
    assert seen.done() == [1, 2, 3, 4, 4, 5, 6, 7, 8] and {p.total for p in seen.partials} == {8}
    assert [len(p.value.to_frame()) for p in seen.partials] == seen.done()
    assert seen.partials[-1].value.ids == done.ids
    assert np.array_equal(seen.partials[-1].value.similarity, done.similarity)
