import numpy as np

from backend.models.sentence_embedder import DIM, get_embedder


def test_unit_vectors_in_input_order_and_the_memo_changes_nothing():
    embedder = get_embedder()
    texts = ["The cat sat on the mat.", "Stock markets fell sharply today.", "The cat sat on the mat."]
    embedder.clear_memo()
    fresh = embedder.embed(texts)
    assert fresh.shape == (3, DIM) and fresh.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fresh, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(fresh[0], fresh[2])
    np.testing.assert_array_equal(embedder.embed(texts[::-1]), fresh[::-1])  # from the memo
    assert fresh[0] @ fresh[1] < 0.5  # unrelated sentences are not near-duplicates


def test_one_shared_instance_with_a_stable_fingerprint():
    assert get_embedder() is get_embedder()
    assert len(get_embedder().fingerprint) == 16
