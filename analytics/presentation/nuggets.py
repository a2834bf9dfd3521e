"""A study's nugget figures as the organizer reads them: leaderboard rows, the chart, the agreement table with its
one-sentence reading, the rank correlations and one item's answers with the nuggets each labeller found."""

from __future__ import annotations

from dataclasses import dataclass

from analytics.nuggets.board import NuggetBoard, NuggetScores, item_labels, labeller_label
from analytics.presentation.headlines import more_needed, names_in_words
from analytics.presentation.people import person_name
from analytics.presentation.tables import interval_text, number, system_label
from evaluation.nuggets import CONSENSUS, CORRELATED_SCORES
from metrics.nuggets import SCORE_LABELS, SCORE_NAMES
from stats.bootstrap import MIN_UNITS_TO_READ
from stats.plots import Bar, BarChart
from stats.results import tied_with_best

LABEL_WORDS = {"support": "Supported", "partial": "Partly supported", "not_support": "Not supported"}
IMPORTANCE_WORDS = {"vital": "Vital", "okay": "Okay", "avoid": "Must not appear"}


def interval(ci) -> str:
    """A 95 % interval in a cell: "0.80 – 1.40", "—", or "not estimable" for one of no width."""
    return interval_text(ci)


def labeller_name(name: str, names: dict[str, str] | None = None) -> str:
    """A labeller as the organizer's page names it: a physician by their name where ``names``
    (:func:`analytics.presentation.people.names_by_pseudonym`) knows it, else as stored (the board, the CSV)."""
    if name in (names or {}):
        return f"Physician {person_name(name, names)}"
    return labeller_label(name)


def labeller_choices(report: NuggetBoard, names: dict[str, str] | None = None) -> list[tuple[str, str]]:
    return [(name, labeller_name(name, names)) for name in report.labellers]


def chosen_labeller(report: NuggetBoard, asked: str | None) -> str | None:
    """The labeller asked for if it has scores, else the consensus (or the first labeller there is)."""
    names = report.labellers
    if asked in names:
        return asked
    return names[0] if names else None


def score_columns(report: NuggetBoard, labeller: str) -> list[tuple[str, str]]:
    """(score, heading) of the scores this labeller has (precision only where sentences were marked)."""
    present = {score for by in report.summary["systems"].values() for score in by.get(labeller, {})}
    return [(score, SCORE_LABELS[score]) for score in SCORE_NAMES if score in present]


@dataclass(frozen=True)
class Cell:
    value: str
    ci: str


def leaderboard_rows(report: NuggetBoard, labeller: str) -> list[dict]:
    """One row per system the labeller scored, best ``all`` score first (systems without one last)."""
    columns = [score for score, _ in score_columns(report, labeller)]
    rows = []
    for system, by in report.summary["systems"].items():
        entry = by.get(labeller)
        if entry is None:
            continue
        cells = [Cell(number(entry.get(score)), interval(entry["ci"].get(score))) for score in columns]
        rows.append(
            {
                "raw": system,
                "entry": entry,
                "reference": system in report.reference_systems,
                "system": system_label(system, system in report.reference_systems),
                "all": entry.get("all"),
                "cells": cells,
                "n_answers": entry["n_answers"],
            }
        )
    rows.sort(key=lambda r: (r["all"] is None, -(r["all"] or 0.0), r["system"]))
    return rows


def leaderboard_chart(report: NuggetBoard, labeller: str, names: dict[str, str] | None = None) -> BarChart:
    """The ``all`` score per system with its interval, on an axis from 0 to 1, best first."""
    bars = []
    for row in leaderboard_rows(report, labeller):
        entry = row["entry"]
        ci = entry["ci"].get("all")
        bars.append(
            Bar(
                row["system"],
                entry.get("all"),
                ci=tuple(ci) if ci else None,
                n=entry["n_answers"],
                note=None if entry.get("all") is not None else "no vital or okay nugget in its items",
                highlight=row["reference"],
            )
        )
    return BarChart(
        f"Nugget score per system ({_lowered(labeller_name(labeller, names))})",
        "Mean nugget score (support 1, partial 0.5; vital and okay nuggets)",
        tuple(bars),
        n_unit="answers",
        style="dot",
        full_scale=True,
        caption="Best first. Whiskers: 95 % bootstrap interval over answers."
        + (" Red: the reference answer." if any(b.highlight for b in bars) else ""),
    )


