"""Headline numbers of a report, each with a one-sentence reading for people who do not read statistics."""

from __future__ import annotations

import statistics

from analytics.presentation.tables import STAT_LABELS, human_label, interval_text, pair_rows
from analytics.selectors import SCORE_METRICS
from stats.bootstrap import MIN_UNITS_TO_READ
from stats.pairs import strength_of_agreement
from stats.results import StatResult, same_value, tied_with_best


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _figure(label: str, stat: StatResult, *, percent: bool = False, unit: str = "items") -> dict:
    """A headline figure: the value in words, or "undefined" with the reason under it. An interval of no width is
    not shown as one (it is no certainty): the detail says it could not be estimated from the n units."""
    if stat.value is None:
        return {"label": label, "value": "undefined", "detail": stat.undefined_reason or "no value"}
    value = _pct(stat.value) if percent else _num(stat.value)
    detail = f"n = {stat.n_items:,} {unit}" if stat.n_items else ""
    if stat.ci is not None:
        text = interval_text(stat.ci, n=stat.n_items, unit=unit, percent=percent)
        # "not estimable from 2 questions" says n already
        detail = f"95 % interval {text}" + (f" · {detail}" if detail and "not estimable" not in text else "")
    return {"label": label, "value": value, "detail": detail}


def more_needed(n: int, unit: str) -> str:
    """What a report still lacks before its headline reads anything (:data:`stats.bootstrap.MIN_UNITS_TO_READ`):
    "at least 10 {unit} are needed, 8 more"."""
    more = MIN_UNITS_TO_READ - n
    return f"at least {MIN_UNITS_TO_READ:,} {unit} are needed, {more:,} more"


def names_in_words(names: list[str]) -> str:
    """Names joined for a sentence: "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _why(reason: str | None) -> str:
    """A stored reason inside a sentence that already says "undefined" or "cannot": without a second "undefined"."""
    return (reason or "no value").removeprefix("undefined: ").removeprefix("undefined ")


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
    elif raw.n_items < MIN_UNITS_TO_READ:
        reading = (
            f"Too early to read the reviewers' agreement: {raw.n_items:,} item{'s' if raw.n_items != 1 else ''} "
            f"reviewed twice so far; {more_needed(raw.n_items, 'items reviewed twice')}."
        )
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
    """Below :data:`stats.bootstrap.MIN_UNITS_TO_READ` ranked questions the study is too small to read, and the
    reading says how many more it needs; above it, a preferred system or best metric is named only when nothing
    else comes close (:func:`stats.results.tied_with_best`), and a tie is called a tie."""
    n_questions = result.get("n_questions", 0)
    w = StatResult.from_dict(result.get("ranking_agreement", {}).get("kendall_w"), "kendall_w")
    figures = [
        {"label": "Questions", "value": f"{n_questions:,}", "detail": "ranked by physicians"},
        {"label": "Judgements", "value": f"{result.get('n_judgements', 0):,}", "detail": "answers ranked"},
        _figure("Kendall's W (physicians agree)", w, unit="questions"),
    ]
    if n_questions < MIN_UNITS_TO_READ:
        figures[0]["detail"] += f" · {MIN_UNITS_TO_READ - n_questions:,} more needed to read the study"
        reading = (
            f"Too early to read: {n_questions:,} question{'s' if n_questions != 1 else ''} ranked so far. Which "
            f"system physicians prefer and which metric follows them best is read from {MIN_UNITS_TO_READ:,} ranked "
            f"questions on: {MIN_UNITS_TO_READ - n_questions:,} more to rank."
        )
        return {"figures": figures, "reading": reading}
    parts = [_preference_clause(result, n_questions)]
    whose = "their" if parts[0].startswith("Physicians") else "physicians'"
    if w.value is not None:
        parts.append(f"{whose} rankings agreed {_kendall_w_words(w.value)} (Kendall's W {_num(w.value)})")
    else:
        parts.append(f"physicians' agreement (Kendall's W) cannot be measured: {_why(w.undefined_reason)}")
    metric = _metric_clause(result)
    if metric is not None:
        clause, figure = metric
        parts.append(clause)
        figures.append(figure)
    reading = "; ".join(p for p in parts if p) + "."
    return {"figures": figures, "reading": reading[:1].upper() + reading[1:]}


def _preference_clause(result: dict, n_questions: int) -> str:
    """Which system the physicians preferred, when one stands apart from the others (the reference left out)."""
    models = [
        r for r in result.get("human_leaderboard", []) if r.get("strength") is not None and not r.get("is_reference")
    ]
    if not models:
        return ""
    if len(models) == 1:
        return f"{models[0]['system']} is the only system in the study: there is no other system to prefer"
    tied = tied_with_best(
        {r["system"]: (r["strength"], tuple(r["strength_ci"]) if r.get("strength_ci") else None) for r in models}
    )
    if len(tied) == 1:
        top = next(r for r in models if r["system"] == tied[0])
        return (
            f"Physicians preferred {top['system']} (Bradley-Terry strength {_num(top['strength'])}) over "
            f"{len(models) - 1} other system{'s' if len(models) != 2 else ''} across {n_questions:,} questions"
        )
    return (
        f"No system is clearly preferred across {n_questions:,} questions: {names_in_words([str(t) for t in tied])} cannot be "
        "told apart (their Bradley-Terry 95 % intervals overlap)"
    )


def _metric_clause(result: dict) -> tuple[str, dict] | None:
    """Which metric follows the physicians best (per-question τ-b), or which metrics tie for it; None without one."""
    correlation = result.get("correlation", {})
    # stored results come back from PostgreSQL's jsonb with their keys reordered: the metric list's order
    ordered = sorted(correlation, key=lambda m: (SCORE_METRICS.index(m) if m in SCORE_METRICS else 99, m))
    taus = {m: StatResult.from_dict(correlation[m].get("segment_tau_b")) for m in ordered}
    values = {m: t.value for m, t in taus.items() if t.value is not None}
    if not values:
        return None
    tied = [str(m) for m in tied_with_best({m: (value, taus[m].ci) for m, value in values.items()})]
    best = taus[tied[0]]
    names = [human_label(m) for m in tied]
    if len(tied) == 1:
        return (
            f"{names[0]} follows physicians best (per-question τ-b {_num(best.value)})",
            _figure(f"Best metric: {names[0]} τ-b", best, unit="questions"),
        )
    if all(same_value(values[m], values[tied[0]]) for m in tied):
        return (
            f"{names_in_words(names)} follow physicians equally well (per-question τ-b {_num(best.value)})",
            {"label": "Metrics tied, τ-b", "value": _num(best.value), "detail": names_in_words(names)},
        )
    listed = [f"{name} ({_num(values[m])})" for name, m in zip(names, tied, strict=True)]
    return (
        f"no metric follows physicians clearly best: {names_in_words(listed)} cannot be told apart by per-question τ-b "
        "(their 95 % intervals overlap)",
        {"label": "Best metric, τ-b", "value": "no clear best", "detail": f"{len(tied)} metrics' intervals overlap"},
    )


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
