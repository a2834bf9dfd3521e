"""The study report's prediction-powered estimates as people read them (:mod:`analytics.judges.ppi`): per imported
judge a table of each system's three estimates, rounded (means 2 decimals, λ 2), and a sentence per system saying
how many more physician-labelled questions would bring its interval to the target half-width; where the study
ranks, a second table of pairwise win rates (the share of questions on which physicians prefer the first system).
Full precision stays in the stored result and the JSON download."""

from __future__ import annotations

from analytics.presentation.tables import number
from ranking.sample_design import design_sentence


def estimate_text(figures: dict | None) -> str:
    """A mean and its interval: "0.62 [0.51, 0.73]"; "—" without one."""
    if not figures:
        return "—"
    if not figures["high"] > figures["low"]:
        # every value alike: the normal interval has no width, which reads as certainty it does not have
        return f"{number(figures['mean'])} (all values alike: no interval)"
    return f"{number(figures['mean'])} [{number(figures['low'])}, {number(figures['high'])}]"


def short_number(value: float) -> str:
    """A tag's value or a half-width without trailing zeros: 1, 0.5, 0.33, 0.05."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _estimate_cells(figures: dict) -> dict:
    """The cells a system's row and a pair's row share: the counts and the three estimates, rounded."""
    ppi = figures.get("ppi")
    return {
        "n_labelled": figures["n_human"],
        "n_judge_only": figures["n_judge_only"],
        "physicians": estimate_text(figures.get("classical")),
        "judge": estimate_text(figures.get("judge_only")),
        "ppi": estimate_text(ppi),
        "lam": number(ppi["lambda"]) if ppi else "—",
        "undefined_reason": figures.get("undefined_reason"),
    }


def ppi_rows(judge: dict) -> list[dict]:
    """One row per system of a judge's entry, by name."""
    return [
        {
            "system": system,
            "n_labelled_unscored": figures.get("n_labelled_unscored", 0),
            "n_sampled_untagged": figures.get("n_sampled_untagged", 0),
            **_estimate_cells(figures),
        }
        for system, figures in sorted(judge["systems"].items())
    ]


def pair_rows(judge: dict) -> list[dict] | None:
    """One row per pair of systems of a judge's entry, in the stored order; None where the entry has no pairs (the
    study does not rank, or a designed sample)."""
    if "pairs" not in judge:
        return None
    return [
        {"pair": f"{figures['first']} vs {figures['second']}", **_estimate_cells(figures)} for figures in judge["pairs"]
    ]


def power_sentence(system: str, figures: dict, target_halfwidth: float) -> str:
    """What it takes to bring ``system``'s PPI++ interval to ±``target_halfwidth`` with this judge, in words."""
    target = f"±{short_number(target_halfwidth)}"
    n, more = figures["n_human"], figures["more_needed"]
    if figures["target_met"] and not figures["halfwidth"] > 0:
        return (
            f"{system}: every value on its {n:,} physician-labelled questions is the same, so no interval can be "
            f"estimated from them, and none says how many more {target} takes; more questions will tell."
        )
    if figures["target_met"]:
        return f"{system}'s PPI++ interval is already within {target} (±{number(figures['halfwidth'])} now)."
    if not figures["reachable"]:
        questions = n + figures["n_judge_only"]
        return (
            f"Even with all {questions:,} questions this judge scored labelled by physicians, {system}'s interval "
            f"would stay wider than {target}: it takes more questions, not only more labels."
        )
    if more == 0:  # the power calculation assumes the best split of labelled and unlabelled questions
        return (
            f"By the power calculation, {system}'s {n:,} physician-labelled questions should about do for {target} "
            "with this judge, though its interval is still a little wider: a few more would make sure."
        )
    noun = "question" if more == 1 else "questions"
    return (
        f"With this judge, about {more:,} more physician-labelled {noun} would bring {system}'s interval to {target}."
    )


def scale_note(judge: dict) -> str:
    """How to read the judge-only column: the judge's own scale, biased; saying so when it is not 0 to 1."""
    if judge["score_low"] is None:
        return "This judge scored none of the model answers."
    if judge["unit_scale"]:
        return (
            "Judge only: the judge's mean score, on its own scale (0 to 1 here) and biased: for reference only, not "
            "an estimate of the physicians' score."
        )
    return (
        f"Judge only: the judge's mean score on its own scale, which is not 0 to 1 (its scores run from "
        f"{number(judge['score_low'])} to {number(judge['score_high'])}): biased and not comparable with the "
        "physicians' figures, for reference only."
    )


def ppi_intro(section: dict) -> str:
    """How the physicians' score is made and what the columns are."""
    values = ", ".join(f"{pair['tag']} = {short_number(pair['value'])}" for pair in section["tag_values"])
    level = f"{1 - section['alpha']:.0%}".replace("%", " %")
    return (
        f"Each answer's physician score is the mean over the physicians who tagged it of {values} (the tag scale "
        f"spread evenly from 1 to 0); a system's score is the mean over questions, the reference answer left out. "
        f"Estimated three ways with {level} intervals: from the physicians' tags alone, from the judge alone, and "
        "PPI++ (prediction-powered inference): the judge's scores on every question, their bias corrected on the "
        "questions physicians tagged. λ, from 0 to 1, is how far PPI++ leans on the judge (0: the physicians alone)."
    )


def last_judge_sentence(power: dict | None) -> str:
    """The "before a study starts" figure (:func:`analytics.judges.ppi.last_judge_power`) in words; "" without
    one."""
    if not power:
        return ""
    like = f"A judge like the last one ({power['study']}, {power['judge']})"
    target = f"±{short_number(power['halfwidth'])}"
    if power["needed"] >= power["questions"]:
        return f"{like} would need physicians to rank all {power['questions']:,} questions, or more, for {target}."
    return f"{like} would need about {power['needed']:,} physician questions for {target}."


def ppi_context(result: dict) -> dict:
    """What the study report's page shows of the section (empty when the report has none)."""
    section = result.get("ppi")
    if not section:
        return {}
    tables = [
        {
            "judge": name,
            "rows": ppi_rows(judge),
            "sentences": [
                power_sentence(system, figures, section["target_halfwidth"])
                for system, figures in sorted(judge["systems"].items())
                if figures.get("undefined_reason") is None
            ],
            "scale_note": scale_note(judge),
            "pairs": pair_rows(judge),
        }
        # sorted here: the database returns a stored JSON object's keys shortest first
        for name, judge in sorted(section["judges"].items())
    ]
    design = design_sentence(section["design"]) if section.get("design") else ""
    return {
        "ppi_section": {
            "intro": ppi_intro(section),
            "design": design,
            "tables": tables,
            "left_out": section["left_out"],
            "pairs_note": section.get("pairs_note", ""),
        }
    }
