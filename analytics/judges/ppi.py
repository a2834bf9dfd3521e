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

A study with a designed physician sample (``Study.physician_sample``, :mod:`analytics.services.physician_sample`):
the section's ``design`` is the study's record of it, and per system the population is every question the judge
scored, the sample the drawn ones physicians tagged, each with its inclusion probability:
``classical`` is the design-weighted physicians-only (Horvitz–Thompson) estimate and ``ppi`` the design-based one
with λ tuned (:func:`stats.ppi.design_mean_ci`). A drawn question not tagged yet is left out of the population
until it is (``n_sampled_untagged``): the design is exact once the study is complete. ``human_needed`` is then the
power calculation of the tagged questions weighted by 1/π, an approximation.

:func:`last_judge_power` is the "before a study starts" figure: how many physician questions a judge like the most
recent one needed, for every system's interval to reach a half-width.

Pairwise win rates, when the study asks for rankings (:func:`judge_pairs`, the judge's entry's ``pairs``): for each
pair of model systems A < B (by name), the share of questions on which physicians prefer A, over the questions where
the judge scored both answers. A question's physicians' outcome, where at least one physician ranked both, is 1 if
A's mean rank over those physicians is better (lower) than B's, 0 if worse and 0.5 if equal; the judge's outcome is
the same by score (higher = better). Y: the physicians' outcomes, Ŷ the judge's on those questions, Ŷu the judge's on
the others; ``classical``, ``judge_only`` and ``ppi`` as for a system's score. Under a designed sample a pair is
estimated as a system's score is (the design drew questions, and a pair's outcome is a question's): the population
the questions where the judge scored both answers, the sample the drawn ones where physicians ranked both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.judges.scores import study_judge_scores
from analytics.judges.study import non_finite_score
from analytics.models import JudgeScore
from analytics.selectors import study_rankings
from evaluation.ppi import MIN_LABELLED, system_estimate
from ranking.models import RankingTask, Study, StudyAnswer, StudyQuestion
from stats.ppi import (
    DEFAULT_ALPHA,
    classical_mean_ci,
    classical_sample_size,
    design_mean_ci,
    labels_needed,
    ppi_mean_ci,
)

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
    reference = reference_systems(study, ranks)
    model_ranks = ranks[~ranks["system"].isin(reference)]
    physicians = physician_values(model_ranks, scale)
    section: dict = {
        "alpha": alpha,
        "target_halfwidth": target_halfwidth,
        # a list: the database keeps a JSON object's keys in an order of its own, and the scale's order is the point
        "tag_values": [{"tag": tag, "value": value} for tag, value in tag_values(scale).items()],
        "judges": {},
        "left_out": {},
    }
    chances = None
    if study.physician_sample:
        section["design"] = dict(study.physician_sample)
        chances = design_chances(study)
    for name, scores in judges.items():
        why = non_finite_score(scores)
        if why is not None:
            section["left_out"][name] = why
            continue
        model_scores = scores[~scores["system"].isin(reference)]
        section["judges"][name] = judge_estimates(physicians, model_scores, alpha, target_halfwidth, chances)
        if study.ask_ranking:
            section["judges"][name]["pairs"] = judge_pairs(model_ranks, model_scores, alpha, chances)
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


def design_chances(study: Study) -> pd.DataFrame:
    """``item, chance, drawn``: each question's inclusion probability and whether it was drawn."""
    rows = StudyQuestion.objects.filter(study=study).values_list(
        "item__uid", "inclusion_probability", "physician_sampled"
    )
    return pd.DataFrame(list(rows), columns=["item", "chance", "drawn"])


