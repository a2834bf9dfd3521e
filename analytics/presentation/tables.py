"""Turning stored report results into what people read: headline numbers with a one-sentence reading, human
labels, tables (CSV) and the description of every plot (drawn as PNG / SVG by ``analytics.stats.plots``)."""

from __future__ import annotations

import io
import statistics

from analytics.selectors import SCORE_LABELS, SCORE_METRICS
from analytics.stats import agreement, plots
from analytics.stats.plots import Bar, BarChart, Distribution, DistributionChart, Panel, Point, ScatterChart
from analytics.stats.results import StatResult
from annotation.qa_types import QA_TYPE_LABELS
from portal import csv_cells
from portal.templatetags.portal_tags import label as generic_label

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
}


def human_label(key) -> str:
    """The one place a stored key becomes words: statistics, report sections, QA types, metrics; anything else
    through the portal's generic ``label`` filter (``items_created`` → "Items created")."""
    text = str(key)
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


def pair_rows(result: dict) -> list[dict]:
    """The reviewer pairs of a vetting report as table rows: who, items in common, raw verdict agreement,
    verdict κ and relevance κ (each with why it is undefined), and whether there are too few items to trust."""
    rows = []
    for pair in result.get("pairs", []):
        too_few = pair.get("too_few_items", pair["n_items"] < agreement.MIN_PAIR_ITEMS)
        rows.append(
            {
                "pair": " & ".join(pair["pair"]),
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
    min_items = result.get("min_pair_items", agreement.MIN_PAIR_ITEMS)
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
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------- headlines


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _figure(label: str, stat: StatResult, *, percent: bool = False) -> dict:
    """A headline figure: the value in words, or "undefined" with the reason under it."""
    if stat.value is None:
        return {"label": label, "value": "undefined", "detail": stat.undefined_reason or "no value"}
    value = _pct(stat.value) if percent else _num(stat.value)
    detail = f"n = {stat.n_items:,} items" if stat.n_items else ""
    if stat.ci is not None:
        low, high = (_pct(c) if percent else _num(c) for c in stat.ci)
        detail = f"95 % interval {low} – {high}" + (f" · {detail}" if detail else "")
    return {"label": label, "value": value, "detail": detail}


def headline(kind: str, result: dict) -> dict:
    """The numbers a report page leads with, and one sentence that reads them."""
    if not result:
        return {"figures": [], "reading": ""}
    if result.get("undefined_reason"):
        return {"figures": [], "reading": f"Nothing to report yet: {result['undefined_reason']}."}
    if kind == "vetting_agreement":
        return _vetting_headline(result)
    if kind == "study":
        return _study_headline(result)
    if kind == "reviewer_quality":
        return _reviewer_headline(result)
    return {"figures": [], "reading": ""}


def _vetting_headline(result: dict) -> dict:
    overall = result.get("overall", {})
    verdict = overall.get("verdict", {})
    raw = StatResult.from_dict(verdict.get("percent_agreement"))
    kappa_key = "cohen_kappa"
    kappa = StatResult.from_dict(verdict.get(kappa_key))
    if kappa.value is None:  # more than two reviewers overall: the multi-rater coefficient
        kappa_key = "krippendorff_alpha"
        kappa = StatResult.from_dict(verdict.get(kappa_key))
    relevance = StatResult.from_dict(overall.get("relevance_ordinal", {}).get("krippendorff_alpha"))
    pairs = pair_rows(result)
    figures = [
        _figure("Same verdict", raw, percent=True),
        _figure(STAT_LABELS[kappa_key], kappa),
        _figure("GP relevance, ordinal α", relevance),
        {"label": "Items reviewed", "value": f"{overall.get('n_items', 0):,}", "detail": "by one reviewer or more"},
        {"label": "Reviewer pairs", "value": f"{len(pairs):,}", "detail": "with an item in common"},
    ]
    if raw.value is None:
        reading = f"Agreement cannot be measured yet: {raw.undefined_reason or 'no item was reviewed twice'}."
    else:
        words = agreement.strength_of_agreement(kappa.value)
        coefficient = (
            f"{STAT_LABELS[kappa_key]} {_num(kappa.value)}, {words} agreement"
            if kappa.value is not None
            else f"{STAT_LABELS[kappa_key]} undefined: {kappa.undefined_reason}"
        )
        reading = (
            f"Reviewers gave the same verdict on {_pct(raw.value)} of {raw.n_items:,} doubly reviewed items "
            f"({coefficient})."
        )
    return {"figures": figures, "reading": reading}


def _study_headline(result: dict) -> dict:
    ranking = result.get("ranking_agreement", {})
    w = StatResult.from_dict(ranking.get("kendall_w"), "kendall_w")
    board = [r for r in result.get("human_leaderboard", []) if r.get("strength") is not None]
    models = [r for r in board if not r.get("is_reference")]
    best_metric, best_tau = None, None
    for metric, block in result.get("correlation", {}).items():
        tau = StatResult.from_dict(block.get("segment_tau_b"))
        if tau.value is not None and (best_tau is None or tau.value > best_tau.value):
            best_metric, best_tau = metric, tau
    figures = [
        {"label": "Questions", "value": f"{result.get('n_questions', 0):,}", "detail": "ranked by physicians"},
        {"label": "Judgements", "value": f"{result.get('n_judgements', 0):,}", "detail": "answers ranked"},
        _figure("Kendall's W (physicians agree)", w),
    ]
    if best_tau is not None:
        figures.append(_figure(f"Best metric: {human_label(best_metric)} τ-b", best_tau))
    parts = []
    if models:
        top = max(models, key=lambda r: r["strength"])
        parts.append(
            f"Physicians preferred {top['system']} (Bradley-Terry strength {_num(top['strength'])}) "
            f"over {len(models) - 1} other system{'s' if len(models) != 2 else ''} "
            f"across {result.get('n_questions', 0):,} questions"
        )
    if w.value is not None:
        parts.append(f"their rankings agreed {_kendall_w_words(w.value)} (Kendall's W {_num(w.value)})")
    else:
        parts.append(f"Kendall's W undefined: {w.undefined_reason}")
    if best_tau is not None:
        parts.append(f"{human_label(best_metric)} follows physicians best (per-question τ-b {_num(best_tau.value)})")
    reading = "; ".join(parts) + "." if parts else ""
    return {"figures": figures, "reading": reading[:1].upper() + reading[1:]}


def _kendall_w_words(w: float) -> str:
    """Kendall's W (0 no agreement, 1 complete) in the words of Schmidt (1997, *Decision Sciences* 28(3)), whose
    anchors are 0.1 very weak, 0.3 weak, 0.5 moderate, 0.7 strong, 0.9 unusually strong: the nearest anchor."""
    for bound, words in ((0.2, "very weakly"), (0.4, "weakly"), (0.6, "moderately"), (0.8, "strongly")):
        if w < bound:
            return words
    return "very strongly"


def _reviewer_headline(result: dict) -> dict:
    rows = result.get("reviewers", [])
    reviews = sum(r.get("reviews", 0) for r in rows)
    flagged = sum(1 for r in rows if r.get("flagged"))
    gold = [r for r in rows if r.get("gold_accuracy") is not None]
    paces = [r["mean_seconds_per_review"] for r in rows if r.get("mean_seconds_per_review") is not None]
    figures = [
        {"label": "Reviewers", "value": f"{len(rows):,}", "detail": f"{reviews:,} reviews"},
        {"label": "Flagged", "value": f"{flagged:,}", "detail": "gold accuracy below the threshold"},
        {
            "label": "With gold items",
            "value": f"{len(gold):,}",
            "detail": "reviewers who answered a gold item",
        },
        {
            "label": "Median pace",
            "value": f"{statistics.median(paces):.0f} s" if paces else "—",
            "detail": "per review" if paces else "no timed reviews yet",
        },
    ]
    if not rows:
        return {"figures": figures, "reading": "No reviews yet."}
    reading = (
        f"{len(rows):,} reviewer{'s' if len(rows) != 1 else ''} wrote {reviews:,} reviews; "
        f"{flagged:,} {'is' if flagged == 1 else 'are'} flagged for gold accuracy below the threshold"
        + (f" and {len(rows) - len(gold):,} have not answered a gold item yet" if len(gold) < len(rows) else "")
        + (f"; the median pace is {statistics.median(paces):.0f} s per review." if paces else ".")
    )
    return {"figures": figures, "reading": reading}


# --------------------------------------------------------------------------------------------- plots

#: Why a reviewer's figure is empty, in the table and in the plots alike.
REVIEWER_GAPS = {
    "gold_accuracy": "no gold items reviewed by this person yet",
    "overturn_rate": "none of this person's reviews went to adjudication yet",
    "pace": "no timed reviews yet",
}

PLOT_TITLES = {
    "verdict_alpha_by_type": "Verdict agreement per QA type",
    "relevance_alpha_by_type": "GP relevance agreement per QA type",
    "pair_kappa": "Verdict agreement per reviewer pair",
    "human_leaderboard": "Human preference leaderboard",
    "metric_correlation": "How well each metric follows physicians",
    "gold_accuracy": "Gold accuracy per reviewer",
    "overturn_rate": "Adjudication overturn rate per reviewer",
    "pace": "Time per review",
}


def plot_title(name: str) -> str:
    if name.startswith("scatter_"):
        return f"Systems: physicians vs {human_label(name.removeprefix('scatter_'))}"
    return PLOT_TITLES.get(name, human_label(name))


def available_plots(kind: str, result: dict) -> list[str]:
    if kind == "vetting_agreement" and result.get("by_type"):
        return ["verdict_alpha_by_type", "relevance_alpha_by_type", *(["pair_kappa"] if result.get("pairs") else [])]
    if kind == "study" and result.get("human_leaderboard"):
        return [
            "human_leaderboard",
            *[f"scatter_{m}" for m, data in result.get("scatter", {}).items() if data.get("systems")],
            "metric_correlation",
        ]
    if kind == "reviewer_quality":
        rows = result.get("reviewers", [])
        shown = {
            "gold_accuracy": any(r.get("gold_accuracy") is not None for r in rows),
            "overturn_rate": any(r.get("overturn_rate") is not None for r in rows),
            "pace": any(r.get("mean_seconds_per_review") is not None for r in rows),
        }
        return [name for name, has_values in shown.items() if has_values]
    return []


def missing_plots(kind: str, result: dict) -> list[str]:
    """Sentences for the plots a report leaves out because no one has a value yet (a chart of gaps says less)."""
    if kind != "reviewer_quality" or not result.get("reviewers"):
        return []
    shown = set(available_plots(kind, result))
    return [
        f"No {plot_title(name).lower()} plot: {REVIEWER_GAPS[name].replace('this person', 'any reviewer')}."
        for name in ("gold_accuracy", "overturn_rate", "pace")
        if name not in shown
    ]


def report_chart(kind: str, result: dict, name: str) -> BarChart | ScatterChart:
    """The description of plot ``name`` of a report: what is drawn, with n per group."""
    if name in {"verdict_alpha_by_type", "relevance_alpha_by_type"}:
        block = "verdict" if name.startswith("verdict") else "relevance_ordinal"
        bars = [plots.stat_bar("All QA types", StatResult.from_dict(result["overall"][block]["krippendorff_alpha"]))]
        bars += [
            plots.stat_bar(human_label(qa_type), StatResult.from_dict(data[block]["krippendorff_alpha"]))
            for qa_type, data in sorted(result["by_type"].items(), key=lambda kv: _qa_type_order(kv[0]))
        ]
        level = "nominal" if block == "verdict" else "ordinal"
        return BarChart(
            plot_title(name),
            f"Krippendorff's α ({level}; 1 = perfect, 0 = chance)",
            tuple(bars),
            caption="Whiskers: 95 % bootstrap interval. n: items reviewed twice or more.",
        )
    if name == "pair_kappa":
        bars = [
            plots.stat_bar(row["pair"] + (" *" if row["too_few_items"] else ""), row["verdict_kappa"])
            for row in pair_rows(result)
        ]
        return BarChart(
            plot_title(name),
            "Cohen's κ on the verdict (1 = perfect, 0 = chance)",
            tuple(bars),
            caption=f"* fewer than {result.get('min_pair_items', agreement.MIN_PAIR_ITEMS)} items in common: "
            "read with caution. n: items both reviewed.",
        )
    if name == "human_leaderboard":
        rows = sorted(result["human_leaderboard"], key=lambda r: -(r["strength"] or float("-inf")))
        bars = tuple(
            Bar(
                label=system_label(r["system"], r["is_reference"]),
                value=r["strength"],
                ci=tuple(r["strength_ci"]) if r.get("strength_ci") else None,
                n=r.get("n_questions"),
                note="no comparisons with another system" if r["strength"] is None else None,
                highlight=bool(r["is_reference"]),
            )
            for r in rows
        )
        return BarChart(
            plot_title(name),
            "Bradley-Terry strength (log odds of being preferred over the average system)",
            bars,
            n_unit="questions",
            style="dot",
            full_scale=False,
            caption="Best first. Whiskers: 95 % bootstrap interval over questions."
            + (" Red: the reference answer." if any(b.highlight for b in bars) else ""),
        )
    if name.startswith("scatter_"):
        metric = name.removeprefix("scatter_")
        data = result["scatter"][metric]
        # Stored as -(mean rank) so that higher is better; drawn as the mean rank itself on a reversed axis,
        # which physicians read without a minus sign.
        points = tuple(Point(s, -h, m) for s, h, m in zip(data["systems"], data["human"], data["metric"], strict=True))
        return ScatterChart(
            plot_title(name),
            "Physicians' mean rank (1 = best; better to the right)",
            f"Mean {human_label(metric)} score",
            points,
            caption=f"One point per system (n = {len(points)} systems), reference answer left out.",
            invert_x=True,
        )
    if name == "metric_correlation":
        bars = []
        # Stored results come back from PostgreSQL's jsonb with their keys reordered: order by the metric list.
        correlation = result.get("correlation", {})
        for metric in sorted(correlation, key=lambda m: SCORE_METRICS.index(m) if m in SCORE_METRICS else 99):
            block = correlation[metric]
            if "segment_tau_b" in block:
                bars.append(plots.stat_bar(human_label(metric), StatResult.from_dict(block["segment_tau_b"])))
            else:
                bars.append(Bar(human_label(metric), None, note=block.get("undefined_reason")))
        return BarChart(
            plot_title(name),
            "Per-question Kendall τ-b with physicians' ranks (1 = same order)",
            tuple(bars),
            n_unit="questions",
            caption="Whiskers: 95 % bootstrap interval over questions.",
        )
    if name in {"gold_accuracy", "overturn_rate", "pace"}:
        return _reviewer_chart(name, result["reviewers"])
    raise KeyError(name)


def _reviewer_chart(name: str, rows: list[dict]) -> BarChart:
    if name == "gold_accuracy":
        bars = tuple(
            Bar(
                r["email"],
                r.get("gold_accuracy"),
                n=r.get("gold_answers") or None,
                note=None if r.get("gold_answers") else REVIEWER_GAPS["gold_accuracy"],
                highlight=bool(r.get("flagged")),
            )
            for r in rows
        )
        return BarChart(
            plot_title(name),
            "Share of gold items answered correctly",
            bars,
            n_unit="gold items",
            caption="Red: flagged, accuracy below the threshold.",
        )
    if name == "overturn_rate":
        bars = tuple(
            Bar(
                r["email"],
                r.get("overturn_rate"),
                n=r.get("adjudicated") or None,
                note=None if r.get("adjudicated") else REVIEWER_GAPS["overturn_rate"],
            )
            for r in rows
        )
        return BarChart(
            plot_title(name), "Share of adjudicated reviews whose verdict was overturned", bars, n_unit="adjudicated"
        )
    bars = tuple(
        Bar(
            r["email"],
            r.get("mean_seconds_per_review"),
            n=r.get("reviews") or None,
            note=None if r.get("mean_seconds_per_review") is not None else REVIEWER_GAPS["pace"],
        )
        for r in rows
    )
    return BarChart(plot_title(name), "Mean time per review (seconds)", bars, n_unit="reviews", full_scale=False)


def render_plot(kind: str, result: dict, name: str, fmt: str) -> bytes:
    return plots.draw(report_chart(kind, result, name), fmt)


def task1_chart(distributions: dict[str, dict[str, list[float]]], *, metric: str, profile: str) -> DistributionChart:
    """Task-1 score distributions: one panel per QA type, a box per system side by side (n answers each)."""
    systems = sorted({s for by_system in distributions.values() for s in by_system})
    panels = tuple(
        Panel(
            human_label(qa_type),
            tuple(Distribution(s, tuple(distributions[qa_type].get(s, ()))) for s in systems),
        )
        for qa_type in sorted(distributions, key=_qa_type_order)
    )
    return DistributionChart(
        f"{human_label(metric)} score per answer, by QA type and system ({profile})",
        f"{human_label(metric)} score",
        panels,
        empty_reason=f"No answer has a {human_label(metric)} score in the latest finished runs ({profile}).",
    )


def _qa_type_order(qa_type: str) -> int:
    order = list(QA_TYPE_LABELS)
    return order.index(qa_type) if qa_type in order else len(order)
