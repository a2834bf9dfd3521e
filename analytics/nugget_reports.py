"""Nugget scores and agreement of a study, for the organizer's nugget pages and the study report.

One assembly for files and for the database: the labels of the study (:mod:`analytics.nugget_selectors`) go
through the same :func:`analytics.nugget_eval.nugget_scores` / :func:`~analytics.nugget_eval.nugget_summary` as
``manage.py nugget_eval``, so the page, the report and the command agree on the same labels. Added here, where
the portal has more than files: the physicians' sentence marks (``precision``) and their rankings (each nugget
score's system ranking against the human preference leaderboard).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field

import pandas as pd

from analytics.leaderboards import human_leaderboard
from analytics.nugget_eval import CONSENSUS, CORRELATED_SCORES, MATCHER, nugget_scores, nugget_summary
from analytics.nugget_selectors import StudyNuggets, study_nugget_fingerprint, study_nuggets
from analytics.selectors import study_rankings
from metrics.nuggets import SCORE_LABELS
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.nuggets import system_rank_correlation

#: The nugget scores the metric-vs-physician correlation report adds beside the text metrics, per labeller kind.
HUMAN_CORRELATED = ("all", "vital_strict")
AUTOMATIC_CORRELATED = ("all",)
NUGGET_METRIC_PREFIX = "nugget"


@dataclass
class NuggetReport:
    """A study's nugget figures: ``summary`` as :func:`analytics.nugget_eval.nugget_summary` gives it, plus the
    per-answer scores, the labels behind them, the human reference labeller and the correlations with the
    physicians' rankings (``{labeller: {score: {spearman, kendall_tau_b, n, note}}}``)."""

    summary: dict
    frame: pd.DataFrame  # every label, the consensus's included
    per_answer: pd.DataFrame
    data: StudyNuggets
    reference: str | None
    ranking_correlation: dict = field(default_factory=dict)
    human_strengths: dict[str, float] = field(default_factory=dict)

    @property
    def labellers(self) -> list[str]:
        """Every labeller with scores, in the order pages list them: consensus, physicians, matcher, judges."""
        present = set(self.per_answer["labeller"]) if not self.per_answer.empty else set()
        order = [CONSENSUS, *self.data.humans, MATCHER, *self.data.judges]
        return [name for name in dict.fromkeys(order) if name in present]

    @property
    def automatic(self) -> list[str]:
        return self.summary["labellers"]["automatic"]


