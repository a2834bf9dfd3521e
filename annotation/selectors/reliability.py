"""What the reliability page and the review queue read of the latest reliability fit."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models.reliability import ReliabilityFit, ReviewerReliability
from annotation.qa_types import qa_type_label
from annotation.second_review import Choice, Policy, choose, decision_error, reader_confusion
from annotation.workflow import Verdict, second_review_selected
from portal.models import TrainingLevel, User

CORRECT, INCORRECT = Verdict.CORRECT.value, Verdict.INCORRECT.value


def latest_fit() -> ReliabilityFit | None:
    return ReliabilityFit.objects.order_by("-pk").first()  # fits are numbered in the order they are made


@dataclass(frozen=True)
class ReaderFigures:
    """A person's figures in a fit, as the page shows them."""

    row: ReviewerReliability
    person: User

    @property
    def passes_wrong(self) -> tuple[float, float, float] | None:
        """How often they call a wrong item correct, with its interval (None: no wrong item in their share)."""
        return self._cell(INCORRECT, CORRECT, "wrong item")

    @property
    def fails_right(self) -> tuple[float, float, float] | None:
        """How often they call a correct item wrong, with its interval."""
        return self._cell(CORRECT, INCORRECT, "correct item")

    def _cell(self, truth: str, given: str, noun: str) -> tuple[float, float, float, str] | None:
        """(share, low, high, how many items of that truth the share is of, in words)."""
        row = self.row.confusion.get(truth, {})
        if not sum(row.values()):
            return None
        low = self.row.intervals.get("low", {}).get(truth, {}).get(given)
        high = self.row.intervals.get("high", {}).get(truth, {}).get(given)
        read = self.row.intervals.get("read", {}).get(truth)
        if read is None:
            of = ""
        elif read < 0.5:
            of = f"of less than one {noun}"
        else:
            of = f"of about {round(read)} {noun}{'s' if round(read) != 1 else ''}"
        return row.get(given, 0.0), low, high, of


def reviewer_figures(fit: ReliabilityFit) -> list[ReaderFigures]:
    """Every reviewer's overall figures in ``fit`` (adjudications apart), lowest share right first."""
    rows = ReviewerReliability.objects.filter(fit=fit, qa_type="", as_adjudicator=False).select_related("person")
    return sorted((ReaderFigures(row, row.person) for row in rows), key=lambda figures: figures.row.accuracy)


def adjudicator_figures(fit: ReliabilityFit) -> list[ReaderFigures]:
    rows = ReviewerReliability.objects.filter(fit=fit, qa_type="", as_adjudicator=True).select_related("person")
    return [ReaderFigures(row, row.person) for row in rows]


def by_training_level(figures: list[ReaderFigures]) -> list[tuple[str, list[ReaderFigures]]]:
    """The reviewers grouped by training level, in the levels' order, "not stated" last."""
    groups: dict[str, list[ReaderFigures]] = {}
    for one in figures:
        groups.setdefault(one.person.training_level, []).append(one)
    order = [*TrainingLevel.values, ""]
    return [
        (TrainingLevel(level).label if level else "Training level not stated", groups[level])
        for level in order
        if level in groups
    ]


def type_table(fit: ReliabilityFit) -> tuple[list[tuple[str, str]], list[dict]]:
    """Per reviewer, the share right on each QA type with n: (columns, rows)."""
    rows = (
        ReviewerReliability.objects.filter(fit=fit, as_adjudicator=False).exclude(qa_type="").select_related("person")
    )
    types = sorted({row.qa_type for row in rows})
    table: dict[int, dict] = {}
    for row in rows:
        entry = table.setdefault(row.person_id, {"person": row.person, "cells": {}})
        entry["cells"][row.qa_type] = row
    columns = [(qa_type, qa_type_label(qa_type)) for qa_type in types]
    ordered = sorted(table.values(), key=lambda entry: entry["person"].email)
    for entry in ordered:
        entry["row"] = [entry["cells"].get(qa_type) for qa_type in types]
    return columns, ordered


def own_drift(person: User) -> ReviewerReliability | None:
    """The person's overall figures in the latest fit when that fit found a drift in their reviews (their queue
    shows the recalibration prompt); None otherwise."""
    fit = latest_fit()
    if fit is None:
        return None
    return ReviewerReliability.objects.filter(
        fit=fit, person=person, qa_type="", as_adjudicator=False, drift=True
    ).first()


def first_reader(fit: ReliabilityFit, person_id: int, qa_type: str) -> tuple[tuple | None, tuple | None]:
    """(labels, confusion) of ``person_id`` overall and on ``qa_type`` in ``fit`` (None where not fitted): what
    :func:`annotation.second_review.reader_confusion` chooses from. One indexed read on the review path."""
    found = ReviewerReliability.objects.filter(
        fit=fit, person_id=person_id, as_adjudicator=False, qa_type__in=["", qa_type]
    ).values_list("qa_type", "n_labels", "confusion")
    by_type = {row_type: (n, confusion) for row_type, n, confusion in found}
    return by_type.get(""), by_type.get(qa_type) if qa_type else None


def second_review_choice(*, item, reviewer_id: int, verdict: str, config) -> Choice:
    """Whether the item gets a second review after its first (``annotation.second_review.choose``), as the vetting
    settings' policy says: under the adaptive policy, read with the latest fit's figures of the first reviewer on the
    item's QA type and the type's prior (two indexed reads); under the uniform one, the seeded draw alone."""
    share_draw = second_review_selected(seed=config.seed, uid=item.uid, share=config.second_share)
    if config.second_review_policy != Policy.ADAPTIVE:
        return choose(
            policy=Policy.UNIFORM, uniform_draw=False, share_draw=share_draw, first=verdict, error=None, threshold=None
        )
    uniform_draw = second_review_selected(seed=config.seed, uid=item.uid, share=config.uniform_share)
    fit = latest_fit()
    error = None
    if fit is not None:
        confusion = reader_confusion(*first_reader(fit, reviewer_id, item.qa_type))
        prior = fit.prior_by_type.get(item.qa_type, fit.prior)
        error = decision_error(verdict, prior, confusion) if confusion is not None else None
    return choose(
        policy=Policy.ADAPTIVE, uniform_draw=uniform_draw, share_draw=share_draw, first=verdict, error=error,
        threshold=fit.adaptive_threshold if fit is not None else None,
        tie_draw=fit is not None and second_review_selected(seed=f"{config.seed}:tie", uid=item.uid, share=fit.adaptive_tie_share),
        adjudicate_above=config.adjudicate_above,
    )  # fmt: skip
