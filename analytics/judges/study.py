"""The study report's judge and leaderboard sections beyond the plain ones (README "Judging the judges").

* ``judges``: every imported judge and the built-in metrics compared with the physicians
  (:func:`evaluation.judges.judges_section`: acc_eq, tie calibration, tau, clusters, human ceiling);
* ``style_control``: the Bradley-Terry leaderboard with answer style as covariates (:func:`evaluation.judges.style_section`);
* ``harm_rates``: the share of judgements flagging each system's answer as potentially harmful, Wilson intervals;
* ``unblinded_leaderboard``: the leaderboard without the judgements whose ranker recognised the reference answer.

Full precision is kept in the stored result; pages round (``analytics.presentation.judges``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from analytics.judges.scores import study_judge_scores
from analytics.leaderboards import human_leaderboard
from analytics.selectors import SCORE_METRICS
from evaluation.judges import judges_section, style_section
from ranking.models import RankingTask, Study, StudyAnswer
from stats.significance import DEFAULT_PERMUTATIONS
from stats.style import answer_style


def study_judges(
    study: Study,
    model_ranks: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    n_resamples: int,
    seed: int,
    n_permutations: int = DEFAULT_PERMUTATIONS,
) -> dict | None:
    """The judges section (None when no judge was imported): the imported judges and the built-in metrics that have
    scores, against the physicians' rankings of the model answers (``model_ranks``: reference left out)."""
    judges: dict[str, pd.DataFrame] = dict(study_judge_scores(study))
    if not judges:
        return None
    imported = sorted(judges)
    left_out = {name: why for name in imported if (why := non_finite_score(judges[name])) is not None}
    for name in left_out:
        del judges[name]
    for metric in SCORE_METRICS:
        metric_scores = scores[["item", "system", metric]].rename(columns={metric: "score"}).dropna()
        if len(metric_scores):
            judges[metric] = metric_scores.reset_index(drop=True)
    try:
        section = judges_section(
            model_ranks,
            judges,
            tie_calibrate=True,
            n_permutations=n_permutations,
            n_resamples=n_resamples,
            seed=seed,
        )
    except ValueError as exc:  # e.g. no model answers ranked yet: said on the page, never a failed report
        return {"imported": imported, "undefined_reason": str(exc), "left_out": left_out}
    section["imported"] = imported
    section["n_permutations"] = n_permutations
    section["left_out"] = left_out
    return section


def non_finite_score(scores: pd.DataFrame) -> str | None:
    """Why a judge's stored scores cannot be compared (one that is not a finite number: the import refuses them
    now, but a score stored before it did stays in the database), naming the answer; None when all are finite.
    Such a judge is left out of the section and the others are compared, rather than one bad score undoing all."""
    bad = ~np.isfinite(scores["score"].to_numpy(dtype=float))
    if not bad.any():
        return None
    row = scores.iloc[int(bad.argmax())]
    return (
        f"its score of system {row['system']!r} on item {row['item']!r} is {row['score']}, not a finite number; "
        "import this judge's file again"
    )


def study_styles(study: Study) -> pd.DataFrame:
    """``item, system`` and the style features (:func:`stats.style.answer_style`) of every answer of the study."""
    rows = StudyAnswer.objects.filter(question__study=study).values_list("question__item__uid", "system__name", "text")
    return pd.DataFrame(
        [{"item": item, "system": system, **answer_style(text)} for item, system, text in rows],
        columns=["item", "system", "length", "headers", "list_items", "bold"],
    )


def study_style_control(study: Study, ranks: pd.DataFrame, *, n_resamples: int, seed: int) -> dict:
    """The style-controlled leaderboard over the same judgements as the human leaderboard, or why there is none."""
    try:
        return style_section(ranks, study_styles(study), n_resamples=n_resamples, seed=seed)
    except ValueError as exc:
        return {"undefined_reason": str(exc)}


def recognised_reference(study: Study) -> set[tuple[str, int]]:
    """(item uid, ranker id) of the submitted tasks in which the ranker picked out the reference answer."""
    return set(
        RankingTask.objects.filter(
            study=study, status=RankingTask.Status.SUBMITTED, unblinding_correct=True
        ).values_list("question__item__uid", "ranker_id")
    )


def unblinded_leaderboard(
    base: pd.DataFrame,
    plain: list[dict],
    recognised: Iterable[tuple[str, str]],
    reference: Iterable[str],
    *,
    n_resamples: int,
    seed: int,
) -> dict:
    """The human leaderboard without the judgements in ``recognised`` ((item, annotator) pairs), and whether the
    order of the systems differs from ``plain`` (the full leaderboard's rows)."""
    recognised = set(recognised)
    if not recognised:
        return {"n_dropped": 0}
    keep = [(item, who) not in recognised for item, who in zip(base["item"], base["annotator"], strict=True)]
    kept = base[keep]
    dropped = len({(i, a) for i, a in zip(base["item"], base["annotator"], strict=True)} & recognised)
    if kept["system"].nunique() < 2:
        return {"n_dropped": dropped, "undefined_reason": "no judgements left once those are dropped"}
    rows, notes = human_leaderboard(kept, reference, n_resamples=n_resamples, seed=seed)
    return {
        "n_dropped": dropped,
        "rows": rows,
        "notes": notes,
        "order_changed": _order(rows) != _order(plain),
    }


def _order(rows: Iterable[Mapping]) -> list[str]:
    return [row["system"] for row in rows]
