"""Fitting the reliability model of the vetting labels (Dawid–Skene, :mod:`stats.dawid_skene`) and storing it.

Labels: every primary and second review that judges its item (a review set aside because its item was sent back to
review still judged it; one "outside my field" never did: ``annotation.workflow.counts_as_judgement``), every
adjudication, by its adjudicator as a labeller of their own (a senior reading, with its own confusion matrix), and
every gold answer, on a gold item whose verdict is known (the model's anchor: the gold's expected verdict is
clamped as the item's truth).

What a fit stores (:class:`~annotation.models.reliability.ReliabilityFit`): the prior over the verdicts, overall
and per QA type (the type's base rate of wrong items); per person (and per person and QA type) the confusion
matrix, from the fitted posteriors' expected counts, with 95 % Jeffreys intervals, the share of their labels that
are right with its interval, and that share over consecutive windows of their reviews. A window whose whole
interval lies below the share over everything the person labelled before it is a **drift**: the reliability page
and the person's own queue say so and suggest recalibrating (the guidelines again, gold items).

A fit runs as a job: after each batch of reviews (a periodic task asks for one when ``RELIABILITY_REFIT_EVERY``
reviews have been stored since the last), or when an organizer asks.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models.functions import Extract

from annotation.models import Adjudication, GoldAnswer, GoldItem, Review, VettingConfig
from annotation.models.reliability import ReliabilityFit, ReviewerReliability
from annotation.second_review import (
    Threshold,
    adaptive_threshold,
    decision_error,
    disagreement_chance,
    reader_confusion,
    release_risk,
)
from annotation.selectors.review import judging_reviews
from annotation.workflow import Stage, Verdict
from portal.jobs import Progress, job_start
from portal.models import Job, User
from stats.dawid_skene import DawidSkeneFit, confusion_intervals, fit
from stats.drift import accuracy_windows, drifted

#: The verdicts in the model's order (codes 0, 1, 2).
LABELS: tuple[str, ...] = tuple(Verdict.values)
WRONG = LABELS.index(Verdict.INCORRECT)


@dataclass(frozen=True)
class VettingLabels:
    """The labels as the model reads them: row r says worker ``workers[r]`` gave ``labels[r]`` to ``items[r]``
    at ``times[r]``. ``item_ids[code]`` is the QAItem id of an item code, ``worker_keys[code]`` the (person id,
    as adjudicator) of a worker code; ``gold`` maps an item code to its known verdict's code."""

    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    times: np.ndarray
    primary: np.ndarray  # the label is a primary review
    item_ids: list[int]
    worker_keys: list[tuple[int, bool]]
    gold: dict[int, int]
    qa_types: list[str]  # per item code

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_workers(self) -> int:
        return len(self.worker_keys)


def vetting_labels(*, item_ids: Iterable[int] | None = None) -> VettingLabels:
    """Every judgement in the model's terms (optionally only those on ``item_ids``)."""
    rows: list[tuple[int, int, bool, str, float, bool, str]] = []
    reviews = judging_reviews()
    adjudications = Adjudication.objects.all()
    answers = GoldAnswer.objects.all()
    golds = GoldItem.objects.all()
    if item_ids is not None:
        ids = list(item_ids)
        reviews, adjudications = reviews.filter(item_id__in=ids), adjudications.filter(item_id__in=ids)
        answers, golds = answers.filter(gold__item_id__in=ids), golds.filter(item_id__in=ids)
    # the moment as seconds and the item's QA type, from the database: at 300,000 labels, converting each datetime
    # and looking the types up by a list of ids afterwards cost more than the fit
    at = Extract("created_at", "epoch")
    reviewed = reviews.values_list("item_id", "reviewer_id", "verdict", at, "stage", "item__qa_type")
    rows += [(i, p, False, v, t, stage == Stage.PRIMARY, q) for i, p, v, t, stage, q in reviewed]
    adjudicated = adjudications.values_list("item_id", "adjudicator_id", "verdict", at, "item__qa_type")
    rows += [(i, p, True, v, t, False, q) for i, p, v, t, q in adjudicated]
    answered = answers.values_list("gold__item_id", "reviewer_id", "verdict", at, "gold__item__qa_type")
    rows += [(i, p, False, v, t, False, q) for i, p, v, t, q in answered]
    rows.sort(key=lambda row: row[4])
    item_code: dict[int, int] = {}
    worker_code: dict[tuple[int, bool], int] = {}
    label_code = {label: code for code, label in enumerate(LABELS)}
    types: dict[int, str] = {}
    items, workers, labels, times, primary = [], [], [], [], []
    for item_id, person_id, senior, verdict, moment, first, qa_type in rows:
        items.append(item_code.setdefault(item_id, len(item_code)))
        workers.append(worker_code.setdefault((person_id, senior), len(worker_code)))
        labels.append(label_code[verdict])
        times.append(float(moment))
        primary.append(first)
        types[item_id] = qa_type
    gold = {
        item_code[item_id]: LABELS.index(verdict)
        for item_id, verdict in golds.values_list("item_id", "expected_verdict")
        if item_id in item_code
    }
    return VettingLabels(
        items=np.asarray(items, dtype=np.int64),
        workers=np.asarray(workers, dtype=np.int64),
        labels=np.asarray(labels, dtype=np.int64),
        times=np.asarray(times, dtype=float),
        primary=np.asarray(primary, dtype=bool),
        item_ids=list(item_code),
        worker_keys=list(worker_code),
        gold=gold,
        qa_types=[types[item_id] for item_id in item_code],
    )