def judge_estimates(
    physicians: pd.DataFrame,
    scores: pd.DataFrame,
    alpha: float,
    target_halfwidth: float,
    chances: pd.DataFrame | None = None,
) -> dict:
    """One judge's entry: the range of its scores (its own scale) and the estimates of every system it scored or
    the physicians tagged; ``chances`` (:func:`design_chances`): under the study's designed sample."""
    values = scores["score"].to_numpy(dtype=float)
    low, high = (float(values.min()), float(values.max())) if values.size else (None, None)
    joined = scores.merge(physicians, on=["item", "system"], how="outer")
    if chances is not None:
        joined = joined.merge(chances, on="item", how="left")
    estimate = system_estimates if chances is None else design_system_estimates
    systems = {
        str(system): estimate(rows, alpha, target_halfwidth) for system, rows in joined.groupby("system", sort=True)
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


def design_system_estimates(rows: pd.DataFrame, alpha: float, target_halfwidth: float) -> dict:
    """:func:`system_estimates` under the study's designed sample (module docstring); ``rows`` also carry each
    question's ``chance`` and whether it was ``drawn``."""
    estimate, sample = _design_estimates(rows, alpha)
    if "undefined_reason" in estimate:
        return {**estimate, "undefined_reason": _too_few_reason(estimate["n_human"])}
    y_s, f_s, chance_s, population = sample
    estimate["human_needed"] = labels_needed(y_s, f_s, population, target_halfwidth, alpha, w=1 / chance_s)
    return {**estimate, **_power(estimate, y_s, alpha, target_halfwidth)}


def _design_estimates(rows: pd.DataFrame, alpha: float) -> tuple[dict, tuple]:
    """The design-based estimates of one mean from per-question ``score`` (the judge's, NaN where it gave none),
    ``value`` (the physicians', NaN where none), ``chance`` and ``drawn``: the counts, ``classical`` (Horvitz–
    Thompson) and ``ppi``; with the sample's values, judge's values and chances and the population's size, or an
    entry with ``undefined_reason`` (its wording the caller's) under two sampled questions."""
    scored = rows["score"].notna().to_numpy()
    labelled = rows["value"].notna().to_numpy()
    drawn = rows["drawn"].fillna(False).to_numpy(dtype=bool)
    untagged = scored & drawn & ~labelled
    population = scored & ~untagged
    in_sample = (drawn & labelled)[population]
    f = rows["score"].to_numpy(dtype=float)[population]
    y = rows["value"].to_numpy(dtype=float)[population]
    chance = rows["chance"].to_numpy(dtype=float)[population]
    n_human = int(in_sample.sum())
    counts = {
        "n_human": n_human,
        "n_judge_only": int((~in_sample).sum()),
        "n_labelled_unscored": int((labelled & ~scored).sum()),
        "n_sampled_untagged": int(untagged.sum()),
        "judge_only": _judge_only(rows["score"].to_numpy(dtype=float)[scored], alpha),
    }
    if n_human < MIN_LABELLED:
        return {**counts, "undefined_reason": ""}, ()
    physicians_only = design_mean_ci(f, y, chance, in_sample, alpha, lam=0)
    tuned = design_mean_ci(f, y, chance, in_sample, alpha)
    estimate = {
        **counts,
        "classical": {"mean": physicians_only.mean, "low": physicians_only.low, "high": physicians_only.high},
        "ppi": {"mean": tuned.mean, "low": tuned.low, "high": tuned.high, "lambda": tuned.lam},
    }
    return estimate, (y[in_sample], f[in_sample], chance[in_sample], f.size)


def judge_pairs(
    ranks_model: pd.DataFrame, scores: pd.DataFrame, alpha: float, chances: pd.DataFrame | None = None
) -> list[dict]:
    """One entry per pair of model systems (module docstring), A < B by name: ``first``, ``second``, the counts and
    the estimates of the share of questions on which physicians prefer ``first``. ``ranks_model``: the physicians'
    judgements without the reference answer's; ``scores``: the judge's ``item, system, score`` likewise;
    ``chances`` (:func:`design_chances`): under the study's designed sample."""
    ranked = ranks_model.dropna(subset=["rank"]).pivot_table(
        index=["item", "annotator"], columns="system", values="rank", aggfunc="first"
    )
    scored = scores.pivot_table(index="item", columns="system", values="score", aggfunc="first")
    systems = sorted({str(system) for system in ranked.columns} | {str(system) for system in scored.columns})
    return [
        pair_estimates(physician_outcomes(ranked, first, second), judge_outcomes(scored, first, second), alpha, chances)
        | {"first": first, "second": second}
        for position, first in enumerate(systems)
        for second in systems[position + 1 :]
    ]


def physician_outcomes(ranked: pd.DataFrame, first: str, second: str) -> pd.Series:
    """Per question at least one physician ranked both: 1, 0.5 or 0 as ``first``'s mean rank there is lower than,
    equal to or higher than ``second``'s."""
    if first not in ranked.columns or second not in ranked.columns:
        return pd.Series(dtype=float)
    both = ranked[[first, second]].dropna()
    # summed over the same physicians, the rank differences compare the means exactly (no float ties to judge)
    lead = (both[second] - both[first]).groupby(level="item").sum()
    return (np.sign(lead) + 1) / 2


def judge_outcomes(scored: pd.DataFrame, first: str, second: str) -> pd.Series:
    """Per question the judge scored both: 1, 0.5 or 0 as ``first``'s score is higher than, equal to or lower than
    ``second``'s."""
    if first not in scored.columns or second not in scored.columns:
        return pd.Series(dtype=float)
    both = scored[[first, second]].dropna()
    return (np.sign(both[first] - both[second]) + 1) / 2


def pair_estimates(physicians: pd.Series, judge: pd.Series, alpha: float, chances: pd.DataFrame | None = None) -> dict:
    """The estimates of one pair from its per-question outcomes (indexed by question); under a designed sample
    (``chances``) design-weighted as a system's score is: a pair's outcome is a question's, and the design drew
    questions."""
    if chances is not None:
        rows = pd.DataFrame({"score": judge, "value": physicians}).rename_axis("item").reset_index()
        estimate, _ = _design_estimates(rows.merge(chances, on="item", how="left"), alpha)
        estimate["n_ranked_unscored"] = estimate.pop("n_labelled_unscored")
        if "undefined_reason" in estimate:
            estimate["undefined_reason"] = _too_few_pair_reason(estimate["n_human"])
        return estimate
    labelled = judge.index.isin(physicians.index)
    y = physicians.reindex(judge.index[labelled]).to_numpy(dtype=float)
    yhat = judge.to_numpy(dtype=float)
    counts = {
        "n_human": int(y.size),
        "n_judge_only": int((~labelled).sum()),
        "n_ranked_unscored": int((~physicians.index.isin(judge.index)).sum()),
        "judge_only": _judge_only(yhat, alpha),
    }
    if y.size < MIN_LABELLED:
        return {**counts, "undefined_reason": _too_few_pair_reason(y.size)}
    classical = classical_mean_ci(y, alpha)
    tuned = ppi_mean_ci(y, yhat[labelled], yhat[~labelled], alpha)
    return {
        **counts,
        "classical": {"mean": classical.mean, "low": classical.low, "high": classical.high},
        "ppi": {"mean": tuned.mean, "low": tuned.low, "high": tuned.high, "lambda": tuned.lam},
    }


def last_judge_power(
    questions: int, *, halfwidth: float = DEFAULT_HALFWIDTH, alpha: float = DEFAULT_ALPHA
) -> dict | None:
    """``{study, judge, needed}``: how many physician-labelled questions of ``questions`` the judge imported last
    into the most recent study with a judge and physicians' tags would need for every system's PPI++ interval to
    reach ±``halfwidth`` (:func:`stats.ppi.labels_needed` on that study's values, the most any system needs);
    None without such a study, or where no system there has two questions both tagged and scored."""
    judged = JudgeScore.objects.values("answer__question__study_id")
    tagged = RankingTask.objects.filter(status=RankingTask.Status.SUBMITTED).values("study_id")
    study = Study.objects.filter(pk__in=judged, id__in=tagged).order_by("-created_at", "-pk").first()
    if study is None or questions < 1:
        return None
    imports = JudgeScore.objects.filter(answer__question__study=study).order_by("-created_at", "-pk")
    latest = imports.values_list("judge", flat=True)[0]
    scores = study_judge_scores(study, judges=[latest])[latest]
    ranks = study_rankings(study)
    reference = reference_systems(study, ranks)
    physicians = physician_values(ranks[~ranks["system"].isin(reference)], [str(tag) for tag in study.tag_scale])
    joined = scores[~scores["system"].isin(reference)].merge(physicians, on=["item", "system"])
    joined = joined[np.isfinite(joined["score"].to_numpy(dtype=float))]  # as the report leaves such a judge out
    needed = [
        labels_needed(rows["value"].to_numpy(), rows["score"].to_numpy(), questions, halfwidth, alpha)
        for _, rows in joined.groupby("system")
        if len(rows) >= MIN_LABELLED
    ]
    if not needed:
        return None
    return {
        "study": study.name,
        "judge": latest,
        "needed": max(needed),
        "questions": questions,
        "halfwidth": halfwidth,
    }


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


def _too_few_pair_reason(n: int) -> str:
    where = "physicians ranked both answers and this judge scored both"
    if n == 0:
        return f"no question where {where}"
    return f"only {n} question where {where}; at least {MIN_LABELLED} are needed"


def reference_systems(study: Study, ranks: pd.DataFrame) -> set[str]:
    """The reference answer's systems: those the rankings mark, and any the study answers with though unranked."""
    ranked = set(ranks.loc[ranks["is_reference"].astype(bool), "system"])
    answers = StudyAnswer.objects.filter(question__study=study, system__is_reference=True)
    return ranked | set(answers.values_list("system__name", flat=True).distinct())
