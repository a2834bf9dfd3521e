"""Turn stored judgements and scores into the plain DataFrames that ``stats`` takes."""

from __future__ import annotations

import pandas as pd

from analytics.models import AnswerScore, PromptCblueScore, ScoringRun
from annotation.second_review import Reason
from annotation.selectors.review import judging_reviews
from annotation.workflow import RELEVANCE_VALUES, Verdict
from portal.models import User
from ranking.models import AnswerJudgement, RankingTask, Study

# The scales agreement is computed over, in their order (annotation.workflow owns them).
RELEVANCE_SCALE = list(RELEVANCE_VALUES)
VERDICT_SCALE = list(Verdict.values)
SCORE_METRICS = ["semantic", "bleu", "rouge", "meteor"]
#: PromptCBLUE answers' own scores (the official evaluation, per sample) correlated like a metric, where there are any.
PROMPTCBLUE_METRIC = "promptcblue"
SCORE_LABELS = {
    "semantic": "Semantic",
    "bleu": "BLEU",
    "rouge": "ROUGE",
    "meteor": "METEOR",
    PROMPTCBLUE_METRIC: "PromptCBLUE (official, per sample)",
}


def vetting_ratings() -> pd.DataFrame:
    """One row per independent review of a real item: item, annotator, qa_type, verdict, relevance, stage, and
    why the item was read twice (``second_reason``, ``annotation.second_review.Reason``; empty for an item read
    once)."""
    rows = judging_reviews().values_list(
        "item__uid", "reviewer_id", "item__qa_type", "verdict", "relevance", "stage", "item__second_review_reason"
    )
    columns = ["item", "annotator", "qa_type", "verdict", "relevance", "stage", "second_reason"]
    return pd.DataFrame(list(rows), columns=columns)


def chosen_for_doubt(frame: pd.DataFrame) -> pd.Series:
    """Rows of :func:`vetting_ratings` on items the adaptive second review chose because the model doubted their
    first verdict: agreement on them is not agreement on the benchmark's items (they were picked for being hard),
    so the agreement figures leave them out; every other item was read twice, or once, by a random draw."""
    return frame["second_reason"] == Reason.MODEL


def study_rankings(study) -> pd.DataFrame:
    """One row per ranker × answer of a study's submitted tasks: item, annotator, answer, system, rank, tag,
    hallucination, harm, is_reference. ``answer`` is the system name (one answer per system per question)."""

    rows = AnswerJudgement.objects.filter(task__study=study, task__status=RankingTask.Status.SUBMITTED).values_list(
        "task__question__item__uid",
        "task__ranker_id",
        "answer__system__name",
        "rank",
        "tag",
        "hallucination",
        "harm",
        "answer__system__is_reference",
    )
    frame = pd.DataFrame(
        list(rows), columns=["item", "annotator", "system", "rank", "tag", "hallucination", "harm", "is_reference"]
    )
    frame["answer"] = frame["system"]
    return frame


def study_scoring_runs(study, *, profile: str = "cliniqlink-2025") -> list:
    """Each study system's latest finished scoring run with ``profile``."""

    runs = {}
    for run in ScoringRun.objects.filter(
        system__in=study.systems.all(), profile=profile, finished_at__isnull=False
    ).order_by("created_at"):
        runs[run.system_id] = run  # the latest run per system wins
    return list(runs.values())


def study_scores(study, *, profile: str = "cliniqlink-2025") -> pd.DataFrame:
    """Metric scores of the study's answers: item, system, and one column per metric, from each system's
    latest finished scoring run with ``profile``."""

    runs = [run.pk for run in study_scoring_runs(study, profile=profile)]
    items = study.questions.values_list("item_id", flat=True)
    rows = AnswerScore.objects.filter(run_id__in=runs, item_id__in=items).values_list(
        "item__uid", "run__system__name", "semantic", "bleu", "rouge", "meteor", "correct", "f1"
    )
    frame = pd.DataFrame(list(rows), columns=["item", "system", "semantic", "bleu", "rouge", "meteor", "correct", "f1"])
    # Closed-ended answers have no semantic score: their headline number is correctness or list F1.
    closed = frame["semantic"].isna()
    frame.loc[closed, "semantic"] = frame.loc[closed, "correct"].astype(float).fillna(frame.loc[closed, "f1"])
    return frame.drop(columns=["correct", "f1"])


def study_promptcblue_scores(study) -> pd.DataFrame:
    """Each study answer's PromptCBLUE sample score (item, system, score) from each system's latest finished
    PromptCBLUE run (:mod:`analytics.scoring.promptcblue`); empty when the study's systems have none. Answers a
    system did not give are left out: the physicians ranked only the answers there were."""
    runs = [run.pk for run in study_scoring_runs(study, profile=ScoringRun.PROMPTCBLUE)]
    items = study.questions.values_list("item_id", flat=True)
    rows = PromptCblueScore.objects.filter(
        run_id__in=runs, item_id__in=items, answered=True, score__isnull=False
    ).values_list("item__uid", "run__system__name", "score")
    return pd.DataFrame(list(rows), columns=["item", "system", "score"])


def study_physician_pseudonyms(study: Study) -> set[str]:
    """Pseudonyms of everyone who holds or held a task in the study (a judge may not take one of these names)."""
    ids = RankingTask.objects.filter(study=study).values_list("ranker_id", flat=True).distinct()
    return {user.pseudonym for user in User.objects.filter(pk__in=ids)}
