"""The study report's prediction-powered estimates (issue #43): each system's physician score estimated from the
physicians' tags alone, from an imported judge alone, and from both (PPI++), with the labels still needed.

The physicians' value of an answer is the mean, over the physicians who tagged it, of the tag placed evenly on [0, 1]
along the study's tag scale (first tag 1, last 0: good / okay / bad → 1 / 0.5 / 0); tags not on the scale are not
counted. Per imported judge and model system (the reference answer left out, as the judges section leaves it out):

* the labelled questions are those with a physician's tag and this judge's score: Y, the physicians' values, and Ŷ,
  the judge's scores there (a tagged question the judge did not score cannot enter the PPI estimate; it is counted
  apart, and the physicians-only estimate uses the same questions, so that the two differ by the judge alone);
* Ŷu: the judge's scores on the questions no physician tagged;
* ``classical`` (physicians only), ``ppi`` (PPI++, power-tuned λ) and ``human_needed`` as the ``ppi_estimate``
  command has them (:func:`evaluation.ppi.system_estimate`), and ``judge_only``: the judge's mean over every question
  it scored, with the classical interval of those scores: on the judge's own scale and biased, for reference only;
* the power figure at the target half-width: ``more_needed`` = ``human_needed`` − n (never below 0), whether the
  PPI++ interval is already that narrow (``target_met``) and whether labelling every question the judge scored could
  make it so (``reachable``: a classical sample of that half-width needs no more questions than there are).

A system with fewer than two labelled questions has an ``undefined_reason`` instead of the two estimates that need
them. Full precision is stored; pages round (:mod:`analytics.presentation.ppi`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.judges.scores import study_judge_scores
from analytics.judges.study import non_finite_score
from analytics.selectors import study_rankings
from evaluation.ppi import MIN_LABELLED, system_estimate
from ranking.models import Study, StudyAnswer
from stats.ppi import DEFAULT_ALPHA, classical_mean_ci, classical_sample_size

#: The half-width the power figure aims at when the report is not asked for another.
DEFAULT_HALFWIDTH = 0.05


def study_ppi(
    study: Study,
    ranks: pd.DataFrame | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    target_halfwidth: float = DEFAULT_HALFWIDTH,
) -> dict | None:
    """The section (None when no judge was imported). ``ranks``: the study's submitted judgements
    (:func:`analytics.selectors.study_rankings`), read here when not given."""
    judges = study_judge_scores(study)
    if not judges:
        return None
    if ranks is None:
        ranks = study_rankings(study)
    scale = [str(tag) for tag in study.tag_scale]
    reference = _reference_systems(study, ranks)
    physicians = physician_values(ranks[~ranks["system"].isin(reference)], scale)
    section: dict = {
        "alpha": alpha,
        "target_halfwidth": target_halfwidth,
        # a list: the database keeps a JSON object's keys in an order of its own, and the scale's order is the point
        "tag_values": [{"tag": tag, "value": value} for tag, value in tag_values(scale).items()],
        "judges": {},
        "left_out": {},
    }
    for name, scores in judges.items():
        why = non_finite_score(scores)
        if why is not None:
            section["left_out"][name] = why
            continue
        model_scores = scores[~scores["system"].isin(reference)]
        section["judges"][name] = judge_estimates(physicians, model_scores, alpha, target_halfwidth)
    return section


def tag_values(scale: list[str]) -> dict[str, float]:
    """Each tag's value, spread evenly from 1 (the first, best tag) to 0 (the last); a scale of one tag is 1."""
    steps = len(scale) - 1
    return {tag: 1.0 - position / steps if steps else 1.0 for position, tag in enumerate(scale)}


def physician_values(ranks: pd.DataFrame, scale: list[str]) -> pd.DataFrame:
    """``item, system, value``: per answer, the mean value of the physicians' tags on ``scale``."""
    values = ranks["tag"].map(tag_values(scale))
    tagged = ranks.assign(value=values)[values.notna()]
    return tagged.groupby(["item", "system"], as_index=False, sort=False)["value"].mean()


def judge_estimates(physicians: pd.DataFrame, scores: pd.DataFrame, alpha: float, target_halfwidth: float) -> dict:
    """One judge's entry: the range of its scores (its own scale) and the estimates of every system it scored or
    the physicians tagged."""
    values = scores["score"].to_numpy(dtype=float)
    low, high = (float(values.min()), float(values.max())) if values.size else (None, None)
    joined = scores.merge(physicians, on=["item", "system"], how="outer")
    systems = {
        str(system): system_estimates(rows, alpha, target_halfwidth)
        for system, rows in joined.groupby("system", sort=True)
    }
    return {
        "score_low": low,
        "score_high": high,
        "unit_scale": low is not None and high is not None and low >= 0 and high <= 1,
        "systems": systems,
    }


def system_estimates(rows: pd.DataFrame, alpha: float, target_halfwidth: float) -> dict:
    """One system's estimates from its ``item, score, value`` rows (``score``: the judge's, NaN where it did not
    score the answer; ``value``: the physicians', NaN where none tagged it)."""
    scored = rows["score"].notna().to_numpy()
    labelled = rows["value"].notna().to_numpy()
    y = rows["value"].to_numpy(dtype=float)[scored & labelled]
    yhat = rows["score"].to_numpy(dtype=float)
    counts = {"n_labelled_unscored": int((labelled & ~scored).sum()), "judge_only": _judge_only(yhat[scored], alpha)}
    if y.size < MIN_LABELLED:
        return {
            "n_human": int(y.size),
            "n_judge_only": int((scored & ~labelled).sum()),
            **counts,
            "undefined_reason": _too_few_reason(y.size),
        }
    estimate = system_estimate(y, yhat[scored & labelled], yhat[scored & ~labelled], alpha, target_halfwidth)
    return {**estimate, **counts, **_power(estimate, y, alpha, target_halfwidth)}


def _judge_only(scores: np.ndarray, alpha: float) -> dict | None:
    """The judge's mean and classical interval over its scores (None under two: no interval to speak of)."""
    if scores.size < MIN_LABELLED:
        return None
    interval = classical_mean_ci(scores, alpha)
    return {"mean": interval.mean, "low": interval.low, "high": interval.high}


def _power(estimate: dict, y: np.ndarray, alpha: float, target_halfwidth: float) -> dict:
    """The power figure beside ``estimate`` (:func:`evaluation.ppi.system_estimate`'s entry)."""
    n, questions = estimate["n_human"], estimate["n_human"] + estimate["n_judge_only"]
    halfwidth = (estimate["ppi"]["high"] - estimate["ppi"]["low"]) / 2
    return {
        "halfwidth": halfwidth,
        "more_needed": max(estimate["human_needed"] - n, 0),
        "target_met": bool(halfwidth <= target_halfwidth),
        # labels_needed stops at every question labelled: beyond that only more questions narrow the interval
        "reachable": classical_sample_size(y, target_halfwidth, alpha) <= questions,
    }


def _too_few_reason(n: int) -> str:
    if n == 0:
        return "no question has both a physician's tag and this judge's score"
    return f"only {n} question has both a physician's tag and this judge's score; at least {MIN_LABELLED} are needed"


def _reference_systems(study: Study, ranks: pd.DataFrame) -> set[str]:
    """The reference answer's systems: those the rankings mark, and any the study answers with though unranked."""
    ranked = set(ranks.loc[ranks["is_reference"].astype(bool), "system"])
    answers = StudyAnswer.objects.filter(question__study=study, system__is_reference=True)
    return ranked | set(answers.values_list("system__name", flat=True).distinct())
