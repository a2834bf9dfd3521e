"""The gold answer text per QA type: one reading for the scorer and for the ranking app's reference answer."""

from __future__ import annotations

import pytest

from metrics.gold import gold_text

STEPS = ["Step 1: fine.", "Step 2: the wrong step.", "Incorrect reasoning explanation: the dose is tenfold."]


@pytest.mark.parametrize(
    ("qa_type", "record", "expected"),
    [
        ("true_false", {"answer": " True "}, "True"),  # case kept; the scorer lower-cases when it compares
        ("short_answer", {"answer": " Aspirin "}, "Aspirin"),  # the portal's name of the short type
        ("short", {"answer": "Aspirin"}, "Aspirin"),
        ("short_inverse", {"incorrect_explanation": " It is not viral. "}, "It is not viral."),
        ("multi_hop", {"answer": "Heparin"}, "Heparin"),
        ("multiple_choice", {"options": ["x", "y"], "correct_answer": "b"}, "y"),  # a letter in any case
        ("multiple_choice", {"options": ["x", "y"], "correct_answer": "y"}, "y"),
        # An option text that is also a letter: the scorer reads the letter first (the ranking copy took the text).
        ("multiple_choice", {"options": ["B", "A"], "correct_answer": "A"}, "B"),
        # List letters stand for their options, prefixes removed (the ranking copy showed "A, C").
        ("list", {"options": ["A. Iron", "B. Zinc", "C. Folate"], "answer": ["A", "C"]}, "Iron, Folate"),
        ("list", {"options": ["Iron", "Zinc"], "answer": ["Iron", "Zinc"]}, "Iron, Zinc"),
        ("multi_hop_inverse", {"incorrect_reasoning_step": STEPS}, "the dose is tenfold."),
        # "explanation" in any case, as the scorer matches it (the ranking copy needed a capital E).
        ("multi_hop_inverse", {"incorrect_reasoning_step": ["Step 2", "explanation: too low"]}, "too low"),
        ("multi_hop_inverse", {"incorrect_reasoning_step": "Step 2\nExplanation: too low\n"}, "too low"),
        # No explanation line: empty, the gold the scorer compares with (the ranking copy joined every step).
        ("multi_hop_inverse", {"incorrect_reasoning_step": ["Step 2: wrong."]}, ""),
        ("generic", {"answer": "发热，咳嗽"}, "发热，咳嗽"),
        ("generic", {"answer": "x", "target": "发热"}, "发热"),
    ],
)
def test_gold_text(qa_type, record, expected):
    assert gold_text(qa_type, record) == expected