def study_nugget_report(study, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> NuggetReport:
    """Scores per answer and per system for every labeller of ``study``, with bootstrap intervals, agreement
    (physicians' ordinal alpha; each automatic labeller against the physicians' consensus with the leave-one-out
    ceiling) and system-level rank correlations with the human nugget score and with the human leaderboard.

    The reference answer (when the study shows it) is scored like a system but left out of every system-level
    correlation, as the study report leaves it out of the metric correlations.
    """
    data = study_nuggets(study)
    humans, automatic = data.humans, data.automatic
    frame, per_answer = nugget_scores(data.frame, data.nuggets, humans, marks=data.marks)
    summary = nugget_summary(
        frame,
        per_answer,
        humans,
        automatic,
        n_resamples=n_resamples,
        seed=seed,
        correlated_systems=_model_systems(per_answer, data),
    )
    reference = CONSENSUS if len(humans) >= 2 else (humans[0] if humans else None)
    report = NuggetReport(summary=summary, frame=frame, per_answer=per_answer, data=data, reference=reference)
    report.human_strengths = _human_strengths(study, data, n_resamples=n_resamples, seed=seed)
    if report.human_strengths:
        for labeller in [*([reference] if reference else []), *automatic]:
            report.ranking_correlation[labeller] = {
                score: system_rank_correlation(_system_means(summary, labeller, score), report.human_strengths)
                for score in CORRELATED_SCORES
            }
    return report


def _model_systems(per_answer: pd.DataFrame, data: StudyNuggets) -> list[str]:
    systems = set(per_answer["system"]) if not per_answer.empty else set()
    return sorted(systems - data.reference_systems)


def _system_means(summary: dict, labeller: str, score: str) -> dict[str, float]:
    return {
        system: by[labeller][score]
        for system, by in summary["systems"].items()
        if labeller in by and by[labeller].get(score) is not None
    }


def _human_strengths(study, data: StudyNuggets, *, n_resamples: int, seed: int) -> dict[str, float]:
    """Each model system's Bradley-Terry strength on the study's human leaderboard (reference left out)."""
    if not study.ask_ranking:
        return {}
    ranks = study_rankings(study)
    if ranks.empty:
        return {}
    reference = set(ranks.loc[ranks["is_reference"], "system"])
    # Only the strengths are needed here: no bootstrap (the study report computes the intervals).
    rows, _ = human_leaderboard(
        ranks[["item", "annotator", "answer", "rank", "system"]], reference, n_resamples=0, seed=seed
    )
    return {row["system"]: row["strength"] for row in rows if not row["is_reference"] and row["strength"] is not None}


def nugget_metric_scores(report: NuggetReport) -> dict[str, pd.DataFrame]:
    """Per-answer nugget scores as further metrics of the correlation report: ``{key: frame(item, system,
    score)}`` with keys ``nugget:<labeller>:<score>``: the physicians' consensus (or the single physician) on
    ``all`` and ``vital_strict``, the matcher and each judge on ``all``."""
    wanted = []
    if report.reference is not None:
        wanted += [(report.reference, score) for score in HUMAN_CORRELATED]
    wanted += [(labeller, score) for labeller in report.automatic for score in AUTOMATIC_CORRELATED]
    out = {}
    for labeller, score in wanted:
        rows = report.per_answer[report.per_answer["labeller"] == labeller]
        frame = rows.rename(columns={"item_uid": "item", score: "score"})[["item", "system", "score"]].dropna()
        out[f"{NUGGET_METRIC_PREFIX}:{labeller}:{score}"] = frame.reset_index(drop=True)
    return out


def labeller_label(name: str) -> str:
    """A labeller as the organizer reads it."""
    if name == CONSENSUS:
        return "Physicians' consensus"
    if name == MATCHER:
        return "Matcher"
    if name.startswith("annotator-"):
        return f"Physician {name}"
    return f"Judge {name}"


#: Nugget scores named as metrics beside BLEU and ROUGE.
NUGGET_METRIC_NAMES = {"all": "Nugget score", "vital_strict": "Nugget strict vital recall"}


def nugget_metric_label(key: str) -> str:
    """``nugget:consensus:vital_strict`` → "Nugget strict vital recall (physicians' consensus)"."""
    _, labeller, score = key.split(":", 2)
    who = labeller_label(labeller)
    name = NUGGET_METRIC_NAMES.get(score) or f"Nugget {SCORE_LABELS.get(score, score).lower()}"
    return f"{name} ({who[0].lower()}{who[1:]})"


def item_labels(report: NuggetReport, item_uid: str) -> dict[tuple[str, str], dict[str, str]]:
    """(system, labeller) → nugget key → label, for one item (the consensus included)."""
    out: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    frame = report.frame
    rows = frame[frame["item_uid"] == item_uid]
    for system, labeller, key, label in rows[["system", "labeller", "nugget_id", "label"]].itertuples(index=False):
        out[system, labeller][key] = label
    return out


_CACHE: dict[tuple, NuggetReport] = {}
_CACHE_SIZE = 8
_CACHE_LOCK = threading.Lock()  # gunicorn's threads share the cache


def study_nugget_report_cached(study) -> NuggetReport:
    """:func:`study_nugget_report` kept in this process until the study's labels change (the leaderboard page,
    its plot and the item pages read the same figures; the bootstrap is the slow part)."""
    key = study_nugget_fingerprint(study)
    with _CACHE_LOCK:
        report = _CACHE.get(key)
    if report is None:
        report = study_nugget_report(study)
        with _CACHE_LOCK:
            while len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = report
    return report
