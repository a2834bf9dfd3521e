"""The description of every report plot: which plots a result can show, their titles, bars and points (drawn as
PNG / SVG by ``stats.plots``)."""

from __future__ import annotations

from analytics.presentation.judges import judges_chart
from analytics.presentation.span_report import SPAN_PLOTS, span_chart, span_plot_names
from analytics.presentation.tables import REVIEWER_GAPS, human_label, pair_rows, system_label
from analytics.selectors import SCORE_METRICS
from annotation.qa_types import QA_TYPE_LABELS
from stats import plots
from stats.pairs import MIN_PAIR_ITEMS
from stats.plots import Bar, BarChart, Distribution, DistributionChart, Panel, Point, ScatterChart
from stats.results import StatResult
from stats.stacked_plots import StackedBarChart, draw_stacked

PLOT_TITLES = {
    "verdict_alpha_by_type": "Verdict agreement per QA type",
    "relevance_alpha_by_type": "GP relevance agreement per QA type",
    "pair_kappa": "Verdict agreement per reviewer pair",
    "human_leaderboard": "Human preference leaderboard",
    "metric_correlation": "How well each metric follows physicians",
    "judges": "Judges' agreement with the physicians",
    "gold_accuracy": "Gold accuracy per reviewer",
    "overturn_rate": "Adjudication overturn rate per reviewer",
    "pace": "Time per review",
    **SPAN_PLOTS,
}


def plot_title(name: str) -> str:
    if name.startswith("scatter_"):
        return f"Systems: physicians vs {human_label(name.removeprefix('scatter_'))}"
    return PLOT_TITLES.get(name, human_label(name))


def available_plots(kind: str, result: dict) -> list[str]:
    if kind == "vetting_agreement" and result.get("by_type"):
        return ["verdict_alpha_by_type", "relevance_alpha_by_type", *(["pair_kappa"] if result.get("pairs") else [])]
    if kind == "study" and not result.get("human_leaderboard"):
        return span_plot_names(result)
    if kind == "study":
        return [
            "human_leaderboard",
            *[f"scatter_{m}" for m, data in result.get("scatter", {}).items() if data.get("systems")],
            "metric_correlation",
            *(["judges"] if (result.get("judges") or {}).get("judges") else []),
            *span_plot_names(result),
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


def report_chart(
    kind: str, result: dict, name: str, names: dict[str, str] | None = None
) -> BarChart | ScatterChart | StackedBarChart:
    """The description of plot ``name`` of a report: what is drawn, with n per group (people by ``names``, from
    :func:`analytics.presentation.people.names_by_pseudonym`, where given)."""
    if name in {"verdict_alpha_by_type", "relevance_alpha_by_type"}:
        block = "verdict" if name.startswith("verdict") else "relevance_ordinal"
        min_items = result.get("min_pair_items", MIN_PAIR_ITEMS)
        stats = [("All QA types", StatResult.from_dict(result["overall"][block]["krippendorff_alpha"]))]
        stats += [
            (human_label(qa_type), StatResult.from_dict(data[block]["krippendorff_alpha"]))
            for qa_type, data in sorted(result["by_type"].items(), key=lambda kv: _qa_type_order(kv[0]))
        ]
        # the same mark as the reviewer pairs: a coefficient over a handful of items is noise
        bars = [plots.stat_bar(label + (" *" if stat.n_items < min_items else ""), stat) for label, stat in stats]
        level = "nominal" if block == "verdict" else "ordinal"
        few = any(stat.n_items < min_items for _, stat in stats)
        return BarChart(
            plot_title(name),
            f"Krippendorff's α ({level}; 1 = perfect, 0 = chance)",
            tuple(bars),
            caption="Whiskers: 95 % bootstrap interval (none where it could not be estimated). "
            "n: items reviewed twice or more."
            + (f" * fewer than {min_items} items: read with caution." if few else ""),
        )
    if name == "pair_kappa":
        bars = [
            plots.stat_bar(row["pair"] + (" *" if row["too_few_items"] else ""), row["verdict_kappa"])
            for row in pair_rows(result, names)
        ]
        return BarChart(
            plot_title(name),
            "Cohen's κ on the verdict (1 = perfect, 0 = chance)",
            tuple(bars),
            caption=f"* fewer than {result.get('min_pair_items', MIN_PAIR_ITEMS)} items in common: "
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
    if name == "judges":
        return judges_chart(result)
    if name in SPAN_PLOTS:
        return span_chart(result, name)
    if name in {"gold_accuracy", "overturn_rate", "pace"}:
        return _reviewer_chart(name, result["reviewers"])
    raise KeyError(name)


def _reviewer_chart(name: str, rows: list[dict]) -> BarChart:
    if name == "gold_accuracy":
        bars = tuple(
            Bar(
                r.get("name") or r["email"],
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
                r.get("name") or r["email"],
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
            r.get("name") or r["email"],
            r.get("mean_seconds_per_review"),
            n=r.get("reviews") or None,
            note=None if r.get("mean_seconds_per_review") is not None else REVIEWER_GAPS["pace"],
        )
        for r in rows
    )
    return BarChart(plot_title(name), "Mean time per review (seconds)", bars, n_unit="reviews", full_scale=False)


def render_plot(kind: str, result: dict, name: str, fmt: str, names: dict[str, str] | None = None) -> bytes:
    chart = report_chart(kind, result, name, names)
    if isinstance(chart, StackedBarChart):
        return draw_stacked(chart, fmt)  # type: ignore[arg-type]
    return plots.draw(chart, fmt)  # type: ignore[arg-type]


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
        y_range=(0.0, 1.0),  # Task-1 scores are meant to lie in 0..1; the axis widens for one that does not
    )


def _qa_type_order(qa_type: str) -> int:
    order = list(QA_TYPE_LABELS)
    return order.index(qa_type) if qa_type in order else len(order)
