"""The study report's judge cards (issue #43): for every judge, what the literature asks of one beyond its agreement
with the physicians (which the ``judges`` section holds, :mod:`analytics.judges.study`): calibration, bias per QA
type, position bias, self-preference and abstention, each from :mod:`stats.judge_card` with its n, its interval and,
where the data cannot say, the reason.

What a card reads, per imported judge (:func:`analytics.judges.scores.judge_answer_rows`,
:func:`analytics.judges.verdicts.study_judge_verdicts`):

* the judge's *value* of an answer on 0-1, the scale the physicians' value has (their tags placed evenly on 0-1,
  :func:`analytics.judges.ppi.physician_values`): its probability that the answer is good where the file gives one
  for every answer it scored, else its scores when they all lie in 0-1; a judge scoring on another scale has no
  value, and calibration, bias and self-preference say so rather than rescale it (any rescaling would decide the
  answer);
* calibration and bias: the judge's value against the physicians' value of the same model answers;
* position bias: the pairwise verdicts imported for it, with the order the answers were shown;
* self-preference: the judge's model family (``judge_family`` in its file) against each system's family
  (:attr:`ranking.models.System.family`), case and surrounding spaces ignored;
* abstention: per question, the share of its model answers the judge declined ("cannot judge"), beside the share of
  the physicians' tasks on it that were put aside (skipped) at least once: the physicians' own way of not judging
  a question now; a question's difficulty is 1 − the physicians' mean value of its model answers.

The built-in metrics get a card too: they give no probabilities, see no order, have no family and never decline,
and their card says so, beside their agreement. The reference answer is left out throughout, as in the ``judges``
section.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.judges.ppi import physician_values, reference_systems
from analytics.judges.scores import judge_answer_rows
from analytics.judges.verdicts import study_judge_verdicts
from analytics.selectors import SCORE_LABELS
from annotation.qa_types import QA_TYPE_LABELS
from ranking.models import RankingTask, Study, StudyQuestion
from stats.judge_card import (
    abstention_by_difficulty,
    bias_by_group,
    calibration,
    position_bias,
    self_preference,
)

#: Why a built-in metric's card has no calibration, position, family or abstention figures.
METRIC_REASONS = {
    "calibration": "a text metric's score is not a probability that the answer is good",
    "bias": "a text metric's score is not on the physicians' scale",
    "position": "a metric scores each answer on its own: no order is shown to it",
    "self_preference": "a metric has no model family",
    "abstention": "a metric never declines to score",
}


def study_judge_cards(
    study: Study,
    ranks: pd.DataFrame,
    metrics: list[str],
    *,
    n_resamples: int,
    seed: int,
) -> dict | None:
    """``{"judges": {name: card}}`` for every imported judge and every built-in metric in ``metrics`` (those with
    scores), None without an imported judge. ``ranks``: the study's submitted judgements
    (:func:`analytics.selectors.study_rankings`); the reference answer is left out here, as the prediction-powered
    section leaves it out (:func:`analytics.judges.ppi.reference_systems`)."""
    rows = judge_answer_rows(study)
    if rows.empty:
        return None
    reference = reference_systems(study, ranks)
    rows = rows[~rows["system"].isin(reference)]
    model_ranks = ranks[~ranks["system"].isin(reference)]
    physicians = physician_values(model_ranks, [str(tag) for tag in study.tag_scale])
    qa_types = _qa_types(study)
    families = _system_families(study)
    verdicts = study_judge_verdicts(study)
    questions = _physician_questions(study, physicians)
    kw = {"n_resamples": n_resamples, "seed": seed}
    cards = {
        str(name): judge_card(judge_rows, physicians, qa_types, families, verdicts.get(str(name)), questions, kw)
        for name, judge_rows in rows.groupby("judge", sort=True)
    }
    for metric in metrics:
        cards[metric] = {
            "builtin": True,
            "label": SCORE_LABELS.get(metric, metric),
            **{key: {"undefined_reason": reason} for key, reason in METRIC_REASONS.items()},
        }
    return {"judges": cards}


def judge_card(
    rows: pd.DataFrame,
    physicians: pd.DataFrame,
    qa_types: dict[str, str],
    families: dict[str, str],
    verdicts: pd.DataFrame | None,
    questions: pd.DataFrame,
    kw: dict,
) -> dict:
    """One imported judge's card from its ``judge_answer_rows`` (this judge's only)."""
    family = _family(rows["judge_family"])
    values, source, why = judge_values(rows)
    joined = values.merge(physicians, on=["item", "system"], how="inner") if values is not None else None
    card: dict = {"builtin": False, "family": family, "value_source": source, "value_reason": why}
    if joined is None or joined.empty:
        reason = why or "no answer has both this judge's value and a physician's tag"
        card["calibration"] = {"undefined_reason": reason}
        card["bias"] = {"undefined_reason": reason}
        card["self_preference"] = {"undefined_reason": reason}
    else:
        prob, outcome = joined["judge_value"].to_numpy(dtype=float), joined["value"].to_numpy(dtype=float)
        items = joined["item"].to_numpy()
        card["calibration"] = calibration(prob, outcome, items=items, **kw)
        groups = [QA_TYPE_LABELS.get(qa_types.get(item, ""), qa_types.get(item, "")) or "Unknown" for item in items]
        card["bias"] = bias_by_group(prob, outcome, groups)
        card["self_preference"] = _self_preference(joined, family, families, kw)
    card["position"] = (
        position_bias(verdicts)
        if verdicts is not None and not verdicts.empty
        else {"undefined_reason": "no pairwise verdicts were imported for this judge"}
    )
    card["abstention"] = abstention_by_difficulty(_abstention_frame(rows, questions))
    return card


def judge_values(rows: pd.DataFrame) -> tuple[pd.DataFrame | None, str | None, str]:
    """``item, system, judge_value`` on 0-1 for the answers the judge scored (module docstring), the source
    ("probability" or "score"), and why there is none."""
    scored = rows[~rows["abstained"].astype(bool)]
    if scored.empty:
        return None, None, "this judge declined every answer"
    probability = scored["probability"].to_numpy(dtype=float)
    if np.isfinite(probability).all():
        return scored.assign(judge_value=probability)[["item", "system", "judge_value"]], "probability", ""
    score = scored["score"].to_numpy(dtype=float)
    if np.isfinite(score).all() and score.min() >= 0 and score.max() <= 1:
        return scored.assign(judge_value=score)[["item", "system", "judge_value"]], "score", ""
    given = int(np.isfinite(probability).sum())
    if given:
        return (
            None,
            None,
            (f"its file gives a probability for {given} of the {len(scored)} answers it scored, not all of them"),
        )
    return (
        None,
        None,
        (f"its scores run from {score.min():g} to {score.max():g}, not 0 to 1, and its file gives no probabilities"),
    )


def _self_preference(joined: pd.DataFrame, family: str, families: dict[str, str], kw: dict) -> dict:
    if not family:
        return {"undefined_reason": "the judge's file names no model family (judge_family)"}
    own = np.array([families.get(system, "") == _normal_family(family) for system in joined["system"]])
    if not own.any():
        return {"undefined_reason": f"no system of the {family!r} family answered here, or none names its family"}
    return self_preference(
        joined["judge_value"].to_numpy(dtype=float),
        joined["value"].to_numpy(dtype=float),
        own,
        items=joined["item"].to_numpy(),
        **kw,
    )


def _abstention_frame(rows: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Per question of the study: the physicians' figures (``questions``) with this judge's answers and
    declines."""
    per_item = rows.groupby("item").agg(judge_answers=("system", "size"), judge_abstained=("abstained", "sum"))
    frame = questions.merge(per_item, left_on="item", right_index=True, how="left")
    frame[["judge_answers", "judge_abstained"]] = frame[["judge_answers", "judge_abstained"]].fillna(0).astype(int)
    return frame[frame["judge_answers"] > 0].reset_index(drop=True)


