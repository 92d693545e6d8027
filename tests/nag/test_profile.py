"""Profiles, similarity on hand-computed examples, the budget rule, deterministic ties, multi-target shares."""
import numpy as np
import pytest

from backend.errors import UserError
from backend.nag.profile import build_profile, similarity, top_profile_neurons
from backend.nag.select import order_by_distance, precision_at_k, select


def test_profile_rows_are_frequencies_that_sum_to_one():
    tops = np.array([[[0, 1], [2, 3]],     # doc 0: layer 0 {0,1}, layer 1 {2,3}
                     [[1, 2], [2, 0]]])    # doc 1: layer 0 {1,2}, layer 1 {2,0}
    w = build_profile(tops, n_neurons=4)
    assert w.shape == (2, 4)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(w[0], [0.25, 0.5, 0.25, 0.0])
    np.testing.assert_allclose(w[1], [0.25, 0.0, 0.5, 0.25])


def test_single_target_document_profile_is_its_own_top_k():
    w = build_profile(np.array([[[3, 1, 0]]]), n_neurons=5)
    np.testing.assert_allclose(w[0], [1 / 3, 1 / 3, 0, 1 / 3, 0])
    with pytest.raises(UserError):
        build_profile(np.zeros((0, 1, 3), dtype=int), 5)


def test_similarity_hand_computed():
    w = np.array([[0.25, 0.5, 0.25, 0.0],
                  [0.25, 0.0, 0.5, 0.25]])
    docs = np.array([[[1, 0], [2, 3]],     # layer 0: .5 + .25 = .75; layer 1: .5 + .25 = .75 -> .75
                     [[3, 2], [1, 0]],     # layer 0: 0 + .25 = .25; layer 1: 0 + .25 = .25 -> .25
                     [[1, 2], [0, 2]]])    # layer 0: .75; layer 1: .75 -> .75 (tie with doc 0)
    np.testing.assert_allclose(similarity(docs, w), [0.75, 0.25, 0.75])
    assert similarity(docs, w)[0] == similarity(docs[:, :, ::-1], w)[0]  # order of the top-K is irrelevant


def test_ties_are_broken_by_id_whatever_the_input_order():
    distance = np.array([0.3, 0.1, 0.3, 0.1 + 1e-15])
    ids = ["d", "c", "a", "b"]
    assert [ids[i] for i in order_by_distance(distance, ids)] == ["b", "c", "a", "d"]
    perm = np.array([2, 0, 3, 1])
    again = order_by_distance(distance[perm], [ids[i] for i in perm])
    assert [ids[perm[i]] for i in again] == ["b", "c", "a", "d"]


def test_budget_selects_a_prefix_up_to_the_token_fraction():
    distance = np.array([0.1, 0.2, 0.3, 0.4])
    tokens = np.array([10, 20, 30, 40])      # 100 tokens, budget 0.35 -> 35 tokens
    chosen = select(distance, ["a", "b", "c", "d"], tokens, 0.35)
    assert chosen.budget_tokens == 35
    assert list(chosen.selected_by) == [0, 0, -1, -1] and chosen.used_tokens == (30,)
    assert list(chosen.order) == [0, 1, 2, 3]
    assert (select(distance, list("abcd"), tokens, 1.0).selected_by == 0).all()
    assert (select(distance, list("abcd"), tokens, 0.05).selected_by == -1).all()  # first doc does not fit
    with pytest.raises(UserError):
        select(distance, list("abcd"), tokens, 0.0)


def test_multi_target_each_target_gets_its_share():
    # target 0 prefers a, b; target 1 prefers c, d; each owns 20 of 40 budget tokens
    distance = np.array([[0.1, 0.2, 0.8, 0.9, 0.5],
                         [0.9, 0.8, 0.1, 0.2, 0.5]])
    tokens = np.array([10, 10, 10, 10, 60])
    chosen = select(distance, list("abcde"), tokens, 0.4)
    assert list(chosen.selected_by) == [0, 0, 1, 1, -1]
    assert chosen.used_tokens == (20, 20)
    # a document both want goes to the first target; the second takes its next best
    distance2 = np.array([[0.1, 0.5, 0.6], [0.1, 0.2, 0.9]])
    chosen2 = select(distance2, list("abc"), np.array([10, 10, 10]), 2 / 3)
    assert list(chosen2.selected_by) == [0, 1, -1]


def test_precision_at_k_and_top_profile_neurons():
    assert precision_at_k(np.array([2, 0, 1]), np.array([True, False, True]), (1, 2, 3, 10)) == \
        {1: 1.0, 2: 1.0, 3: 2 / 3, 10: 2 / 3}
    w = np.array([[0.2, 0.4, 0.4, 0.0]])
    assert top_profile_neurons(w, 2).tolist() == [[1, 2]]
