"""Nugget scores and agreement of a study, for the organizer's nugget pages and the study report.

One assembly for files and for the database: the labels of the study (:mod:`analytics.nuggets.selectors`) go
through the same :func:`evaluation.nuggets.nugget_scores` / :func:`~evaluation.nuggets.nugget_summary` as
``manage.py nugget_eval``, so the page, the report and the command agree on the same labels. Added here, where
the portal has more than files: the physicians' sentence marks (``precision``) and their rankings (each nugget
score's system ranking against the human preference leaderboard).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import pandas as pd

from analytics.boards import (
    BoardState,
    board_refresh,
    board_state,
    board_store,
    labeller_changes,
    stored_board,
    submission_changes,
)
from analytics.leaderboards import human_leaderboard
from analytics.models import NuggetLeaderboard
from analytics.nuggets.selectors import StudyNuggets, nugget_questions, study_nugget_inputs, study_nuggets
from analytics.selectors import study_rankings
from evaluation.nuggets import (
    CONSENSUS,
    CORRELATED_SCORES,
    MATCHER,
    nugget_scores,
    nugget_summary,
    reference_labeller,
)
from metrics.nuggets import SCORE_LABELS
from portal.jobs import Progress
from ranking.models import Study
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.nuggets import system_rank_correlation
from stats.rates import harm_rates

#: The nugget scores the metric-vs-physician correlation report adds beside the text metrics, per labeller kind.
HUMAN_CORRELATED = ("all", "vital_strict")
AUTOMATIC_CORRELATED = ("all",)
NUGGET_METRIC_PREFIX = "nugget"


@dataclass
class NuggetScores:
    """Every answer's nugget scores per labeller (the consensus's included) and the labels behind them."""

    data: StudyNuggets
    frame: pd.DataFrame  # every label, the consensus's included
    per_answer: pd.DataFrame

    @property
    def reference(self) -> str | None:
        """The human labeller the automatic ones are held to (:func:`evaluation.nuggets.reference_labeller`)."""
        return reference_labeller(self.data.humans)

    @property
    def labellers(self) -> list[str]:
        """Every labeller with scores, in the order pages list them: consensus, physicians, matcher, judges."""
        present = set(self.per_answer["labeller"].unique()) if not self.per_answer.empty else set()
        order = [CONSENSUS, *self.data.humans, MATCHER, *self.data.judges]
        return [name for name in dict.fromkeys(order) if name in present]

    @property
    def automatic(self) -> list[str]:
        return self.data.automatic


@dataclass
class NuggetBoard:
    """What the nugget pages and the API show of a study, as the job stores it (JSON): ``summary`` as
    :func:`evaluation.nuggets.nugget_summary` gives it, the labellers and the correlations with the physicians'
    rankings (``{labeller: {score: {spearman, kendall_tau_b, n, note}}}``)."""

    summary: dict
    labellers: list[str]
    humans: list[str]
    judges: list[str]
    reference_systems: list[str]
    ranking_correlation: dict
    n_answers: int
    n_questions: int
    #: :func:`stats.rates.harm_rates` of the physicians' rankings (shown where the study asks for harm)
    harm_rates: list[dict] = field(default_factory=list)

    @property
    def automatic(self) -> list[str]:
        return self.summary["labellers"]["automatic"]

    @property
    def reference(self) -> str | None:
        """The human labeller the automatic ones are held to (:func:`evaluation.nuggets.reference_labeller`)."""
        return reference_labeller(self.humans)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> NuggetBoard:
        return cls(**data)


@dataclass
class NuggetReport(NuggetScores):
    """:class:`NuggetScores` with the system means, their intervals, the agreement figures and the rank
    correlations with the physicians' rankings (see :class:`NuggetBoard`)."""

    summary: dict = field(default_factory=dict)
    ranking_correlation: dict = field(default_factory=dict)
    human_strengths: dict[str, float] = field(default_factory=dict)
    harm_rates: list[dict] = field(default_factory=list)

    def board(self) -> NuggetBoard:
        return NuggetBoard(
            summary=self.summary,
            labellers=self.labellers,
            humans=list(self.data.humans),
            judges=list(self.data.judges),
            reference_systems=sorted(self.data.reference_systems),
            ranking_correlation=self.ranking_correlation,
            n_answers=len(self.data.answers),
            n_questions=len(self.data.nuggets),
            harm_rates=self.harm_rates,
        )


def study_nugget_scores(
    study, *, question_ids=None, humans: Sequence[str] = (), metrics_only: bool = False
) -> NuggetScores:
    """Every answer's scores per labeller, without the system figures; ``question_ids``: only those questions
    (one item's page), ``humans``: physicians to count towards the consensus beside those who labelled these
    questions (the study's, so an item shows the consensus the leaderboard used); ``metrics_only``: only what
    :func:`nugget_metric_scores` takes (the reference labeller's and the automatic ones' scores, no sentence
    marks, the labels read in no order), for the study report."""
    data = study_nuggets(study, question_ids=question_ids, marks=not metrics_only, ordered=not metrics_only)
    if humans:
        data.humans = sorted(set(data.humans) | set(humans))
    scored = None
    if metrics_only:
        reference = reference_labeller(data.humans)
        scored = [*([reference] if reference else []), *data.automatic]
    frame, per_answer = nugget_scores(data.frame, data.nuggets, data.humans, marks=data.marks, scored=scored)
    return NuggetScores(data=data, frame=frame, per_answer=per_answer)


