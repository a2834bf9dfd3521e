"""A judge's card as people read it (:mod:`analytics.judges.card` computes it into the study report): each figure
rounded with its n and interval, and the sentence that says how to read it; "not defined" with the reason where the
data cannot say. Full precision stays in the report's JSON download."""

from __future__ import annotations

from analytics.presentation.judges import judge_label, judge_rows
from analytics.presentation.tables import interval_text
from portal.templatetags.portal_tags import percent
from stats.plots import CalibrationBin, CalibrationChart
from stats.results import same_value


def judge_names(result: dict) -> list[str]:
    """Every judge with a card or an agreement row, in the order of the report's judges table."""
    names = [row["name"] for row in judge_rows(result)]
    cards = ((result.get("judge_cards") or {}).get("judges")) or {}
    return names + [name for name in sorted(cards) if name not in names]


def judge_card_context(result: dict, name: str) -> dict | None:
    """The page's context for judge ``name`` of a study report, None when the report has no such judge."""
    if name not in judge_names(result):
        return None
    card = (((result.get("judge_cards") or {}).get("judges")) or {}).get(name)
    agreement = next((row for row in judge_rows(result) if row["name"] == name), None)
    context: dict = {
        "judge_name": name,
        "judge_label": judge_label(name, result),
        "agreement": agreement,
        "agreement_sentence": _agreement_sentence(agreement, result),
        "card": card,
    }
    if card is None:
        context["card_reason"] = "this report was computed before judge cards existed: start a new study report"
        return context
    context["family"] = card.get("family") or ""
    context["value_words"] = _value_words(card)
    context["calibration"] = _calibration(card.get("calibration") or {})
    context["bias_rows"] = _bias_rows(card.get("bias") or {})
    context["bias_reason"] = (card.get("bias") or {}).get("undefined_reason") or ""
    context["position"] = _position(card.get("position") or {})
    context["self_preference"] = _self_preference(card.get("self_preference") or {}, context["family"])
    context["abstention"] = _abstention(card.get("abstention") or {})
    return context


def calibration_chart(result: dict, name: str) -> CalibrationChart | None:
    """The judge's reliability diagram, None when its calibration is not defined."""
    card = (((result.get("judge_cards") or {}).get("judges")) or {}).get(name) or {}
    figures = card.get("calibration") or {}
    if not figures.get("bins"):
        return None
    return CalibrationChart(
        title=f"Calibration of {judge_label(name, result)}",
        xlabel="The judge's probability that the answer is good (mean in the bin)",
        ylabel="The physicians' value (mean in the bin)",
        bins=tuple(CalibrationBin(b["mean_prob"], b["mean_outcome"], int(b["n"])) for b in figures["bins"]),
        caption="On the diagonal a judge is calibrated: answers it gives 0.8 get 0.8 from physicians.",
    )


def _agreement_sentence(row: dict | None, result: dict) -> str:
    if row is None:
        return "Not compared with the physicians in this report."
    if row.get("acc_eq") is None:
        return "Agreement is not defined: no pair of model answers was both ranked by physicians and scored."
    ceiling = (result.get("judges") or {}).get("human_ceiling") or {}
    text = (
        f"It puts {percent(row['acc_eq'])} of the pairs of model answers in the physicians' order "
        f"(95 % interval {interval_text(row.get('acc_eq_ci'))}; {row.get('n_items') or 0} questions)."
    )
    if row.get("acc_eq_leave_one_out") is not None and ceiling.get("mean") is not None:
        text += (
            f" Scored as each physician is against the others' consensus it reaches {row['acc_eq_leave_one_out']:.2f},"
            f" where the physicians reach {ceiling['mean']:.2f} on average: it does {row['among_physicians_words']}."
        )
    else:
        text += " No physicians' ceiling: fewer than two physicians ranked the same questions."
    return text


def _value_words(card: dict) -> str:
    if card.get("builtin"):
        return ""
    source = card.get("value_source")
    if source == "probability":
        return "Calibration, bias and self-preference read the probability the judge's file gives for each answer."
    if source == "score":
        return "The judge's file gives no probabilities; its scores, which lie between 0 and 1, are read as one."
    return f"Calibration, bias and self-preference are not defined: {card.get('value_reason') or 'no values'}."


def _calibration(figures: dict) -> dict:
    if figures.get("ece") is None:
        return {"reason": figures.get("undefined_reason") or "not enough answers"}
    over = figures["mean_prob"] - figures["mean_outcome"]
    lean = "more optimistic than" if over > 0.005 else "less optimistic than" if over < -0.005 else "as optimistic as"
    return {
        "n": figures["n"],
        "ece": f"{figures['ece']:.3f}",
        "ece_ci": _interval3(figures.get("ece_ci"), figures["n"]),
        "brier": f"{figures['brier']:.3f}",
        "brier_ci": _interval3(figures.get("brier_ci"), figures["n"]),
        "sentence": (
            f"Over {figures['n']} answers the judge's probabilities are on average {figures['mean_prob']:.2f}, the "
            f"physicians' values {figures['mean_outcome']:.2f}: it is {lean} the physicians. The expected "
            "calibration error is the average gap between the two within bins of the judge's probability (0: "
            "calibrated); the Brier score the mean squared gap per answer (0 is perfect; always saying 0.5 gives "
            "0.25 on answers physicians agree on)."
        ),
        "bins": [
            {
                "range": f"{b['low']:.1f}–{b['high']:.1f}",
                "n": b["n"],
                "mean_prob": f"{b['mean_prob']:.2f}",
                "mean_outcome": f"{b['mean_outcome']:.2f}",
            }
            for b in figures.get("bins") or []
        ],
    }


