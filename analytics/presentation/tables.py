"""Stored report results as people read them in tables: human labels of statistics, sections and systems, the rows
of the report page's tables and the report's CSV. Headline numbers live in ``analytics.presentation.headlines``, plot
descriptions in ``analytics.presentation.charts``."""

from __future__ import annotations

import io

from analytics.nuggets.board import NUGGET_METRIC_PREFIX, nugget_metric_label
from analytics.presentation.people import person_name
from analytics.selectors import SCORE_LABELS
from annotation.qa_types import QA_TYPE_LABELS
from portal import csv_cells
from portal.templatetags.portal_tags import label as generic_label
from stats.pairs import MIN_PAIR_ITEMS
from stats.results import StatResult, same_value

STAT_KEYS = {"name", "value", "ci_low", "ci_high", "undefined_reason"}
CSV_COLUMNS = [
    "section",
    "statistic",
    "value",
    "ci_low",
    "ci_high",
    "n_items",
    "n_raters",
    "undefined_reason",
    "pair",
    "note",
]

#: Names of the statistics and report sections as people read them (keys as stored in results and CSVs).
STAT_LABELS = {
    "krippendorff_alpha": "Krippendorff's α",
    "fleiss_kappa": "Fleiss' κ",
    "cohen_kappa": "Cohen's κ",
    "cohen_kappa_quadratic": "Cohen's κ (quadratic weights)",
    "percent_agreement": "Raw agreement",
    "kendall_w": "Kendall's W",
    "mean_pairwise_tau_b": "Mean pairwise Kendall τ-b",
    "tag_alpha_ordinal": "Quality-tag agreement (ordinal α)",
    "segment_tau_b": "Per-question Kendall τ-b",
    "pairwise_accuracy": "Pairwise accuracy",
    "system_pearson": "System-level Pearson r",
    "system_spearman": "System-level Spearman ρ",
    "bradley_terry": "Bradley-Terry strength",
    "bootstrap": "Bootstrap intervals",
    "reviewer_pairs": "Reviewer pairs",
    "overall": "All QA types",
    "by_type": "By QA type",
    "verdict": "Verdict",
    "relevance_ordinal": "GP relevance (ordinal)",
    "relevance_interval": "GP relevance (interval)",
    "ranking_agreement": "Agreement between physicians",
    "correlation": "Metric vs physicians",
    "human_leaderboard": "Human preference leaderboard",
    "pairs": "Reviewer pairs",
    "vetting_agreement": "Vetting agreement",
    "study": "Preference study",
    "reviewer_quality": "Reviewer quality",
    "spans": "Hallucination spans",
    "pairwise_iou": "Mean pairwise character IoU",
    "hallucination_rate": "Hallucination rate",
    "span_share": "Hallucinated share of the answer",
    "by_system": "By system",
    "by_qa_type": "By QA type",
}


def human_label(key) -> str:
    """The one place a stored key becomes words: statistics, report sections, QA types, metrics; anything else
    through the portal's generic ``label`` filter (``items_created`` → "Items created")."""
    text = str(key)
    if text.startswith(f"{NUGGET_METRIC_PREFIX}:"):
        return nugget_metric_label(text)
    if text in STAT_LABELS:
        return STAT_LABELS[text]
    if text in QA_TYPE_LABELS:
        return QA_TYPE_LABELS[text]
    if text in SCORE_LABELS:
        return SCORE_LABELS[text]
    return generic_label(text)


def section_label(section: str) -> str:
    """``by_type/short_answer/verdict`` → "By QA type · Short answer · Verdict"."""
    return " · ".join(human_label(part) for part in section.split("/") if part)


def number(value, digits: int = 2) -> str:
    """A figure rounded for reading; "—" when undefined; never "-0.00"."""
    if value is None or value != value:
        return "—"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def interval_text(ci, *, n: int | None = None, unit: str = "items", percent: bool = False) -> str:
    """A 95 % interval as people read it: "0.80 – 1.40" (or "80 % – 95 %"); "—" without one. An interval of no
    width is no certainty: every resample of a handful of units gave the same value, so it could not be
    estimated, and it says so ("not estimable from 2 questions", or "not estimable" without ``n``).
    ``ci``: a pair, or a statistic (a :class:`~stats.results.StatResult`, or a stored one: a mapping with
    ``ci_low`` / ``ci_high``)."""
    if isinstance(ci, StatResult):
        ci = (ci.ci_low, ci.ci_high)
    elif isinstance(ci, dict):
        ci = (ci.get("ci_low"), ci.get("ci_high"))
    if not ci or ci[0] is None or ci[1] is None:
        return "—"
    low, high = float(ci[0]), float(ci[1])
    if same_value(low, high):
        return f"not estimable from {n:,} {unit.removesuffix('s') if n == 1 else unit}" if n else "not estimable"
    if percent:
        return f"{100 * low:.0f} % – {100 * high:.0f} %"
    return f"{number(low)} – {number(high)}"


