"""The study report's hallucination-span sections as people read them: agreement and analysis tables (rounded,
"undefined" with its reason) and their plots (rates and shares with intervals; the kind mix stacked, with a
legend in words)."""

from __future__ import annotations

from analytics.presentation.tables import human_label, interval_text, number
from metrics.spans import KIND_LABELS, KINDS
from stats import plots
from stats.plots import BarChart
from stats.results import StatResult
from stats.stacked_plots import StackedBar, StackedBarChart

SPAN_PLOTS = {
    "span_rate": "Hallucination rate per system",
    "span_share": "Hallucinated share of the answer per system",
    "span_kinds": "Kinds of hallucination per system",
}


def _figure(data: dict | None, *, percent: bool = False) -> dict:
    stat = StatResult.from_dict(data)
    if stat.value is None:
        return {"value": "undefined", "ci": "", "why": stat.undefined_reason or "no value", "n": stat.n_items}

    ci = interval_text(stat.ci, percent=percent) if stat.ci is not None else ""
    return {
        "value": f"{number(100 * stat.value, 1)} %" if percent else number(stat.value, 3),
        "ci": ci,
        "why": "",
        "n": stat.n_items,
    }


def _agreement_rows(section: dict) -> list[dict]:
    groups = [("All systems", section.get("overall", {}))]
    groups += sorted((section.get("by_system") or {}).items())
    return [
        {
            "group": name,
            "iou": _figure(block.get("pairwise_iou")),
            "alpha": _figure(block.get("krippendorff_alpha")),
            "notes": list(StatResult.from_dict(block.get("pairwise_iou")).notes),
        }
        for name, block in groups
    ]


def _kinds(mix: dict) -> list[dict]:
    shares = mix.get("shares") or {}
    return [{"kind": KIND_LABELS[k], "share": f"{100 * shares.get(k, 0.0):.0f} %"} for k in KINDS] if shares else []


def _analysis_rows(groups: dict, *, label=lambda key: key) -> list[dict]:
    return [
        {
            "group": label(key),
            "n": block.get("n_answers", 0),
            "rate": _figure(block.get("hallucination_rate"), percent=True),
            "share": _figure(block.get("span_share"), percent=True),
            "kinds": _kinds(block.get("kind_mix") or {}),
            "characters": (block.get("kind_mix") or {}).get("characters", 0),
        }
        for key, block in sorted(groups.items())
    ]


def span_context(result: dict) -> dict:
    """What the report page shows of ``result["spans"]`` (nothing for other studies)."""
    spans = result.get("spans")
    if not spans:
        return {}
    analysis = spans.get("analysis") or {}
    return {
        "spans": {
            "n_answers": spans.get("n_answers", 0),
            "n_physicians": spans.get("n_physicians", 0),
            "agreement": _agreement_rows(spans.get("agreement") or {}),
            "tables": [
                ("Per system", "System", _analysis_rows(analysis.get("by_system") or {})),
                ("Per QA type", "QA type", _analysis_rows(analysis.get("by_qa_type") or {}, label=human_label)),
                ("All answers", "", _analysis_rows({"All systems": analysis.get("overall", {})})),
            ],
            "kinds": [KIND_LABELS[k] for k in KINDS],
        }
    }


def span_plot_names(result: dict) -> list[str]:
    by_system = ((result.get("spans") or {}).get("analysis") or {}).get("by_system") or {}
    return list(SPAN_PLOTS) if by_system else []


def span_chart(result: dict, name: str) -> BarChart | StackedBarChart:
    by_system = sorted(result["spans"]["analysis"]["by_system"].items())
    if name == "span_kinds":
        bars = tuple(
            StackedBar(
                system,
                tuple((block.get("kind_mix") or {}).get("shares", {}).get(k, 0.0) for k in KINDS),
                n=(block.get("kind_mix") or {}).get("characters", 0),
            )
            for system, block in by_system
        )
        return StackedBarChart(
            SPAN_PLOTS[name],
            "Share of the characters the physicians marked",
            tuple(KIND_LABELS[k] for k in KINDS),
            bars,
            n_unit="characters marked",
            caption="Each physician's marks counted. Systems with nothing marked have no bar.",
        )
    key = "hallucination_rate" if name == "span_rate" else "span_share"
    bars = tuple(plots.stat_bar(system, StatResult.from_dict(block[key])) for system, block in by_system)
    if name == "span_rate":
        return BarChart(
            SPAN_PLOTS[name],
            "Share of answers with a majority-marked span",
            bars,
            n_unit="answers",
            caption="Whiskers: Wilson 95 % interval. n: answers read by a physician.",
        )
    if name == "span_share":
        return BarChart(
            SPAN_PLOTS[name],
            "Mean share of the answer's characters marked by a majority",
            bars,
            n_unit="answers",
            caption="Whiskers: 95 % bootstrap interval over answers. n: answers read by a physician.",
        )
    raise KeyError(name)