def _interval3(ci, n: int) -> str:
    """An interval of a small error figure, to three decimals (two would read 0.01 – 0.01)."""
    if not ci or ci[0] is None or ci[1] is None:
        return "—"
    if same_value(float(ci[0]), float(ci[1])):
        return interval_text(ci, n=n, unit="answers")
    return f"{ci[0]:.3f} – {ci[1]:.3f}"


def _bias_rows(figures: dict) -> list[dict]:
    rows = []
    groups = dict(figures.get("groups") or {})
    if figures.get("overall"):
        groups = {**groups, "All QA types": figures["overall"]}
    for group, cell in groups.items():
        row = {"group": group, "n": cell.get("n", 0)}
        if cell.get("mean") is None:
            row["reason"] = cell.get("undefined_reason") or "not enough answers"
        else:
            row["mean"] = f"{cell['mean']:+.2f}"
            row["ci"] = f"{cell['low']:+.2f} to {cell['high']:+.2f}"
            row["reading"] = _lean(cell["mean"], cell["low"], cell["high"])
        rows.append(row)
    return rows


def _lean(mean: float, low: float, high: float) -> str:
    if low > 0:
        return "more lenient than the physicians"
    if high < 0:
        return "stricter than the physicians"
    return "no difference shown"


def _position(figures: dict) -> dict:
    if figures.get("undefined_reason") and not figures.get("first_position"):
        return {"reason": figures["undefined_reason"]}
    first = figures.get("first_position") or {}
    flips = figures.get("flips") or {}
    out: dict = {}
    if first.get("rate") is None:
        out["first_reason"] = first.get("undefined_reason") or "no verdict named a winner"
    else:
        out["first"] = {
            "rate": percent(first["rate"]),
            "ci": f"{percent(first['low'])} – {percent(first['high'])}",
            "n": first["n"],
            "ties": _count(first.get("ties", 0), "tie"),
            "p": _p_text(first.get("p_value")),
            "sentence": (
                "An unbiased judge picks the answer shown first about half the time; an interval that leaves out "
                "50 % means the order it was shown the answers in sways its verdict."
            ),
        }
    if flips.get("rate") is None:
        out["flips_reason"] = flips.get("undefined_reason") or "no pair was judged in both orders"
    else:
        out["flips"] = {
            "rate": percent(flips["rate"]),
            "ci": f"{percent(flips['low'])} – {percent(flips['high'])}",
            "n": flips["n"],
            "to_first": flips.get("to_first", 0),
            "sentence": (
                f"Of {flips['n']} pairs judged in both orders, the verdict changed with the order in "
                f"{percent(flips['rate'])}; in {flips.get('to_first', 0)} of them the judge chose whichever answer came "
                "first both times. A consistent judge keeps its verdict when the order is swapped."
            ),
        }
    return out


def _self_preference(figures: dict, family: str) -> dict:
    if figures.get("effect") is None:
        return {"reason": figures.get("undefined_reason") or "not enough answers"}
    low, high, p = figures["low"], figures["high"], figures.get("p_value")
    # a direction only where the interval leaves 0 out and the permutation test agrees: with few questions the
    # bootstrap interval can be narrow while shuffling the families within questions changes as much
    shown = p is None or p < 0.05
    if low > 0 and shown:
        reading = f"the judge rates its own family's ({family}) answers higher than physicians do"
    elif high < 0 and shown:
        reading = f"the judge rates its own family's ({family}) answers lower than physicians do"
    else:
        reading = "no preference for its own family shown beyond what physicians give"
    return {
        "effect": f"{figures['effect']:+.2f}",
        "ci": f"{low:+.2f} to {high:+.2f}",
        "p": _p_text(figures.get("p_value")),
        "n_own": figures["n_own"],
        "n_other": figures["n_other"],
        "sentence": (
            f"On {figures['n_own']} answers of its own family and {figures['n_other']} of others: {reading}. The "
            "figure is how much more (judge minus physicians) the judge gives its own family's answers than the "
            "others', on 0–1."
        ),
    }


def _abstention(figures: dict) -> dict:
    bands = figures.get("bands") or []
    if not bands:
        return {"reason": figures.get("undefined_reason") or "no question to count"}
    rows = [
        {
            "band": band["band"],
            "n_questions": band["n_questions"],
            "judge": _rate_text(band.get("judge") or {}),
            "physicians": _rate_text(band.get("physicians") or {}),
        }
        for band in [*bands, *([{**figures["overall"], "band": "All questions"}] if figures.get("overall") else [])]
    ]
    trend = figures.get("trend") or {}
    trend_text = (
        f"Spearman's ρ between a question's difficulty and the judge's declines: {trend['rho']:+.2f} "
        f"({_p_text(trend.get('p_value'))})."
        if trend.get("rho") is not None
        else f"No trend figure: {trend.get('undefined_reason') or 'too few questions'}."
    )
    return {
        "rows": rows,
        "trend": trend_text,
        "note": "Fewer than three bands: too many questions share one difficulty." if figures.get("bands_note") else "",
        "sentence": (
            "The judge's share of answers it declined (\"cannot judge\") and the physicians' share of their tasks "
            "on those questions that they put aside, by the question's difficulty (1 minus the physicians' mean "
            "value of its answers, in thirds). A judge that declines where physicians also hesitate knows its "
            "limits; one that declines easy questions, or never declines hard ones, does not."
        ),
    }


def _rate_text(cell: dict) -> str:
    if cell.get("rate") is None:
        return "—"
    ci = f" ({percent(cell['low'])} – {percent(cell['high'])})" if cell.get("low") is not None else ""
    return f"{percent(cell['rate'])}{ci} of {cell['n']}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _p_text(p: float | None) -> str:
    if p is None:
        return "no p-value"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