def agreement_rows(report: NuggetBoard, names: dict[str, str] | None = None) -> list[dict]:
    """Each automatic labeller against the physicians' consensus, then each physician against the others."""
    agreement = report.summary["agreement"]
    rows = [
        _figures_row(labeller_label(name), figures, automatic=True) for name, figures in agreement["judges"].items()
    ]
    ceiling = agreement.get("human_ceiling") or {}
    rows += [
        _figures_row(f"{labeller_name(name, names)} against the others", figures, automatic=False)
        for name, figures in (ceiling.get("per_human") or {}).items()
    ]
    return rows


def _lowered(text: str) -> str:
    """A label inside a sentence: its first letter lowered, unless it names a person (a name keeps its capital)."""
    return text if text.startswith("Physician ") and not text.startswith("Physicians'") else text[:1].lower() + text[1:]


def _figures_row(name: str, figures: dict, *, automatic: bool) -> dict:
    kappa_ci = (
        [figures["kappa_ci_low"], figures["kappa_ci_high"]]
        if figures.get("kappa_ci_low") is not None and figures.get("kappa_ci_high") is not None
        else None
    )
    f1 = figures.get("f1") or {}
    return {
        "name": name,
        "automatic": automatic,
        "kappa": number(figures.get("kappa")),
        "kappa_ci": interval(kappa_ci),
        "macro_f1": number(figures.get("macro_f1")),
        "f1": [number(f1.get(label)) for label in ("support", "partial", "not_support")],
        "n": figures.get("n") or 0,
        "note": _note(figures.get("note")),
    }


def _note(note) -> str:
    return str(note)[0].upper() + str(note)[1:] + "." if note else ""


def human_alpha(report: NuggetBoard) -> dict | None:
    alpha = report.summary["agreement"].get("human_alpha")
    if not alpha:
        return None
    ci = [alpha["ci_low"], alpha["ci_high"]] if alpha["ci_low"] is not None else None
    return {
        "value": number(alpha["value"]),
        "ci": interval(ci),
        "n_units": alpha["n_units"] or 0,
        "n_labellers": alpha["n_labellers"] or 0,
        "note": _note(alpha["note"]),
    }


def ceiling_band(report: NuggetBoard) -> str:
    """The physicians' own range of kappa against each other, in words; empty without two physicians."""
    kappa = ((report.summary["agreement"].get("human_ceiling") or {}).get("kappa")) or {}
    if kappa.get("mean") is None:
        return ""
    if number(kappa["min"]) == number(kappa["max"]):
        return f"κ {number(kappa['mean'])}"
    return f"κ {number(kappa['min'])} to {number(kappa['max'])} (mean {number(kappa['mean'])})"


#: Below this the physicians agree only "fair" or worse with each other (Landis & Koch 1977's bands): a ceiling that
#: low cannot vouch for an automatic labeller, whatever its own kappa.
WEAK_HUMAN_KAPPA = 0.4


