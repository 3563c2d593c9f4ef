"""The STaRK metrics and set scores on hand-made cases."""

from __future__ import annotations

import pytest

from graphraft.evaluation.metrics import (
    average,
    hit_at_k,
    recall_at_k,
    reciprocal_rank,
    score_question,
    set_scores,
)


def test_hits_recall_and_mrr_on_a_ranking():
    ranked = ["x", "a", "y", "z", "w", "b"]
    answers = {"a", "b"}
    assert hit_at_k(ranked, answers, 1) == 0.0
    assert hit_at_k(ranked, answers, 2) == 1.0 and hit_at_k(ranked, answers, 5) == 1.0
    assert recall_at_k(ranked, answers, 5) == 0.5 and recall_at_k(ranked, answers, 6) == 1.0
    assert reciprocal_rank(ranked, answers) == 0.5


def test_no_predictions_score_zero_and_are_not_dropped():
    empty = score_question([], [], {"a"})
    assert (empty.hit_at_1, empty.hit_at_5, empty.recall_at_20, empty.mrr, empty.f1) == (0, 0, 0, 0, 0)
    perfect = score_question(["a"], ["a"], {"a"})
    # averaged over both questions: the empty one pulls the mean down to a half
    assert average([empty, perfect])["hit_at_1"] == 0.5 and average([empty, perfect])["mrr"] == 0.5


def test_duplicate_predictions_count_once_at_their_first_position():
    ranked = ["x", "x", "x", "x", "x", "a"]
    assert hit_at_k(ranked, {"a"}, 5) == 1.0  # without duplicates, 'a' is second
    assert reciprocal_rank(ranked, {"a"}) == 0.5
    assert set_scores(["a", "a", "x"], {"a"}) == pytest.approx((0.5, 1.0, 2 / 3))


def test_ties_in_a_ranking_are_taken_in_the_order_given():
    # two methods with the same set ranked differently score differently on Hit@1 and MRR
    assert reciprocal_rank(["a", "b"], {"b"}) == 0.5 and reciprocal_rank(["b", "a"], {"b"}) == 1.0
    assert hit_at_k(["a", "b"], {"b"}, 1) == 0.0 and hit_at_k(["b", "a"], {"b"}, 1) == 1.0


def test_several_answers():
    ranked = [f"n{i}" for i in range(30)]
    answers = {"n0", "n10", "n25", "missing"}
    assert recall_at_k(ranked, answers, 20) == 0.5
    assert reciprocal_rank(ranked, answers) == 1.0
    precision, recall, f1 = set_scores(["n0", "n10", "n3"], answers)
    assert (precision, recall) == pytest.approx((2 / 3, 0.5)) and f1 == pytest.approx(4 / 7)


def test_an_empty_answer_set():
    assert hit_at_k(["a"], set(), 5) == 0.0 and recall_at_k(["a"], set(), 20) == 0.0
    assert reciprocal_rank(["a"], set()) == 0.0
    assert set_scores([], set()) == (1.0, 1.0, 1.0)  # nothing to find, nothing claimed
    assert set_scores(["a"], set()) == (0.0, 0.0, 0.0)


def test_the_average_of_no_questions_is_zero():
    assert set(average([]).values()) == {0.0}
