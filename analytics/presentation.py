"""Turning stored report results into tables (CSV) and plots (PNG / SVG) for pages and downloads."""

from __future__ import annotations

import io

from analytics.stats import plots
from analytics.stats.results import StatResult
from portal import csv_cells

STAT_KEYS = {"name", "value", "ci_low", "ci_high", "undefined_reason"}
CSV_COLUMNS = ["section", "statistic", "value", "ci_low", "ci_high", "n_items", "n_raters", "undefined_reason"]


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


def report_csv(result: dict) -> str:
    buffer = io.StringIO()
    writer = csv_cells.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(stat_rows(result))
    for row in result.get("human_leaderboard", []):
        writer.writerow(
            {
                "section": "human_leaderboard",
                "statistic": f"bradley_terry:{row['system']}",
                "value": row["strength"],
                "ci_low": (row["strength_ci"] or [None, None])[0],
                "ci_high": (row["strength_ci"] or [None, None])[1],
            }
        )
    return buffer.getvalue()


def _stat(data: dict | None, name: str) -> StatResult:
    data = data or {}
    return StatResult(
        name=name,
        value=data.get("value"),
        ci_low=data.get("ci_low"),
        ci_high=data.get("ci_high"),
        undefined_reason=data.get("undefined_reason"),
    )


def available_plots(kind: str, result: dict) -> list[str]:
    if kind == "vetting_agreement" and result.get("by_type"):
        return ["verdict_alpha_by_type", "relevance_alpha_by_type"]
    if kind == "study" and result.get("human_leaderboard"):
        return [
            "human_leaderboard",
            *[f"scatter_{m}" for m, data in result.get("scatter", {}).items() if data.get("systems")],
            "metric_correlation",
        ]
    return []


def render_plot(kind: str, result: dict, name: str, fmt: str) -> bytes:
    if name in {"verdict_alpha_by_type", "relevance_alpha_by_type"}:
        block = "verdict" if name.startswith("verdict") else "relevance_ordinal"
        series = {t: _stat(data[block]["krippendorff_alpha"], t) for t, data in result["by_type"].items()}
        series["overall"] = _stat(result["overall"][block]["krippendorff_alpha"], "overall")
        title = "Verdict agreement (nominal alpha)" if block == "verdict" else "GP relevance agreement (ordinal alpha)"
        return plots.agreement_bar_chart(series, title=title, ylabel="Krippendorff's alpha", fmt=fmt)
    if name == "human_leaderboard":
        return _leaderboard_plot(result["human_leaderboard"], fmt)
    if name.startswith("scatter_"):
        metric = name.removeprefix("scatter_")
        data = result["scatter"][metric]
        return plots.rank_vs_metric_scatter(
            data["human"],
            data["metric"],
            labels=data["systems"],
            ylabel=f"mean {metric}",
            title=f"Systems: physicians vs {metric}",
            fmt=fmt,
        )
    if name == "metric_correlation":
        series = {m: _stat(block.get("segment_tau_b"), m) for m, block in result.get("correlation", {}).items()}
        return plots.agreement_bar_chart(
            series, title="Per-question Kendall tau-b with physicians", ylabel="tau-b", fmt=fmt
        )
    raise KeyError(name)


def _leaderboard_plot(rows: list[dict], fmt: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    rows = sorted(rows, key=lambda r: r["strength"] if r["strength"] is not None else float("-inf"))
    fig = Figure(figsize=(6.4, 0.45 * len(rows) + 1.2))
    ax = fig.subplots()
    for i, row in enumerate(rows):
        ci = row["strength_ci"] or [row["strength"], row["strength"]]
        ax.errorbar(
            row["strength"],
            i,
            xerr=[[row["strength"] - ci[0]], [ci[1] - row["strength"]]],
            fmt="o",
            capsize=3,
            color="#b3261e" if row["is_reference"] else "#1f5fbf",
        )
    ax.set_yticks(range(len(rows)), [r["system"] + (" (reference)" if r["is_reference"] else "") for r in rows])
    ax.set_xlabel("Bradley-Terry strength (95 % bootstrap interval)")
    ax.set_title("Human preference leaderboard")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    return buffer.getvalue()