def agreement_reading(report: NuggetBoard) -> str:
    """One sentence: how far the organizer can trust each automatic labeller, measured against the physicians."""
    agreement = report.summary["agreement"]
    ceiling = ((agreement.get("human_ceiling") or {}).get("kappa")) or {}
    judges = {name: f for name, f in agreement["judges"].items() if f.get("kappa") is not None}
    if not agreement["judges"]:
        return "No automatic labels yet: run the matcher or import a judge's labels to see how far they can be trusted."
    if not judges:
        return "The automatic labels and the physicians' labels share no nugget yet: there is nothing to compare."
    if report.n_questions < MIN_UNITS_TO_READ:
        return (
            f"Too early to read how far the automatic labels can be trusted: {report.n_questions:,} question"
            f"{'s' if report.n_questions != 1 else ''} with nuggets so far; "
            f"{more_needed(report.n_questions, 'questions with nuggets')}."
        )
    best = _best_labellers(judges)
    if ceiling.get("min") is None:
        if len(best) > 1:
            return (
                f"{names_in_words([labeller_label(n) for n in best])} agree with the physician equally well, as far "
                "as their 95 % intervals tell; a second physician's labels are needed to know how far physicians "
                "agree with each other."
            )
        return (
            f"{labeller_label(best[0])} agrees best with the physician (κ {number(judges[best[0]]['kappa'])}); a "
            "second physician's labels are needed to know how far physicians agree with each other."
        )
    if ceiling.get("max") is not None and ceiling["max"] < WEAK_HUMAN_KAPPA:
        return (
            f"The physicians agree only weakly with each other on these nuggets ({ceiling_band(report)}), so this "
            "study cannot show that any automatic labeller may stand in for them: more physicians per answer, or "
            "clearer nuggets, come first."
        )
    within = [n for n, f in judges.items() if f["kappa"] >= ceiling["min"]]
    if within:
        names = ", ".join(labeller_label(n) for n in within)
        return (
            f"{names} agree{'s' if len(within) == 1 else ''} with the physicians' consensus as well as the physicians "
            f"agree with each other (κ {number(ceiling['min'])} or more): on this study {'its' if len(within) == 1 else 'their'} "
            "labels can stand in for a physician's; keep checking a sample."
        )
    return (
        f"Every automatic labeller agrees with the physicians' consensus less than the physicians agree with each "
        f"other (best: {names_in_words([labeller_label(n) for n in best])}, κ {number(judges[best[0]]['kappa'])}, "
        f"against the physicians' {ceiling_band(report)}): use automatic labels to screen answers, not in place of "
        "physicians."
    )


def _best_labellers(judges: dict) -> list[str]:
    """The automatic labellers whose κ against the physicians cannot be told apart from the highest one."""
    return [
        str(name)
        for name in tied_with_best(
            {
                name: (
                    f["kappa"],
                    (f["kappa_ci_low"], f["kappa_ci_high"])
                    if f.get("kappa_ci_low") is not None and f.get("kappa_ci_high") is not None
                    else None,
                )
                for name, f in judges.items()
            }
        )
    ]


def correlation_rows(report: NuggetBoard, names: dict[str, str] | None = None) -> list[dict]:
    """Per labeller and score: Spearman ρ of its system ranking with the physicians' nugget score and with their
    preference ranking (the human leaderboard)."""
    by_nuggets = report.summary["agreement"].get("system_rank_correlation") or {}
    rows = []
    for labeller in dict.fromkeys([*by_nuggets, *report.ranking_correlation]):
        for score in CORRELATED_SCORES:
            nugget = (by_nuggets.get(labeller) or {}).get(score) or {}
            ranking = (report.ranking_correlation.get(labeller) or {}).get(score) or {}
            rows.append(
                {
                    "labeller": labeller_name(labeller, names),
                    "score": SCORE_LABELS[score],
                    "vs_nuggets": "—" if labeller == CONSENSUS else number(nugget.get("spearman")),
                    "vs_rankings": number(ranking.get("spearman")),
                    "n": max(nugget.get("n") or 0, ranking.get("n") or 0),
                    "note": _note(nugget.get("note") or ranking.get("note")),
                }
            )
    return rows


def correlation_note(rows: list[dict]) -> str:
    """Why every rank correlation is empty, when they all are (few systems, one score for all)."""
    if not rows or any(r["vs_nuggets"] != "—" or r["vs_rankings"] != "—" for r in rows):
        return ""
    return next((r["note"] for r in rows if r["note"]), "No rank correlation can be computed yet.")


