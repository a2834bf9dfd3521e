"""What the report pages and plots show, checked on the data that goes into each figure (not pixels)."""

from __future__ import annotations

import warnings

import pytest

from analytics.presentation.charts import report_chart, task1_chart
from analytics.presentation.headlines import headline
from analytics.presentation.tables import human_label, pair_rows, report_csv, system_label
from stats import fonts, plots
from stats.results import StatResult, undefined


def _stat(value, n, reason=None, ci=None):
    if value is None:
        return undefined("krippendorff_alpha", reason or "only one item has two or more ratings", n_items=n).to_dict()
    low, high = ci or (None, None)
    return StatResult("krippendorff_alpha", value, low, high, n_items=n, n_raters=2).to_dict()


def _block(alpha, n):
    return {
        "verdict": {
            "krippendorff_alpha": alpha,
            "percent_agreement": StatResult("percent_agreement", 0.82, n_items=n, n_raters=2).to_dict(),
            "cohen_kappa": StatResult("cohen_kappa", 0.61, n_items=n, n_raters=2).to_dict(),
        },
        "relevance_ordinal": {"krippendorff_alpha": alpha},
        "n_items": n,
    }


VETTING = {
    "overall": _block(_stat(0.61, 55, ci=(0.4, 0.8)), 55),
    "by_type": {
        "short_answer": _block(_stat(0.7, 17), 17),
        "true_false": _block(_stat(0.5, 3), 3),
        "list": _block(_stat(None, 1), 1),
    },
    "pairs": [
        {
            "pair": ["ada", "bo"],
            "n_items": 40,
            "too_few_items": False,
            "verdict_percent_agreement": StatResult("percent_agreement", 0.9, n_items=40).to_dict(),
            "verdict_cohen_kappa": StatResult("cohen_kappa", 0.7, n_items=40).to_dict(),
            "relevance_cohen_kappa_quadratic": StatResult("cohen_kappa_quadratic", 0.8, n_items=40).to_dict(),
        },
        {
            "pair": ["ada", "cy"],
            "n_items": 1,
            "too_few_items": True,
            "verdict_percent_agreement": StatResult("percent_agreement", 1.0, n_items=1).to_dict(),
            "verdict_cohen_kappa": undefined("cohen_kappa", "fewer than two items", n_items=1).to_dict(),
            "relevance_cohen_kappa_quadratic": undefined("cohen_kappa_quadratic", "fewer than two items").to_dict(),
        },
    ],
    "min_pair_items": 10,
}


def test_every_agreement_bar_carries_the_items_it_rests_on():
    """Every bar used to say n=0: the stored counts were dropped when results were read back for plotting."""
    chart = report_chart("vetting_agreement", VETTING, "verdict_alpha_by_type")
    # QA types in the benchmark's order whatever order the stored keys come back in.
    assert [(b.label, b.n) for b in chart.bars] == [
        ("All QA types", 55),
        ("True / false", 3),
        ("List", 1),
        ("Short answer", 17),
    ]
    assert chart.bars[0].ci == (0.4, 0.8)
    assert chart.bars[2].value is None and chart.bars[2].note == "only one item has two or more ratings"
    assert "_" not in " ".join(b.label for b in chart.bars)


def test_pair_plot_table_and_csv_mark_pairs_with_too_few_items():
    chart = report_chart("vetting_agreement", VETTING, "pair_kappa")
    assert [(b.label, b.n, b.value) for b in chart.bars] == [("ada & bo", 40, 0.7), ("ada & cy *", 1, None)]
    rows = pair_rows(VETTING)
    assert [r["too_few_items"] for r in rows] == [False, True]
    csv_lines = report_csv(VETTING).splitlines()
    assert csv_lines[0].endswith(",pair,note")
    assert "pairs,verdict_cohen_kappa,0.7,,,40,2,,ada & bo," in csv_lines
    assert any(
        line.startswith("pairs,verdict_cohen_kappa,,,,1,2,fewer than two items,ada & cy,fewer than 10")
        for line in csv_lines
    )


def test_vetting_headline_reads_the_numbers():
    head = headline("vetting_agreement", VETTING)
    assert head["reading"] == (
        "Reviewers gave the same verdict on 82 % of 55 doubly reviewed items (Cohen's κ 0.61, substantial agreement)."
    )
    assert head["figures"][0] == {"label": "Same verdict", "value": "82 %", "detail": "n = 55 items"}