def _physician_questions(study: Study, physicians: pd.DataFrame) -> pd.DataFrame:
    """``item, difficulty, physician_tasks, physician_abstained`` per question of the study."""
    tasks = pd.DataFrame(
        list(
            RankingTask.objects.filter(study=study)
            .exclude(status=RankingTask.Status.RELEASED)
            .values_list("question__item__uid", "skipped_at")
        ),
        columns=["item", "skipped_at"],
    )
    per_item = tasks.assign(put_aside=tasks["skipped_at"].notna()).groupby("item")["put_aside"].agg(["size", "sum"])
    items = pd.DataFrame({"item": list(StudyQuestion.objects.filter(study=study).values_list("item__uid", flat=True))})
    difficulty = 1 - physicians.groupby("item")["value"].mean()
    frame = items.assign(
        difficulty=items["item"].map(difficulty).astype(float),
        physician_tasks=items["item"].map(per_item["size"]).fillna(0).astype(int),
        physician_abstained=items["item"].map(per_item["sum"]).fillna(0).astype(int),
    )
    return frame


def _qa_types(study: Study) -> dict[str, str]:
    return dict(StudyQuestion.objects.filter(study=study).values_list("item__uid", "item__qa_type"))


def _system_families(study: Study) -> dict[str, str]:
    return {name: _normal_family(family) for name, family in study.systems.values_list("name", "family")}


def _family(values: pd.Series) -> str:
    """The family the judge's file names (as written, trimmed), "" when none."""
    named = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    return named[0] if named else ""


def _normal_family(family: str | None) -> str:
    return (family or "").strip().casefold()