def item_answers(
    scores: NuggetScores, item_uid: str, answers, names: dict[str, str] | None = None
) -> tuple[list[dict], list[dict]]:
    """One item: its nuggets, and each of its ``answers`` (the question's answers with their system; named: the
    organizer's page) with, per nugget, every labeller's label and the evidence sentence where one was given."""
    nuggets = [
        {"key": n.id, "text": n.text, "importance": IMPORTANCE_WORDS[n.importance], "avoid": n.importance == "avoid"}
        for n in scores.data.nuggets.get(item_uid, [])
    ]
    labels = item_labels(scores, item_uid)
    per_answer = scores.per_answer[scores.per_answer["item_uid"] == item_uid]
    out = []
    for answer in answers:
        system = answer.system.name
        labellers = [name for name in scores.labellers if (system, name) in labels]
        rows = []
        for nugget in nuggets:
            cells = []
            for name in labellers:
                label = labels[system, name].get(nugget["key"], "not_support")
                evidence = scores.data.evidence.get((item_uid, system, name, nugget["key"]))
                cells.append(
                    {
                        "label": LABEL_WORDS[label],
                        "css": label.replace("_", "-"),
                        "evidence": evidence[0] if evidence and label != "not_support" else "",
                        "similarity": number(evidence[1]) if evidence and evidence[1] is not None else "",
                    }
                )
            rows.append({"nugget": nugget, "cells": cells})
        by_labeller = per_answer[per_answer["system"] == system].set_index("labeller")
        out.append(
            {
                "system": system_label(system, answer.system.is_reference),
                "sentences": _sentences(scores, item_uid, system, answer),
                "labellers": [labeller_name(n, names) for n in labellers],
                "scores": [
                    number(by_labeller.loc[n, "all"])
                    if n in by_labeller.index and by_labeller.loc[n, "all"] == by_labeller.loc[n, "all"]
                    else "—"
                    for n in labellers
                ],  # fmt: skip
                "rows": rows,
            }
        )
    return nuggets, out


def _sentences(scores: NuggetScores, item_uid: str, system: str, answer) -> list[dict]:
    """The answer's sentences, each with how many of the physicians who read it marked it wrong or unsupported."""
    read = [
        given
        for (uid, name, labeller), given in scores.data.marks.items()
        if uid == item_uid and name == system and labeller in scores.data.humans
    ]
    out = []
    for i, text in enumerate(answer.sentences or [answer.text]):
        marked = sum(1 for given in read if i < len(given) and given[i])
        note = f"marked wrong or unsupported by {marked} of {len(read)} physician{'s' if len(read) != 1 else ''}"
        out.append({"text": text, "marked": marked, "note": note if marked else ""})
    return out


CSV_COLUMNS = ["system", "is_reference", "labeller", "score", "mean", "ci_low", "ci_high", "n_answers"]


def leaderboard_csv(report: NuggetBoard) -> str:
    """Every system × labeller × score with its interval, one row each (labellers as stored: pseudonyms,
    ``consensus``, ``matcher``, judges' names), cells guarded against spreadsheet formulas."""
    import io

    from portal import csv_cells

    buffer = io.StringIO()
    writer = csv_cells.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for system, by in report.summary["systems"].items():
        for labeller in report.labellers:
            entry = by.get(labeller)
            if entry is None:
                continue
            for score in SCORE_NAMES:
                if score not in entry:
                    continue
                ci = entry["ci"].get(score) or [None, None]
                writer.writerow(
                    {
                        "system": system,
                        "is_reference": system in report.reference_systems,
                        "labeller": labeller,
                        "score": score,
                        "mean": entry[score],
                        "ci_low": ci[0],
                        "ci_high": ci[1],
                        "n_answers": entry["n_answers"],
                    }
                )
    return buffer.getvalue()