STUDY = {
    "n_questions": 12,
    "n_judgements": 108,
    "ranking_agreement": {"kendall_w": undefined("kendall_w", "every ranking tied").to_dict()},
    "human_leaderboard": [
        {"system": "reference", "strength": 0.2, "strength_ci": [0.0, 0.4], "is_reference": True, "n_questions": 12},
        {"system": "GOOD", "strength": 1.1, "strength_ci": [0.8, 1.4], "is_reference": False, "n_questions": 12},
        {"system": "WEAK", "strength": -1.3, "strength_ci": None, "is_reference": False, "n_questions": 12},
    ],
    "correlation": {  # in jsonb's key order, not the metric list's
        "meteor": {"undefined_reason": "no scores for this metric: score the study's systems first"},
        "semantic": {"segment_tau_b": StatResult("segment_tau_b", 0.4, n_items=12).to_dict()},
    },
    "scatter": {"semantic": {"systems": ["GOOD", "WEAK"], "human": [-1.2, -2.6], "metric": [0.8, 0.3]}},
}


def test_leaderboard_names_the_reference_once_and_puts_the_best_first():
    chart = report_chart("study", STUDY, "human_leaderboard")
    assert [(b.label, b.n, b.highlight) for b in chart.bars] == [
        ("GOOD", 12, False),
        ("reference", 12, True),
        ("WEAK", 12, False),
    ]
    assert system_label("gold-answers", True) == "gold-answers (reference answer)"


def test_study_plots_and_headline_explain_undefined_values_in_words():
    chart = report_chart("study", STUDY, "metric_correlation")
    assert [(b.label, b.value, b.n) for b in chart.bars] == [("Semantic", 0.4, 12), ("METEOR", None, None)]
    assert chart.bars[1].note.startswith("no scores for this metric")
    scatter = report_chart("study", STUDY, "scatter_semantic")
    assert scatter.ylabel == "Mean Semantic score" and len(scatter.points) == 2
    reading = headline("study", STUDY)["reading"]
    assert reading.startswith("Physicians preferred GOOD (Bradley-Terry strength 1.10) over 1 other system across 12")
    assert "Kendall's W undefined: every ranking tied" in reading


def test_reviewer_quality_plots_say_why_a_value_is_missing():
    result = {
        "reviewers": [
            {
                "email": "a@x",
                "reviews": 30,
                "gold_answers": 10,
                "gold_accuracy": 0.6,
                "flagged": True,
                "adjudicated": 0,
                "overturn_rate": None,
                "mean_seconds_per_review": 41.0,
            },
            {
                "email": "b@x",
                "reviews": 5,
                "gold_answers": 0,
                "gold_accuracy": None,
                "flagged": False,
                "adjudicated": 2,
                "overturn_rate": 0.5,
                "mean_seconds_per_review": None,
            },
        ]
    }
    gold = report_chart("reviewer_quality", result, "gold_accuracy")
    assert [(b.label, b.value, b.n, b.highlight) for b in gold.bars] == [
        ("a@x", 0.6, 10, True),
        ("b@x", None, None, False),
    ]
    assert gold.bars[1].note == "no gold items reviewed by this person yet"
    assert report_chart("reviewer_quality", result, "overturn_rate").bars[1].n == 2
    assert report_chart("reviewer_quality", result, "pace").bars[1].note == "no timed reviews yet"
    assert headline("reviewer_quality", result)["reading"] == (
        "2 reviewers wrote 35 reviews; 1 is flagged for gold accuracy below the threshold and 1 have not answered a "
        "gold item yet; the median pace is 41 s per review."
    )


def test_task1_distributions_put_systems_side_by_side_per_qa_type():
    data = {
        "short_answer": {"B-SYS": [0.1, 0.2], "A-SYS": [0.5, 0.6, 0.7]},
        "true_false": {"A-SYS": [1.0]},
    }
    chart = task1_chart(data, metric="semantic", profile="cliniqlink-2025")
    assert [p.title for p in chart.panels] == ["True / false", "Short answer"]
    assert [[(g.label, g.n) for g in p.groups] for p in chart.panels] == [
        [("A-SYS", 1), ("B-SYS", 0)],
        [("A-SYS", 3), ("B-SYS", 2)],
    ]
    assert plots.draw(chart, "svg").lstrip().startswith(b"<?xml")
    empty = task1_chart({}, metric="bleu", profile="paper")
    assert (
        empty.panels == () and empty.empty_reason == "No answer has a BLEU score in the latest finished runs (paper)."
    )


def test_labels_have_one_home():
    assert human_label("krippendorff_alpha") == "Krippendorff's α"
    assert human_label("multi_hop_inverse") == "Multi-hop inverse"
    assert human_label("items_created") == "Items created"


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_chinese_labels_are_drawn_with_a_cjk_font(fmt):
    """PromptCBLUE items and system names are Chinese: DejaVu Sans has no such glyph (a box and a warning)."""
    covering = fonts.font_covering("肺")
    assert covering is not None and "DejaVu" not in covering.name
    chart = plots.BarChart("肺炎问答 agreement", "Krippendorff's α", (plots.Bar("中文系统", 0.5, n=3),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)" for a box
        assert plots.draw(chart, fmt)
