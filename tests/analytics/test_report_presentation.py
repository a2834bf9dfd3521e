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
        ("True / false *", 3),
        ("List *", 1),
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
    assert "physicians' agreement (Kendall's W) cannot be measured: every ranking tied;" in reading


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


def _tau(value, ci, n=12):
    return {"segment_tau_b": StatResult("segment_tau_b", value, *ci, n_items=n).to_dict()}


def _study(n_questions, *, board=None, correlation=None, w=None):
    return {
        "n_questions": n_questions,
        "n_judgements": 4 * n_questions,
        "ranking_agreement": {"kendall_w": w or undefined("kendall_w", "only one ranker on every question").to_dict()},
        "human_leaderboard": board or STUDY["human_leaderboard"],
        "correlation": correlation or {},
    }


def test_a_tiny_study_says_it_is_too_early_to_read_and_how_much_more_it_needs():
    """Usability F17: two questions, one physician each, led with "Physicians preferred UX model C … BLEU follows
    physicians best (per-question τ-b 0.82)" and a card "95 % interval 0.82 – 0.82 · n = 2 items"."""
    result = _study(
        2,
        board=[
            {"system": "C", "strength": 4.77, "strength_ci": [4.77, 4.77], "is_reference": False, "n_questions": 2},
            {"system": "B", "strength": -1.37, "strength_ci": [-1.37, -1.37], "is_reference": False, "n_questions": 2},
        ],
        correlation={"bleu": _tau(0.8165, (0.8165, 0.8165), n=2), "rouge": _tau(0.5, (0.5, 0.5), n=2)},
    )
    head = headline("study", result)
    assert head["reading"] == (
        "Too early to read: 2 questions ranked so far. Which system physicians prefer and which metric follows "
        "them best is read from 10 ranked questions on: 8 more to rank."
    )
    shown = str(head["figures"])
    assert "preferred" not in shown and "Best metric" not in shown and "0.82 – 0.82" not in shown
    assert head["figures"][0]["detail"] == "ranked by physicians · 8 more needed to read the study"
    # Kendall's W: its reason once, not "undefined: undefined for every question: …"
    assert head["figures"][2] == {
        "label": "Kendall's W (physicians agree)",
        "value": "undefined",
        "detail": "only one ranker on every question",
    }
    one = headline("study", _study(1))
    assert (
        one["reading"].startswith("Too early to read: 1 question ranked so far.") and "9 more to rank" in one["reading"]
    )


def test_metrics_that_tie_are_called_a_tie():
    """The demo study: all four metrics at τ-b 1.00, and the headline named "BLEU follows physicians best"."""
    every = {m: _tau(1.0, (1.0, 1.0)) for m in ("meteor", "bleu", "semantic", "rouge")}
    head = headline("study", _study(12, correlation=every))
    assert "Semantic, BLEU, ROUGE and METEOR follow physicians equally well (per-question τ-b 1.00)." in head["reading"]
    assert "best" not in head["reading"]
    assert head["figures"][-1] == {
        "label": "Metrics tied, τ-b",
        "value": "1.00",
        "detail": "Semantic, BLEU, ROUGE and METEOR",
    }
    # different values whose intervals overlap cannot be told apart either
    close = {"bleu": _tau(0.62, (0.4, 0.8)), "rouge": _tau(0.55, (0.3, 0.7)), "meteor": _tau(0.1, (-0.1, 0.3))}
    reading = headline("study", _study(12, correlation=close))["reading"]
    assert "no metric follows physicians clearly best: BLEU (0.62) and ROUGE (0.55) cannot be told apart" in reading
    assert "METEOR" not in reading
    # one clear best is still named
    apart = {"bleu": _tau(0.62, (0.5, 0.8)), "rouge": _tau(0.2, (0.1, 0.3))}
    assert (
        "BLEU follows physicians best (per-question τ-b 0.62)"
        in headline("study", _study(12, correlation=apart))["reading"]
    )
    # equal within float noise is equal
    noisy = {"bleu": _tau(0.7 + 1e-12, (0.6, 0.8)), "rouge": _tau(0.7, (0.69, 0.71))}
    assert (
        "BLEU and ROUGE follow physicians equally well" in headline("study", _study(12, correlation=noisy))["reading"]
    )


def test_systems_whose_intervals_overlap_have_no_winner():
    board = [
        {"system": "A", "strength": 0.9, "strength_ci": [0.2, 1.5], "is_reference": False, "n_questions": 12},
        {"system": "B", "strength": 0.7, "strength_ci": [0.1, 1.2], "is_reference": False, "n_questions": 12},
        {"system": "C", "strength": -1.6, "strength_ci": [-2.0, -1.2], "is_reference": False, "n_questions": 12},
        {"system": "reference", "strength": 2.0, "strength_ci": [1.0, 3.0], "is_reference": True, "n_questions": 12},
    ]
    reading = headline("study", _study(12, board=board))["reading"]
    assert reading.startswith(
        "No system is clearly preferred across 12 questions: A and B cannot be told apart (their Bradley-Terry 95 % "
        "intervals overlap);"
    )
    single = headline("study", _study(12, board=[board[0], board[3]]))["reading"]
    assert single.startswith("A is the only system in the study: there is no other system to prefer;")


def test_an_interval_of_no_width_is_not_shown_as_certainty():
    w = StatResult("kendall_w", 0.5, 0.5, 0.5, n_items=12, n_raters=2).to_dict()
    head = headline("study", _study(12, w=w))
    assert head["figures"][2]["detail"] == "95 % interval not estimable from 12 questions"
    from analytics.presentation.tables import interval_text

    assert interval_text([0.82, 0.82 + 1e-10]) == "not estimable"
    assert interval_text([0.8, 1.4]) == "0.80 – 1.40"
    assert interval_text(None) == "—" and interval_text({"ci_low": None, "ci_high": None}) == "—"
    assert interval_text((1.0, 1.0), n=1, unit="questions") == "not estimable from 1 question"


def test_vetting_agreement_over_a_handful_of_items_is_not_read():
    few = {**VETTING, "overall": _block(_stat(0.61, 4, ci=(0.2, 0.9)), 4)}
    few["overall"]["verdict"]["percent_agreement"] = StatResult("percent_agreement", 0.75, n_items=4).to_dict()
    reading = headline("vetting_agreement", few)["reading"]
    assert reading == (
        "Too early to read the reviewers' agreement: 4 items reviewed twice so far; at least 10 items reviewed twice "
        "are needed, 6 more."
    )
