"""Hallucination spans: soft and hard labels and SHROOM's scores, hand-computed, including the edge cases."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from metrics.spans import check_span, hard_labels, merge_spans, score_cor, score_iou, soft_labels, soft_vector


def test_soft_labels_share_of_annotators_as_runs():
    # A marks 0-4, B 2-6, C nothing, over 10 characters
    runs = soft_labels([[(0, 4)], [(2, 6)], []], 10)
    assert runs == [
        {"start": 0, "end": 2, "prob": pytest.approx(1 / 3)},
        {"start": 2, "end": 4, "prob": pytest.approx(2 / 3)},
        {"start": 4, "end": 6, "prob": pytest.approx(1 / 3)},
    ]
    assert hard_labels(runs) == [[2, 4]]


def test_an_annotator_counts_once_per_character_even_with_overlapping_marks():
    assert soft_labels([[(0, 3), (1, 5)], [(4, 6)]], 6) == [
        {"start": 0, "end": 4, "prob": 0.5},
        {"start": 4, "end": 5, "prob": 1.0},
        {"start": 5, "end": 6, "prob": 0.5},
    ]


def test_no_annotators_or_no_marks_give_no_labels():
    assert soft_labels([], 5) == []
    assert soft_labels([[], []], 5) == []
    assert hard_labels([]) == []


def test_hard_labels_merge_touching_runs_and_sort():
    soft = [
        {"start": 6, "end": 8, "prob": 0.9},
        {"start": 3, "end": 5, "prob": 0.8},
        {"start": 0, "end": 3, "prob": 0.6},
    ]
    assert hard_labels(soft) == [[0, 5], [6, 8]]
    # exactly one half is not a majority
    assert hard_labels([{"start": 0, "end": 2, "prob": 0.5}]) == []


def test_merge_spans_and_checks():
    assert merge_spans([(5, 7), (0, 2), (2, 3), (6, 9)]) == [(0, 3), (5, 9)]
    assert check_span(0, 3, 3) == (0, 3)
    for bad in ((2, 2), (-1, 2), (0, 4), (3, 1), (0.5, 2), (True, 2)):
        with pytest.raises(ValueError):
            check_span(*bad, 3)


def test_iou_by_hand_and_edges():
    assert score_iou([[0, 5]], [[3, 8]]) == pytest.approx(2 / 8)
    assert score_iou([], []) == 1.0  # neither side has a hallucination
    assert score_iou([[0, 2]], []) == 0.0
    assert score_iou([], [[0, 2]]) == 0.0
    assert score_iou([[0, 2], [2, 4]], [[0, 4]]) == 1.0  # touching spans are the same characters


def test_correlation_by_hand():
    # vectors [.5, .5, 0, 0] and [1, 0, 0, 0]: ranks [3.5, 3.5, 1.5, 1.5] and [4, 2, 2, 2] -> 2 / sqrt(12)
    assert score_cor([{"start": 0, "end": 2, "prob": 0.5}], [{"start": 0, "end": 1, "prob": 1.0}], 4) == pytest.approx(
        2 / 12**0.5
    )


def test_correlation_with_constant_vectors_follows_the_official_scorer():
    some = [{"start": 0, "end": 2, "prob": 0.5}]
    assert score_cor([], [], 4) == 1.0  # no hallucination on either side
    assert score_cor([], some, 4) == 0.0
    assert score_cor(some, [], 4) == 0.0
    # everything marked at probability 1 is a constant vector too: both constant -> 1.0
    assert score_cor([], [{"start": 0, "end": 4, "prob": 1.0}], 4) == 1.0


def test_later_runs_overwrite_earlier_ones_as_the_scorer_fills_vectors():
    assert soft_vector([{"start": 0, "end": 4, "prob": 0.2}, {"start": 1, "end": 2, "prob": 0.9}], 4).tolist() == [
        0.2,
        0.9,
        0.2,
        0.2,
    ]


def test_offsets_count_characters_in_chinese_and_astral_text():
    text = "阿司匹林可以退烧𝛼。"  # 10 characters; the alpha is one character but two UTF-16 units
    assert len(text) == 10
    runs = soft_labels([[(4, 9)], [(6, 10)]], len(text))
    assert runs == [
        {"start": 4, "end": 6, "prob": 0.5},
        {"start": 6, "end": 9, "prob": 1.0},
        {"start": 9, "end": 10, "prob": 0.5},
    ]
    assert text[6:9] == "退烧𝛼"
    assert hard_labels(runs) == [[6, 9]]


def _runs(rng, length: int) -> list[dict]:
    """Random soft labels: overlapping runs (later ones overwrite), shares from a few levels, sometimes none."""
    runs = []
    for _ in range(int(rng.integers(0, 6))):
        start = int(rng.integers(0, length))
        end = int(rng.integers(start + 1, length + 1))
        runs.append(
            {"start": start, "end": end, "prob": float(rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0, rng.random()]))}
        )
    return runs


def test_correlation_is_scipys_spearman_over_the_character_vectors():
    """The stretch-wise computation gives the number the published scorer's way gives: scipy's Spearman over the two
    per-character vectors, constant vectors handled as the module says. 2,000 random pairs, lengths 1 to 1,500."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(2000):
        length = int(rng.integers(1, 1500))
        reference, predicted = _runs(rng, length), _runs(rng, length)
        ref, pred = soft_vector(reference, length), soft_vector(predicted, length)
        ref_levels, pred_levels = len(set(np.round(ref, 8).tolist())), len(set(np.round(pred, 8).tolist()))
        if ref_levels <= 1 or pred_levels <= 1:
            expected = float(ref_levels == pred_levels)
        else:
            expected = float(spearmanr(ref, pred).statistic)
            checked += 1
        assert score_cor(reference, predicted, length) == pytest.approx(expected, abs=1e-12)
    assert checked > 1000  # most pairs went through the ranks, not the constant rule
