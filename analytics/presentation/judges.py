"""The study report's judges, style-controlled leaderboard, harm rates and unblinded leaderboard as people read
them: table rows (rounded on the page, full precision in the JSON download), the judges' plot against the band of
physicians, and the sentences an organizer can act on, generated from the figures."""

from __future__ import annotations

import math

from analytics.presentation.headlines import more_needed, names_in_words
from analytics.presentation.ppi import ppi_context
from analytics.presentation.tables import human_label, system_label
from portal.templatetags.portal_tags import percent
from stats.bootstrap import MIN_UNITS_TO_READ
from stats.plots import Bar, BarChart
from stats.results import tied_with_best
from stats.style import STYLE_FEATURES, STYLE_LABELS

ORDINALS = {1: "best", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def judge_label(name: str, result: dict) -> str:
    """An imported judge by its name; a built-in metric by its label ("BLEU (metric)")."""
    section = result.get("judges") or {}
    if name in section.get("imported", []):
        return name
    return f"{human_label(name)} (metric)"


def judge_rows(result: dict) -> list[dict]:
    """One row per judge, best cluster first and within a cluster by acc_eq; a judge without a cluster last."""
    section = result.get("judges") or {}
    physicians = list(((section.get("human_ceiling") or {}).get("physicians") or {}).values())
    rows = []
    for name, figures in section.get("judges", {}).items():
        ci = figures.get("acc_eq_ci")
        percentile = figures.get("percentile_among_physicians")
        rows.append(
            {
                **figures,
                "name": name,
                "label": judge_label(name, result),
                "imported": name in section.get("imported", []),
                "cluster_label": _cluster_label(figures.get("cluster")),
                "acc_eq_low": ci[0] if ci else None,
                "acc_eq_high": ci[1] if ci else None,
                "percentile": None if percentile is None else round(percentile),
                "among_physicians": _among(figures, physicians),
                "among_physicians_words": _among(figures, physicians, short=False),
                "tau_partial": figures.get("segment_tau_b") is not None
                and figures.get("segment_tau_n_items") is not None
                and figures["segment_tau_n_items"] < (figures.get("n_items") or 0),
            }
        )
    # imported judges before the built-in metrics at equal agreement: they are what the organizer came to judge
    rows.sort(
        key=lambda r: (r["cluster"] is None, r["cluster"] or 0, -(r["acc_eq"] or -1.0), not r["imported"], r["label"])
    )
    return rows


def _among(figures: dict, physicians: list[float], *, short: bool = True) -> str:
    """Where the judge stands among the physicians: "better than 2 of 3", "as well as all 2", "above all 3",
    "below all 3"; ``short=False`` for the sentence."""
    judge, n = figures.get("acc_eq_leave_one_out"), len(physicians)
    if judge is None or not n:
        return "—"
    equal = sum(math.isclose(v, judge, abs_tol=1e-9) for v in physicians)
    better = sum(v < judge and not math.isclose(v, judge, abs_tol=1e-9) for v in physicians)
    if better == n:
        return f"above all {n}: check it" if short else f"better than every one of the {n} physicians"
    if equal == n:
        return f"as well as all {n}" if short else f"as well as all {n} physicians do"
    if equal and better:
        text = f"better than {better} and as well as {equal} of {n}"
    elif equal:
        text = f"as well as {equal} of {n}"
    elif not better:
        return f"below all {n}" if short else f"less well than any of the {n} physicians"
    else:
        text = f"better than {better} of {n}"
    return text if short else f"{text} physicians"


def _cluster_label(cluster: int | None) -> str:
    if cluster is None:
        return "—"
    return f"{ORDINALS.get(cluster, f'{cluster}th')} cluster" if cluster > 1 else "best cluster"


def judge_sentence(result: dict) -> str:
    """What the organizer can conclude, e.g. "Judge X is in the best cluster and agrees with the physicians'
    consensus better than 2 of 3 physicians; Y and Z cannot be told apart." From the figures only."""
    rows = [r for r in judge_rows(result) if r["acc_eq"] is not None]
    if not rows:
        return "No judge could be compared with the physicians: no question has two ranked model answers it scored."
    n_questions = result.get("n_questions", 0)
    if n_questions < MIN_UNITS_TO_READ:
        return (
            f"Too early to compare the judges with the physicians: {n_questions:,} question"
            f"{'s' if n_questions != 1 else ''} ranked so far; {more_needed(n_questions, 'ranked questions')}."
        )
    top = rows[0]
    sentences = []
    tied = tied_with_best({r["label"]: (r["acc_eq"], _pair(r.get("acc_eq_ci"))) for r in rows})
    if top["cluster"] is None and len(tied) > 1:
        return (
            f"No judge agrees with the physicians clearly best: {names_in_words([str(t) for t in tied])} cannot be told apart (their "
            "95 % intervals of agreement overlap)."
        )
    if top["cluster"] is None:
        sentence = f"{top['label']} agrees best with the physicians (agreement {top['acc_eq']:.2f})"
    else:
        sentence = f"{top['label']} is in the best cluster"
    if top["among_physicians"] != "—":
        sentence += f" and agrees with the physicians' consensus {top['among_physicians_words']}"
    if top.get("above_human_ceiling"):
        sentence += ": check that it did not see the reference answers before trusting it"
    sentences.append(sentence + ".")
    clusters: dict[int, list[str]] = {}
    for row in rows:
        if row["cluster"] is not None:
            clusters.setdefault(row["cluster"], []).append(row["label"])
    for number, labels in sorted(clusters.items()):
        others = labels[1:] if number == top["cluster"] else labels
        if number == top["cluster"] and others:
            sentences.append(f"{names_in_words(others)} cannot be told apart from it on this study.")
        elif number != top["cluster"] and len(labels) > 1:
            sentences.append(f"{names_in_words(labels)} cannot be told apart (the {_cluster_label(number)}).")
    below = [label for number, labels in sorted(clusters.items()) if number != top["cluster"] for label in labels]
    if below:
        verb = "does" if len(below) == 1 else "do"
        sentences.append(f"{names_in_words(below)} {verb} significantly worse than the best cluster (p < 0.05).")
    return " ".join(sentences)


def _pair(ci) -> tuple[float, float] | None:
    return (ci[0], ci[1]) if ci and ci[0] is not None and ci[1] is not None else None


def judges_chart(result: dict) -> BarChart:
    """Each judge's acc_eq with its 95 % interval as a dot and whisker, the physicians' range as a band, 0–1."""
    section = result.get("judges") or {}
    ceiling = section.get("human_ceiling") or {}
    rows = judge_rows(result)
    # the number of questions goes in the caption when every judge has the same (short labels read on a phone)
    counts = {r.get("n_items") for r in rows if r["acc_eq"] is not None}
    same_n = counts.pop() if len(counts) == 1 else None
    bars = tuple(
        Bar(
            label=r["label"],
            value=r["acc_eq"],
            ci=(r["acc_eq_low"], r["acc_eq_high"]) if r["acc_eq_low"] is not None else None,
            n=r.get("n_items") if r["acc_eq"] is not None and same_n is None else None,
            note=None if r["acc_eq"] is not None else "no question with two ranked answers it scored",
            highlight=bool(r.get("above_human_ceiling")),
        )
        for r in rows
    )
    band = (ceiling["low"], ceiling["high"]) if ceiling.get("low") is not None else None
    caption = "Best cluster first. Whiskers: 95 % bootstrap interval over questions"
    caption += f" (n = {same_n} questions)." if same_n is not None else "."
    if band:
        caption += f" Band: the {len(ceiling.get('physicians') or {})} physicians, each against the others."
    if any(b.highlight for b in bars):
        caption += " Red: above every physician, check before trusting."
    return BarChart(
        "Judges' agreement with the physicians",
        "acc_eq: pairs put in the physicians' order (0–1)",
        bars,
        n_unit="questions",
        style="dot",
        width=5.0,
        caption=caption,
        band=band,
        band_label="physicians' range" if band else "",
    )


# -- style control, harm, recognised reference -----------------------------------------------------------------


def style_rows(result: dict) -> list[dict]:
    """Per system: plain and style-controlled strength (interval of the latter), best controlled first."""
    style = result.get("style_control") or {}
    plain = style.get("plain_strengths") or {}
    controlled = style.get("style_controlled_strengths") or {}
    intervals = style.get("style_controlled_strengths_ci") or {}
    reference = {r["system"] for r in result.get("human_leaderboard", []) if r.get("is_reference")}
    rows = [
        {
            "system": system_label(system, system in reference),
            "name": system,
            "plain": plain.get(system),
            "controlled": controlled[system],
            "ci": intervals.get(system),
        }
        for system in controlled
    ]
    return sorted(rows, key=lambda r: -r["controlled"])


def style_coefficient_rows(result: dict) -> list[dict]:
    coefficients = (result.get("style_control") or {}).get("style_coefficients") or {}
    return [
        {"feature": f, "label": STYLE_LABELS[f], **coefficients[f]}
        | {"undefined": coefficients[f].get("value") is None}
        for f in STYLE_FEATURES
        if f in coefficients
    ]


def style_sentence(result: dict) -> str:
    """The style effect in words: the strongest coefficient whose interval excludes 0, else that none is clear."""
    rows = [r for r in style_coefficient_rows(result) if not r["undefined"]]
    clear = [r for r in rows if r.get("ci") and (r["ci"][0] > 0 or r["ci"][1] < 0)]
    if not rows:
        return "No style feature differs between the ranked answers: there is no style effect to estimate."
    n_questions = result.get("n_questions", 0)
    if n_questions < MIN_UNITS_TO_READ:
        return (
            f"Too early to read a style effect: {n_questions:,} question{'s' if n_questions != 1 else ''} ranked "
            f"so far; {more_needed(n_questions, 'ranked questions')}."
        )
    if not clear:
        return "No style feature clearly sways the physicians: every interval includes 0."
    strongest = max(clear, key=lambda r: abs(r["value"]))
    what = STYLE_WORDS[strongest["feature"]]
    direction = "win" if strongest["value"] > 0 else "lose"
    low, high = strongest["ci"]
    return (
        f"At equal quality, {what} {direction}: coefficient {strongest['value']:+.2f} "
        f"(95 % interval {low:+.2f} to {high:+.2f}); the style-controlled strengths take this out."
    )


STYLE_WORDS = {
    "length": "longer answers",
    "headers": "answers with more markdown headers",
    "list_items": "answers with more list items",
    "bold": "answers with more bold text",
}


def unblinded_sentence(result: dict) -> str:
    board = result.get("unblinded_leaderboard") or {}
    dropped = board.get("n_dropped", 0)
    if not dropped:
        return "No ranker recognised the reference answer in the unblinding check: nothing to leave out."
    judgements = f"{dropped} judgement{'s' if dropped != 1 else ''}"
    if board.get("undefined_reason"):
        return f"Without the {judgements} whose ranker recognised the reference: {board['undefined_reason']}."
    if board.get("order_changed"):
        return (
            f"Without the {judgements} whose ranker recognised the reference answer, the order of the systems changes:"
        )
    return f"Without the {judgements} whose ranker recognised the reference answer, the order of the systems stays the same."


def harm_by_system(harm_rates: list[dict] | None) -> dict[str, str]:
    """Each system's potential-harm flag rate (:func:`stats.rates.harm_rates`) as one cell
    ("12 % (5 % – 30 %)"), to stand beside every leaderboard of a study; empty when the study did not ask."""
    cells = {}
    for row in harm_rates or []:
        ci = row.get("rate_ci")
        interval = f" ({percent(ci[0])} – {percent(ci[1])})" if ci else ""
        cells[row["system"]] = f"{percent(row['rate'])}{interval}"
    return cells


def judge_context(result: dict) -> dict:
    """What the study report's page shows of these sections (empty for other reports)."""
    context: dict = {"harm": harm_by_system(result.get("harm_rates"))}
    if (result.get("judges") or {}).get("judges"):
        context["judge_rows"] = judge_rows(result)
        context["judge_sentence"] = judge_sentence(result)
        context["judge_ceiling"] = result["judges"].get("human_ceiling")
    if (result.get("style_control") or {}).get("style_controlled_strengths"):
        context["style_rows"] = style_rows(result)
        context["style_coefficients"] = style_coefficient_rows(result)
        context["style_sentence"] = style_sentence(result)
    if "unblinded_leaderboard" in result:
        context["unblinded_sentence"] = unblinded_sentence(result)
    # the prediction-powered estimates come with an imported judge: their page context travels with the judges'
    context.update(ppi_context(result))
    return context