def model_fit(data: VettingLabels) -> DawidSkeneFit:
    return fit(
        data.items,
        data.workers,
        data.labels,
        n_items=data.n_items,
        n_workers=data.n_workers,
        n_labels=len(LABELS),
        true_labels=data.gold,
    )


def _as_dict(matrix: np.ndarray) -> dict[str, dict[str, float]]:
    return {LABELS[k]: {LABELS[g]: float(matrix[k, g]) for g in range(len(LABELS))} for k in range(len(LABELS))}


def _person_rows(
    reliability_fit: ReliabilityFit, data: VettingLabels, result: DawidSkeneFit, *, window: int
) -> list[ReviewerReliability]:
    """Per labeller, overall and per QA type: confusion, intervals, share right; windows and drift overall."""
    right = result.posteriors[data.items, data.labels]  # each label's chance of being the item's truth
    types = np.asarray(data.qa_types, dtype=object)[data.items] if data.n_items else np.zeros(0, dtype=object)
    rows: list[ReviewerReliability] = []
    scopes: list[tuple[str, np.ndarray]] = [("", np.ones(len(data.items), dtype=bool))]
    scopes += [(qa_type, types == qa_type) for qa_type in sorted(set(data.qa_types))]
    for qa_type, chosen in scopes:
        intervals = confusion_intervals(result, data.items[chosen], data.workers[chosen], data.labels[chosen])
        counts = np.bincount(data.workers[chosen], minlength=data.n_workers)
        cells, read = _expected_cells(result, data, chosen)
        for worker, (person_id, senior) in enumerate(data.worker_keys):
            if not counts[worker]:
                continue
            mine = np.flatnonzero(chosen & (data.workers == worker))  # in time order: vetting_labels sorts by time
            rows.append(
                ReviewerReliability(
                    fit=reliability_fit,
                    person_id=person_id,
                    as_adjudicator=senior,
                    qa_type=qa_type,
                    n_labels=int(counts[worker]),
                    accuracy=float(intervals.share_correct[worker]),
                    accuracy_low=float(intervals.accuracy_low[worker]),
                    accuracy_high=float(intervals.accuracy_high[worker]),
                    confusion=_as_dict(cells[worker]),
                    intervals={
                        "low": _as_dict(intervals.low[worker]),
                        "high": _as_dict(intervals.high[worker]),
                        # how many items of each truth the person read, as the model counts them (a share of 100 %
                        # of about one wrong item says little)
                        "read": dict(zip(LABELS, map(float, read[worker]), strict=True)),
                    },
                    windows=accuracy_windows(right[mine], window) if not qa_type else [],
                    drift=drifted(right[mine], window) if not qa_type and not senior else False,
                )
            )
    return rows


