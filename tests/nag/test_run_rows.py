"""A NAG ranking reads and writes one artifact per document, and is still one run in the Runs list; deleting it
removes the document features only it used."""
from backend.models import load
from backend.nag import RankConfig, rank
from backend.store import count_runs, delete_runs, list_runs, status
from backend.store.origin import COMPUTED
from tests.nag.test_rank import _pool, _targets


def test_one_ranking_is_one_run_and_its_document_features_are_its_uses(tmp_path, fresh_store):
    handle = load("tiny-llama")
    pool = _pool(tmp_path)  # 8 documents
    config = RankConfig(top_k=8, max_length=48)
    first = rank(handle, pool, _targets("science"), config)
    assert count_runs() == 1 and list(list_runs()["action"]) == ["rank"]
    assert status().by_feature["nag"][COMPUTED] == 1 + 8 + 3  # the ranking, 8 pool and 3 target documents

    second = rank(handle, pool, _targets("code"), config)  # reuses the 8 pool documents' features
    assert second.value.cache_hits == 8 and count_runs() == 2
    done = delete_runs([first.run_id])
    assert len(done.artifacts) == 1 + 3 and done.kept == 8  # the pool's features stay: the second ranking uses them
    assert rank(handle, pool, _targets("code"), config).cached
