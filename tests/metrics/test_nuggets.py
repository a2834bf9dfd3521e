"""Nugget scores, the sentence splitter and the embedding matcher (metrics/nuggets.py): known answers by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.nuggets import (
    DEFAULT_PARTIAL_THRESHOLD,
    DEFAULT_SUPPORT_THRESHOLD,
    SCORE_LABELS,
    SCORE_NAMES,
    EmbeddingMatcher,
    Nugget,
    answer_scores,
    sentence_encoder,
    split_sentences,
)

V1 = Nugget("v1", "Thiazides are first line.", "vital")
V2 = Nugget("v2", "ACE inhibitors are first line.", "vital")
O1 = Nugget("o1", "Cut salt.", "okay")
A1 = Nugget("a1", "Beta blockers for everyone.", "avoid")
A2 = Nugget("a2", "Stop all drugs.", "avoid")


# ------------------------------------------------------------------------------------------ scores


def test_scores_with_partial_labels_and_an_avoid_hit():
    scores = answer_scores(
        [V1, V2, O1, A1, A2],
        {"v1": "support", "v2": "partial", "o1": "not_support", "a1": "support", "a2": "partial"},
        sentence_marks=[False, True, False, False],
    )
    # vital+okay credits 1, 0.5, 0 → all 1.5/3; vital 1.5/2; strict: partial is 0 → 1/3 and 1/2.
    assert scores["all"] == pytest.approx(0.5)
    assert scores["vital"] == pytest.approx(0.75)
    assert scores["all_strict"] == pytest.approx(1 / 3)
    assert scores["vital_strict"] == pytest.approx(0.5)
    assert scores["completeness"] == pytest.approx(2 / 3)  # support or partial: v1, v2 of v1, v2, o1
    assert scores["avoid_hits"] == 1  # a1 supported; a2 only partly: not a hit
    assert scores["precision"] == pytest.approx(0.75)  # 3 of 4 sentences not marked
    assert set(scores) == set(SCORE_NAMES) == set(SCORE_LABELS)


def test_item_without_vital_nugget_has_no_vital_score():
    scores = answer_scores([O1, Nugget("o2", "Walk daily.", "okay")], {"o1": "partial", "o2": "support"})
    assert scores["vital"] is None and scores["vital_strict"] is None
    assert scores["all"] == pytest.approx(0.75)
    assert scores["all_strict"] == pytest.approx(0.5)
    assert scores["completeness"] == 1.0


def test_unlabelled_nugget_counts_as_not_supported():
    scores = answer_scores([V1, V2], {"v1": "support"})
    assert scores["vital"] == 0.5 and scores["completeness"] == 0.5


def test_no_avoid_nugget_means_no_avoid_hit_and_no_marks_no_precision():
    """An answer to an item without avoid nuggets hit none of them: 0 is a count, not an undefined share (it was
    None, and a system's mean left those answers out: two answers hitting one each and a clean third read as
    "1.0 hits per answer")."""
    scores = answer_scores([V1], {"v1": "support"})
    assert scores["avoid_hits"] == 0 and isinstance(scores["avoid_hits"], int)
    assert scores["precision"] is None


def test_answer_with_no_sentences_has_no_precision():
    assert answer_scores([V1], {}, sentence_marks=[])["precision"] is None


def test_only_avoid_nuggets_or_none_at_all_gives_none_not_nan():
    only_avoid = answer_scores([A1], {"a1": "support"})
    assert only_avoid["avoid_hits"] == 1
    for name in ("all", "vital", "all_strict", "vital_strict", "completeness"):
        assert only_avoid[name] is None
    empty = answer_scores([], {})
    assert empty["avoid_hits"] == 0 and all(v is None for name, v in empty.items() if name != "avoid_hits")
    assert not any(isinstance(v, float) and math.isnan(v) for v in empty.values())


@pytest.mark.parametrize(
    ("nuggets", "labels", "message"),
    [
        ([Nugget("x", "t", "critical")], {}, "importance 'critical'"),
        ([V1], {"v1": "yes"}, "label 'yes'"),
        ([V1], {"zz": "support"}, "nugget 'zz'"),
    ],
)
def test_bad_scores_input_is_refused(nuggets, labels, message):
    with pytest.raises(ValueError, match=message):
        answer_scores(nuggets, labels)


# ------------------------------------------------------------------------------------------ sentences


def test_split_sentences_english_lines_and_bullets():
    text = "Aspirin lowers fever. Dr. Smith agreed.\n- Avoid it in children.\n2. Give 2.5 mg daily.\n\n   "
    assert split_sentences(text) == [
        "Aspirin lowers fever.",
        "Dr. Smith agreed.",
        "Avoid it in children.",
        "Give 2.5 mg daily.",
    ]


def test_split_sentences_chinese():
    assert split_sentences("血糖偏高。建议复查！需要用药吗？请咨询医生；谢谢") == [
        "血糖偏高。",
        "建议复查！",
        "需要用药吗？",
        "请咨询医生；",
        "谢谢",
    ]


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t", "-  \n"])
def test_split_sentences_empty(text):
    assert split_sentences(text) == []


def test_split_sentences_is_stable():
    text = "One. Two!\n* Three?\r\nFour 。五。"
    assert split_sentences(text) == split_sentences(text) == ["One.", "Two!", "Three?", "Four 。", "五。"]


# ------------------------------------------------------------------------------------------ matcher

# Hand-made unit vectors: each text maps to a direction, so every cosine is known exactly.
E = np.eye(4)


def fake_encode(table):
    def encode(texts):
        return np.array([table[t] for t in texts], dtype=float)

    return encode


def unit(*parts):
    v = np.asarray(parts, dtype=float)
    return v / np.linalg.norm(v)


def test_verbatim_nugget_sentence_is_support_and_unrelated_answer_not():
    table = {"Thiazides are first line.": E[0], "Nothing here.": E[1]}
    matcher = EmbeddingMatcher(fake_encode(table))
    [hit] = matcher.match([V1], "Thiazides are first line.")
    assert (hit.label, hit.sentence_index, hit.sentence, hit.similarity) == (
        "support",
        0,
        "Thiazides are first line.",
        pytest.approx(1.0),
    )
    [miss] = matcher.match([V1], "Nothing here.")
    assert miss.label == "not_support" and miss.similarity == pytest.approx(0.0)


def test_thresholds_give_support_partial_not_support():
    # cosines 0.8, 0.65, 0.5 with the defaults 0.75 / 0.6
    table = {
        "A.": E[0],
        "B.": E[1],
        "C.": E[2],
        "sa.": unit(0.8, 0, 0, 0.6),
        "sb.": unit(0, 0.65, 0, math.sqrt(1 - 0.65**2)),
        "sc.": unit(0, 0, 0.5, math.sqrt(0.75)),
    }
    nuggets = [Nugget("a", "A.", "vital"), Nugget("b", "B.", "okay"), Nugget("c", "C.", "avoid")]
    matches = EmbeddingMatcher(fake_encode(table)).match(nuggets, "sa. sb. sc.")
    assert [m.label for m in matches] == ["support", "partial", "not_support"]
    assert [m.sentence_index for m in matches] == [0, 1, 2]
    assert [round(m.similarity, 6) for m in matches] == [0.8, 0.65, 0.5]


def test_two_nuggets_competing_for_one_sentence_are_matched_one_to_one():
    # Both nuggets are closest to S1 (n1: 0.75 vs 0.7; n2: 0.65 vs 0.1). Greedy, n1 would take S1 and leave n2
    # with S2 (0.75 + 0.1 = 0.85); the best total is n1→S2, n2→S1 (0.7 + 0.65 = 1.35).
    n1, n2 = Nugget("n1", "N1", "vital"), Nugget("n2", "N2", "vital")

    def sentence(c1, c2):
        return np.array([c1, c2, math.sqrt(1 - c1**2 - c2**2)])

    table = {
        "N1": np.array([1.0, 0, 0]),
        "N2": np.array([0, 1.0, 0]),
        "S1.": sentence(0.75, 0.65),
        "S2.": sentence(0.7, 0.1),
    }
    first, second = EmbeddingMatcher(fake_encode(table)).match([n1, n2], "S1. S2.")
    assert (first.sentence_index, second.sentence_index) == (1, 0)
    assert (first.similarity, second.similarity) == (pytest.approx(0.7), pytest.approx(0.65))
    assert (first.label, second.label) == ("partial", "partial")
    assert (first.sentence, second.sentence) == ("S2.", "S1.")


def test_more_nuggets_than_sentences_leaves_the_weakest_unmatched():
    table = {"N1": E[0], "N2": E[1], "Only.": unit(0.9, 0.3, 0, 0)}
    n1, n2 = Nugget("n1", "N1", "vital"), Nugget("n2", "N2", "okay")
    first, second = EmbeddingMatcher(fake_encode(table)).match([n1, n2], "Only.")
    assert first.label == "support" and first.sentence_index == 0
    assert (second.label, second.sentence_index, second.sentence, second.similarity) == ("not_support", None, "", None)


def test_empty_answer_supports_nothing():
    [m] = EmbeddingMatcher(fake_encode({"N1": E[0]})).match([Nugget("n1", "N1", "vital")], "   ")
    assert (m.label, m.sentence_index, m.similarity) == ("not_support", None, None)


def test_match_many_encodes_once_and_equals_match():
    table = {"N1": E[0], "N2": E[1], "S1.": unit(1, 1, 0, 0), "S2.": E[1]}
    calls = []

    def encode(texts):
        calls.append(list(texts))
        return fake_encode(table)(texts)

    matcher = EmbeddingMatcher(encode)
    nuggets = [Nugget("n1", "N1", "vital"), Nugget("n2", "N2", "okay")]
    many = matcher.match_many([(nuggets, "S1. S2."), (nuggets, "S2."), (nuggets, "")])
    assert len(calls) == 1 and sorted(calls[0]) == ["N1", "N2", "S1.", "S2."]  # each distinct text once
    assert many == [matcher.match(nuggets, a) for a in ("S1. S2.", "S2.", "")]
    calls.clear()
    assert matcher.match_many([(nuggets, "S1. S2."), (nuggets, "S2."), (nuggets, "")], chunk_size=2) == many
    assert len(calls) == 2  # one encoder call per chunk of answers


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"support_threshold": 1.2}, "support_threshold"),
        ({"partial_threshold": -0.1}, "partial_threshold"),
        ({"partial_threshold": float("nan")}, "partial_threshold"),
        ({"support_threshold": 0.5, "partial_threshold": 0.7}, "partial_threshold"),
    ],
)
def test_bad_thresholds_name_the_parameter(kwargs, param):
    with pytest.raises(ValueError, match=param):
        EmbeddingMatcher(fake_encode({}), **kwargs)


def test_default_thresholds():
    assert (DEFAULT_SUPPORT_THRESHOLD, DEFAULT_PARTIAL_THRESHOLD) == (0.75, 0.6)


def test_real_model_verbatim_sentence_is_support_and_unrelated_is_not(encoder):
    matcher = EmbeddingMatcher(sentence_encoder(encoder))
    nuggets = [
        Nugget("n1", "Intramuscular epinephrine is the first-line treatment for anaphylaxis.", "vital"),
        Nugget("n2", "Metformin is the first-line drug for type 2 diabetes.", "okay"),
    ]
    answer = "Call for help. Intramuscular epinephrine is the first-line treatment for anaphylaxis."
    first, second = matcher.match(nuggets, answer)
    assert first.label == "support" and first.sentence_index == 1 and first.similarity > 0.99
    assert second.label == "not_support"
    [unrelated] = matcher.match(nuggets[:1], "The weather in Lisbon is mild in October.")
    assert unrelated.label == "not_support"


def test_sentence_encoder_rows_are_unit_length(encoder):
    vectors = sentence_encoder(encoder)(["Aspirin lowers fever.", "二甲双胍是一线用药。"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