def _expected_cells(result: DawidSkeneFit, data: VettingLabels, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per worker, the confusion matrix from the expected counts of the chosen labels (rows: true verdict, each
    summing to 1 where the worker labelled items of that truth; 0 elsewhere), and how many items of each truth the
    worker read (the rows' expected counts)."""
    n_labels = len(LABELS)
    cells = np.zeros((data.n_workers, n_labels, n_labels))
    workers, labels, items = data.workers[chosen], data.labels[chosen], data.items[chosen]
    for given in range(n_labels):  # cells[w, :, given] += the posterior of each item w called ``given``
        said = labels == given
        np.add.at(cells[:, :, given], workers[said], result.posteriors[items[said]])
    totals = cells.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, cells / np.where(totals > 0, totals, 1.0), 0.0), totals[:, :, 0]


def _typical_confusion(rows: list[ReviewerReliability]) -> dict[str, dict[str, float]]:
    """The label-weighted mean of the reviewers' overall confusion matrices: how a second reviewer reads."""
    reviewers = [row for row in rows if not row.qa_type and not row.as_adjudicator]
    total = sum(row.n_labels for row in reviewers) or 1
    return {
        truth: {given: sum(row.n_labels * row.confusion[truth][given] for row in reviewers) / total for given in LABELS}
        for truth in LABELS
    }


def threshold_for(
    data: VettingLabels,
    rows: list[ReviewerReliability],
    prior_by_type: dict[str, dict[str, float]],
    config: VettingConfig,
) -> Threshold | None:
    """The adaptive rule's threshold (:func:`annotation.second_review.adaptive_threshold`) over every primary
    review whose reviewer the model knows, read as the queue will read the next ones."""
    by_key = {(row.person_id, row.qa_type): (row.n_labels, row.confusion) for row in rows if not row.as_adjudicator}
    typical = _typical_confusion(rows)
    types = sorted(set(data.qa_types))
    index_of = {qa_type: index for index, qa_type in enumerate(types)}
    type_code = np.asarray([index_of[qa_type] for qa_type in data.qa_types], dtype=np.int64)
    primary = np.flatnonzero(data.primary)
    if not len(primary):
        return None
    # Each primary review is read by its (reviewer, QA type, verdict): a few hundred kinds at most, each read once
    # with the rule the queue uses, then counted as often as it occurs.
    kinds = np.stack([data.workers[primary], type_code[data.items[primary]], data.labels[primary]], axis=1)
    unique, counts = np.unique(kinds, axis=0, return_counts=True)
    risks, errors, disagreements, weights = [], [], [], []
    for (worker, type_index, label), count in zip(unique.tolist(), counts.tolist(), strict=True):
        person_id, _ = data.worker_keys[worker]
        qa_type = types[type_index]
        confusion = reader_confusion(by_key.get((person_id, "")), by_key.get((person_id, qa_type)))
        if confusion is None:
            continue
        first, prior = LABELS[label], prior_by_type[qa_type]
        error = decision_error(first, prior, confusion)
        risks.append(release_risk(first, error))
        errors.append(error)
        disagreements.append(disagreement_chance(first, prior, confusion, typical))
        weights.append(int(count))
    if not errors:
        return None
    return adaptive_threshold(
        np.repeat(risks, weights), np.repeat(errors, weights), np.repeat(disagreements, weights),
        second_share=config.second_share, uniform_share=config.uniform_share, adjudicate_above=config.adjudicate_above,
    )  # fmt: skip


def reliability_fit(*, job: Job | None = None, progress: Progress | None = None) -> ReliabilityFit | None:
    """Fit the model to every judgement and store it; None when nothing has been judged yet."""
    started = time.perf_counter()
    n_reviews = Review.objects.count()
    if progress is not None:
        progress.start(3, "reading the judgements")
    data = vetting_labels()
    if not data.n_items:
        return None
    if progress is not None:
        progress.advance(1, "fitting the model")
    result = model_fit(data)
    if progress is not None:
        progress.advance(1, "storing each reviewer's figures")
    window = settings.RELIABILITY_WINDOW
    types = np.asarray(data.qa_types, dtype=object)
    prior_by_type = {
        qa_type: dict(zip(LABELS, map(float, result.posteriors[types == qa_type].mean(axis=0)), strict=True))
        for qa_type in sorted(set(data.qa_types))
    }
    with transaction.atomic():
        stored = ReliabilityFit.objects.create(
            job=job,
            labels=list(LABELS),
            prior=dict(zip(LABELS, map(float, result.priors), strict=True)),
            prior_by_type=prior_by_type,
            n_items=data.n_items,
            n_labels=len(data.items),
            n_reviews_seen=n_reviews,
            iterations=result.iterations,
            window=window,
            seconds=0.0,
        )
        rows = _person_rows(stored, data, result, window=window)
        ReviewerReliability.objects.bulk_create(rows, batch_size=2000)
        threshold = threshold_for(data, rows, prior_by_type, VettingConfig.load())
        if threshold is not None:
            stored.adaptive_threshold, stored.adaptive_tie_share = threshold.value, threshold.tie_share
        stored.seconds = time.perf_counter() - started
        stored.save(update_fields=["adaptive_threshold", "adaptive_tie_share", "seconds"])
    if progress is not None:
        progress.advance(1, "stored")
    return stored


def reliability_fit_request(*, user: User | None = None) -> Job:
    """Queue a fit as a job (the reliability page's button, and the periodic check below); a fit already queued or
    running is the answer to a second request (two tabs, a double click): one fit reads every judgement anyway."""
    waiting = fit_waiting()
    if waiting is not None:
        return waiting
    return job_start(kind="reliability_fit", params={}, user=user)


def fit_waiting() -> Job | None:
    """The fit queued or running, if any."""
    return Job.objects.filter(kind="reliability_fit", status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).first()


def reliability_refit_due() -> bool:
    """Whether ``RELIABILITY_REFIT_EVERY`` reviews have been stored since the latest fit (or there is none yet and
    there are reviews), and no fit is queued or running."""
    if fit_waiting() is not None:
        return False
    latest = ReliabilityFit.objects.order_by("-created_at").values_list("n_reviews_seen", flat=True).first()
    stored = Review.objects.count()
    if latest is None:
        return stored > 0
    return stored - latest >= settings.RELIABILITY_REFIT_EVERY
