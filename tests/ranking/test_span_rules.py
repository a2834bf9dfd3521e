"""The span rule (ranking.rules.spans): hand-computed cases, offsets in characters (code points)."""

from __future__ import annotations

import pytest

from ranking.rules.spans import MAX_NOTE, MAX_SPANS, MarkedSpan, derived_label, spans_check

SLOTS = ["A", "B"]
LENGTHS = {"A": 20, "B": 10}


def check(spans, *, lengths=LENGTHS, every_answer=True):
    return spans_check(slots=SLOTS, text_lengths=lengths, spans=spans, every_answer=every_answer)


def span(start, end, kind="extrinsic", **extra):
    return {"start": start, "end": end, "kind": kind, **extra}


def test_valid_spans_pass_sorted_and_an_empty_list_means_read_and_clean():
    parsed, problems = check({"A": [span(10, 12, note=" dose "), span(0, 3, "intrinsic")], "B": []})
    assert problems == []
    assert parsed == {"A": [MarkedSpan(0, 3, "intrinsic"), MarkedSpan(10, 12, "extrinsic", "dose")], "B": []}


def test_an_answer_left_out_is_not_recorded_as_clean():
    _, problems = check({"A": []})
    assert problems == [
        "answer B: mark the hallucinated words, or confirm there is no hallucination (tick “No hallucination in "
        "this answer”; in the API an empty list)"
    ]
    assert check({"A": []}, every_answer=False)[1] == []  # a draft may be unfinished


@pytest.mark.parametrize(
    ("spans", "problem"),
    [
        ({"A": [span(0, 21)], "B": []}, "answer A, mark 1: the span 0-21 is not inside the text (0-20) or is empty"),
        ({"A": [span(5, 5)], "B": []}, "answer A, mark 1: the span 5-5 is not inside the text (0-20) or is empty"),
        ({"A": [span(-1, 2)], "B": []}, "answer A, mark 1: the span -1-2 is not inside the text (0-20) or is empty"),
        ({"A": [], "B": [span(0, 2), span(True, 3)]}, "answer B, mark 2: start and end must be whole numbers"),
        ({"A": [span("1", 3)], "B": []}, "answer A, mark 1: start and end must be whole numbers"),
        ({"A": [span(1.0, 3)], "B": []}, "answer A, mark 1: start and end must be whole numbers"),
        ({"A": [span(0, 2, "made-up")], "B": []}, "answer A, mark 1: kind 'made-up' is not one of intrinsic"),
        ({"A": [span(0, 2, note=7)], "B": []}, "answer A, mark 1: the note must be text"),
        ({"A": [span(0, 2, note="x" * 1001)], "B": []}, f"longer than {MAX_NOTE} characters (1001)"),
        ({"A": ["0-2"], "B": []}, "answer A, mark 1: must be an object with start, end and kind"),
        ({"A": {"start": 0}, "B": []}, "answer A: its marks must be a list"),
        ({"A": [span(0, 1)] * (MAX_SPANS + 1), "B": []}, f"answer A: at most {MAX_SPANS} marks per answer (got 201)"),
        ({"A": [], "B": [], "C": []}, "spans: unknown answer(s) C"),
        (["A"], "spans must be an object keyed by answer letter"),
    ],
)
def test_bad_spans_are_refused_naming_the_answer_and_the_mark(spans, problem):
    _, problems = check(spans)
    assert any(problem in p for p in problems), problems


def test_overlapping_and_touching_marks_of_one_kind_are_merged_with_their_notes():
    parsed, problems = check(
        {"A": [span(0, 4, note="a"), span(4, 6), span(3, 5, note="b"), span(8, 9, note="a")], "B": []}
    )
    assert problems == []
    assert parsed["A"] == [MarkedSpan(0, 6, "extrinsic", "a / b"), MarkedSpan(8, 9, "extrinsic", "a")]


@pytest.mark.parametrize("second", [span(3, 8, "intrinsic"), span(5, 8, "intrinsic")])  # overlapping, touching
def test_marks_of_different_kinds_that_overlap_or_touch_are_refused(second):
    parsed, problems = check({"A": [span(0, 5), second], "B": []})
    assert problems == [
        "answer A, marks 1 and 2 overlap or touch but have different kinds (extrinsic, intrinsic): give them one "
        "kind, or leave a gap between them"
    ]
    assert parsed["A"] == []


def test_a_mark_inside_a_long_mark_of_another_kind_is_refused_even_after_a_gap():
    _, problems = check({"A": [span(0, 15, "other"), span(2, 3), span(10, 12, "intrinsic")], "B": []})
    assert len(problems) == 2 and "marks 1 and 2" in problems[0] and "marks 1 and 3" in problems[1]


def test_offsets_count_characters_of_chinese_text_and_emoji_not_bytes_or_utf16_units():
    text = "患者😀服用阿司匹林100mg"  # the emoji is one character (two UTF-16 units, four UTF-8 bytes)
    assert len(text) == 14
    parsed, problems = spans_check(slots=["A"], text_lengths={"A": len(text)}, spans={"A": [span(3, 9)]})
    assert problems == [] and text[3:9] == "服用阿司匹林"
    assert parsed["A"] == [MarkedSpan(3, 9, "extrinsic")]
    _, problems = spans_check(slots=["A"], text_lengths={"A": len(text)}, spans={"A": [span(3, 15)]})
    assert problems == ["answer A, mark 1: the span 3-15 is not inside the text (0-14) or is empty"]


def test_the_item_label_is_the_kind_covering_most_characters_ties_to_the_more_serious():
    assert derived_label([]) == (False, "")
    assert derived_label([MarkedSpan(0, 2, "intrinsic"), MarkedSpan(5, 10, "other")]) == (True, "other")
    assert derived_label([MarkedSpan(0, 3, "other"), MarkedSpan(5, 8, "extrinsic")]) == (True, "extrinsic")
    tie = [MarkedSpan(0, 2, "extrinsic"), MarkedSpan(4, 5, "intrinsic"), MarkedSpan(7, 8, "intrinsic")]
    assert derived_label(tie) == (True, "intrinsic")