def study_nugget_report(
    study, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, progress: Progress | None = None
) -> NuggetReport:
    """Scores per answer and per system for every labeller of ``study``, with bootstrap intervals, agreement
    (physicians' ordinal alpha; each automatic labeller against the physicians' consensus with the leave-one-out
    ceiling) and system-level rank correlations with the human nugget score and with the human leaderboard.

    The reference answer (when the study shows it) is scored like a system but left out of every system-level
    correlation, as the study report leaves it out of the metric correlations.
    """
    if progress is not None:
        progress.start(3, "reading the labels")
    scores = study_nugget_scores(study)
    data, frame, per_answer = scores.data, scores.frame, scores.per_answer
    if progress is not None:
        progress.advance(1, "scores per system, agreement")
    summary = nugget_summary(
        frame,
        per_answer,
        data.humans,
        data.automatic,
        n_resamples=n_resamples,
        seed=seed,
        correlated_systems=_model_systems(per_answer, data),
    )
    report = NuggetReport(data=data, frame=frame, per_answer=per_answer, summary=summary)
    if progress is not None:
        progress.advance(1, "correlation with the physicians' rankings")
    if study.ask_ranking:  # the physicians' rankings, read once for the strengths and the harm flags
        ranks = study_rankings(study)
        report.human_strengths = _human_strengths(ranks, seed=seed)
        report.harm_rates = harm_rates(ranks) if not ranks.empty else []
    reference = report.reference
    if report.human_strengths:
        for labeller in [*([reference] if reference else []), *data.automatic]:
            report.ranking_correlation[labeller] = {
                score: system_rank_correlation(_system_means(summary, labeller, score), report.human_strengths)
                for score in CORRELATED_SCORES
            }
    if progress is not None:
        progress.advance(1)
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


def _human_strengths(ranks: pd.DataFrame, *, seed: int) -> dict[str, float]:
    """Each model system's Bradley-Terry strength on the study's human leaderboard (reference left out)."""
    if ranks.empty:
        return {}
    reference = set(ranks.loc[ranks["is_reference"], "system"])
    # Only the strengths are needed here: no bootstrap (the study report computes the intervals).
    rows, _ = human_leaderboard(
        ranks[["item", "annotator", "answer", "rank", "system"]], reference, n_resamples=0, seed=seed
    )
    return {row["system"]: row["strength"] for row in rows if not row["is_reference"] and row["strength"] is not None}


def nugget_metric_scores(report: NuggetScores) -> dict[str, pd.DataFrame]:
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


def item_labels(report: NuggetScores, item_uid: str) -> dict[tuple[str, str], dict[str, str]]:
    """(system, labeller) → nugget key → label, for one item (the consensus included)."""
    out: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    frame = report.frame
    rows = frame[frame["item_uid"] == item_uid]
    for system, labeller, key, label in rows[["system", "labeller", "nugget_id", "label"]].itertuples(index=False):
        out[system, labeller][key] = label
    return out


def _board_changes(then: dict, now: dict) -> list[str]:
    return submission_changes(then.get("labels") or {}, now["labels"]) + labeller_changes(
        then.get("labellers") or {},
        now["labellers"],
        noun=lambda name: "the matcher" if name == MATCHER else f"judge “{name}”",
        verb=lambda name: "run" if name == MATCHER else "imported",
    )


def nugget_board_state(study) -> BoardState[NuggetBoard]:
    """The stored nugget board of ``study`` and what has changed since it was computed."""
    return board_state(
        NuggetLeaderboard,
        study,
        inputs=study_nugget_inputs(study),
        load=NuggetBoard.from_json,
        changes=_board_changes,
    )


def nugget_board_shown(study, *, user=None) -> BoardState[NuggetBoard]:
    """What the nugget leaderboard page and the API show: :func:`nugget_board_state`, after queueing the job that
    computes the first board when none is stored, computing or failed (a study with nugget questions; also a board
    stored in a shape this version cannot read). Read again after queueing: without a broker the job has run."""
    state = nugget_board_state(study)
    if state.board is None and not (state.computing or state.failed) and nugget_questions(study).exists():
        nugget_board_refresh(study=study, user=user)
        state = nugget_board_state(study)
    return state


def nugget_board(study) -> NuggetBoard | None:
    """The stored nugget board of ``study`` (None before the first is computed), without what changed since."""
    return stored_board(NuggetLeaderboard, study, NuggetBoard.from_json)


def nugget_board_refresh(*, study, user=None) -> NuggetLeaderboard:
    """Queue the job that computes ``study``'s nugget board again, unless one is already queued or running."""
    return board_refresh(NuggetLeaderboard, study=study, kind="nugget_leaderboard", user=user)


def nugget_board_compute(*, study_id: int, progress: Progress | None = None) -> NuggetLeaderboard:
    """Compute and store the nugget board of the study (the job's work; running it twice is harmless)."""
    study = Study.objects.get(pk=study_id)
    inputs = study_nugget_inputs(study)  # before the labels are read (see board_store)
    board = study_nugget_report(study, progress=progress).board()
    return board_store(NuggetLeaderboard, study=study, inputs=inputs, result=board.to_json())