def system_label(name: str, is_reference: bool) -> str:
    """A system's name, marked when it is the reference answer, unless its name already says so (the demo's
    reference system is called "reference": "reference (reference)" said nothing twice)."""
    if is_reference and "reference" not in name.lower():
        return f"{name} (reference answer)"
    return name


# --------------------------------------------------------------------------------------------- tables


def stat_rows(result: dict, path: tuple[str, ...] = ()) -> list[dict]:
    """Every statistic in a report result, flattened: one row per figure with its interval and counts."""
    rows = []
    for key, value in result.items():
        if isinstance(value, dict) and STAT_KEYS <= set(value):
            rows.append(
                {
                    "section": "/".join(path),
                    "statistic": key,
                    "value": value["value"],
                    "ci_low": value["ci_low"],
                    "ci_high": value["ci_high"],
                    "n_items": value.get("n_items"),
                    "n_raters": value.get("n_raters"),
                    "undefined_reason": value["undefined_reason"] or "",
                }
            )
        elif isinstance(value, dict) and key not in {"methods", "library_versions", "scatter"}:
            rows.extend(stat_rows(value, (*path, str(key))))
    return rows


def pair_rows(result: dict, names: dict[str, str] | None = None) -> list[dict]:
    """The reviewer pairs of a vetting report as table rows: who, items in common, raw verdict agreement,
    verdict κ and relevance κ (each with why it is undefined), and whether there are too few items to trust.
    ``names`` (:func:`analytics.presentation.people.names_by_pseudonym`) names the reviewers on a page; without
    it (the CSV) they stay pseudonyms, as stored."""
    rows = []
    for pair in result.get("pairs", []):
        too_few = pair.get("too_few_items", pair["n_items"] < MIN_PAIR_ITEMS)
        rows.append(
            {
                "pair": " & ".join(person_name(p, names) for p in pair["pair"]),
                "n_items": pair["n_items"],
                "too_few_items": too_few,
                "agreement": StatResult.from_dict(pair.get("verdict_percent_agreement"), "percent_agreement"),
                "verdict_kappa": StatResult.from_dict(pair.get("verdict_cohen_kappa"), "cohen_kappa"),
                "relevance_kappa": StatResult.from_dict(
                    pair.get("relevance_cohen_kappa_quadratic"), "cohen_kappa_quadratic"
                ),
            }
        )
    return rows


def report_csv(result: dict) -> str:
    buffer = io.StringIO()
    writer = csv_cells.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(stat_rows(result))
    min_items = result.get("min_pair_items", MIN_PAIR_ITEMS)
    for row in pair_rows(result):
        note = f"fewer than {min_items} items in common: read with caution" if row["too_few_items"] else ""
        for key, stat in (
            ("verdict_percent_agreement", row["agreement"]),
            ("verdict_cohen_kappa", row["verdict_kappa"]),
            ("relevance_cohen_kappa_quadratic", row["relevance_kappa"]),
        ):
            writer.writerow(
                {
                    "section": "pairs",
                    "statistic": key,
                    "value": stat.value,
                    "n_items": row["n_items"],
                    "n_raters": 2,
                    "undefined_reason": stat.undefined_reason or "",
                    "pair": row["pair"],
                    "note": note,
                }
            )
    for row in result.get("human_leaderboard", []):
        writer.writerow(
            {
                "section": "human_leaderboard",
                "statistic": f"bradley_terry:{row['system']}",
                "value": row["strength"],
                "ci_low": (row["strength_ci"] or [None, None])[0],
                "ci_high": (row["strength_ci"] or [None, None])[1],
                "n_items": row.get("n_questions"),
            }
        )
    for name, figures in ((result.get("judges") or {}).get("judges") or {}).items():
        ci = figures.get("acc_eq_ci") or [None, None]
        cluster = figures.get("cluster")
        writer.writerow(
            {
                "section": "judges",
                "statistic": f"acc_eq:{name}",
                "value": figures.get("acc_eq"),
                "ci_low": ci[0],
                "ci_high": ci[1],
                "n_items": figures.get("n_items"),
                "note": f"cluster {cluster}" if cluster is not None else "",
            }
        )
    return buffer.getvalue()


#: Why a reviewer's figure is empty, in the table and in the plots alike.
REVIEWER_GAPS = {
    "gold_accuracy": "no gold items reviewed by this person yet",
    "overturn_rate": "none of this person's reviews went to adjudication yet",
    "pace": "no timed reviews yet",
}
