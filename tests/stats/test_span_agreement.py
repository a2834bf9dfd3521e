"""Span agreement: pairwise character IoU by hand, and alpha equal to the project's alpha on the same units."""

import numpy as np
import pandas as pd
import pytest

from stats.agreement import krippendorff_alpha
from stats.spans import answer_iou, span_agreement

A = [1, 1, 1, 1, 0, 0]
B = [0, 0, 1, 1, 1, 1]
C = [0, 0, 0, 0, 0, 0]


def test_pairwise_iou_by_hand():
    assert answer_iou(np.array([A, B])) == pytest.approx(2 / 6)
    # (A,B) 1/3, (A,C) 0, (B,C) 0
    assert answer_iou(np.array([A, B, C])) == pytest.approx(1 / 9)
    assert answer_iou(np.array([C, C])) == 1.0  # neither marked anything: SHROOM's convention
    assert answer_iou(np.array([A])) is None


def test_alpha_over_characters_equals_the_projects_alpha_on_the_same_units():
    answers = [np.array([A, B, C], dtype=bool), np.array([[1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)]
    result = span_agreement(answers, n_resamples=200)
    rows = [
        {"item": f"{a}-{c}", "annotator": f"r{r}", "value": int(marks[r, c])}
        for a, marks in enumerate(answers)
        for r in range(marks.shape[0])
        for c in range(marks.shape[1])
    ]
    expected = krippendorff_alpha(pd.DataFrame(rows), level="nominal", n_resamples=0).value
    assert result["krippendorff_alpha"].value == pytest.approx(expected)
    assert result["pairwise_iou"].value == pytest.approx((1 / 9 + 1 / 2) / 2)
    assert result["pairwise_iou"].ci is not None and result["krippendorff_alpha"].ci is not None


def test_undefined_with_a_reason():
    single = span_agreement([np.array([A], dtype=bool)])
    assert single["pairwise_iou"].value is None
    assert "two or more physicians" in single["krippendorff_alpha"].undefined_reason
    assert "1 answer with fewer than two annotators" in single["pairwise_iou"].notes[0]
    nothing = span_agreement([np.array([C, C], dtype=bool)], n_resamples=0)
    assert nothing["pairwise_iou"].value == 1.0
    assert nothing["krippendorff_alpha"].value is None
    assert "no disagreement is expected" in nothing["krippendorff_alpha"].undefined_reason
