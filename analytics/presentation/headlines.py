"""Headline numbers of a report, each with a one-sentence reading for people who do not read statistics."""

from __future__ import annotations

import statistics

from analytics.presentation.tables import STAT_LABELS, human_label, pair_rows
from stats.pairs import strength_of_agreement
from stats.results import StatResult


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
        words = strength_of_agreement(kappa.value)
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
