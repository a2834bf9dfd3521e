"""Review models, one reviewer's work on one item: the lease (assignment), the review, its earlier versions and
the server-side draft.

A primary review can be changed by its author while nothing was built on it yet
(``annotation.workflow.review_edit_refusal``); every earlier version is kept as a :class:`ReviewRevision` row and
audited. A review's ``superseded_at`` is set once, audited, when an organizer sends
its item back to review, or at once when its author could not tell because the item is outside their field
(``annotation.workflow.counts_as_judgement``).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.workflow import RELEVANCE_VALUES, CannotTellReason, Stage, Verdict

RELEVANCE_CHOICES = [(i, str(i)) for i in RELEVANCE_VALUES]


class Assignment(models.Model):
    """A reviewer's lease on one item at one stage. One row per (item, reviewer): never the same item twice."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUBMITTED = "submitted"  # a review (or gold answer) was stored
        RELEASED = "released"  # the lease ended without a review: expired, or a dispute / feedback instead
        # its review was set aside: an organizer sent the item back to review, or its author could not tell because
        # the item is outside their field
        SUPERSEDED = "superseded"

    # No index of their own: (item, stage, status) and (reviewer, status) lead with them (Meta), and every lease
    # row is written twice per review (annotation.models.items.QAItem.Meta says why that counts).
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="assignments", db_index=False)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments", db_index=False
    )
    stage = models.CharField(max_length=12, choices=Stage.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    idempotency_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    guideline = models.ForeignKey(
        "annotation.GuidelineVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,  # never looked up by guideline (versions are never deleted): one index less per lease
        help_text="The guideline version current when the lease was handed out, which its review records "
        "(empty: none existed for the item's benchmark and type).",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="assignment_once_per_reviewer"),
            # Last line of defence behind the row locks: at most one live-or-done lease per item and stage.
            models.UniqueConstraint(
                fields=["item", "stage"],
                condition=Q(status="submitted") & ~Q(stage="gold"),
                name="assignment_one_review_per_stage",
            ),
        ]
        indexes = [
            models.Index(fields=["reviewer", "status"]),
            models.Index(fields=["item", "stage", "status"]),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} · {self.item_id} · {self.stage} · {self.status}"


class Review(models.Model):
    """A primary or secondary review of a real item. Blind: only its author, adjudicators and organizers read it."""

    assignment = models.OneToOneField(Assignment, on_delete=models.PROTECT, related_name="review")
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews")
    stage = models.CharField(max_length=12, choices=Stage.choices)
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    cannot_tell_reason = models.CharField(
        max_length=20,
        choices=CannotTellReason.choices,
        blank=True,
        help_text="Why the reviewer cannot tell (with that verdict only; empty on reviews stored before it was asked).",
    )
    relevance = models.PositiveSmallIntegerField(choices=RELEVANCE_CHOICES)
    comment = models.TextField(blank=True)
    server_seconds = models.FloatField(help_text="From lease start to submission, measured by the server.")
    active_seconds = models.FloatField(null=True, blank=True, help_text="Active time reported by the page.")
    guideline = models.ForeignKey(
        "annotation.GuidelineVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,  # never looked up by guideline, as the lease's: one index less per review
        help_text="The guideline version shown with the item (empty: none existed for its benchmark and type).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    superseded_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When an organizer sent the item back to review because no adjudicator could decide it (the "
        "review is kept and counts in agreement figures), or when it was stored, for a review outside its author's "
        "field (it counts in none); either way it no longer routes the item.",
    )
    edited_at = models.DateTimeField(null=True, blank=True, help_text="Last change by its author; empty if never.")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "stage"], condition=Q(superseded_at__isnull=True), name="review_one_per_stage"
            ),
            models.CheckConstraint(
                condition=Q(cannot_tell_reason="") | Q(verdict=Verdict.CANNOT_TELL),
                name="review_reason_only_with_cannot_tell",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.stage} review of {self.item_id} by {self.reviewer_id}"


class ReviewRevision(models.Model):
    """An earlier version of a review, written when its author changed it (append-only).

    Version 1 is what was first submitted; the review row itself holds the newest version."""

    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="revisions")
    version = models.PositiveSmallIntegerField()
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    cannot_tell_reason = models.CharField(max_length=20, choices=CannotTellReason.choices, blank=True)
    relevance = models.PositiveSmallIntegerField(choices=RELEVANCE_CHOICES)
    comment = models.TextField(blank=True)
    stored_at = models.DateTimeField(help_text="When this version was submitted (or last changed).")
    replaced_at = models.DateTimeField(auto_now_add=True, help_text="When the author replaced it.")

    class Meta:
        ordering = ["review", "version"]
        constraints = [models.UniqueConstraint(fields=["review", "version"], name="review_revision_once")]

    def __str__(self) -> str:
        return f"review {self.review_id} version {self.version}"


class ReviewDraft(models.Model):
    """What a reviewer has typed on a review page so far, so that it survives a reload or another device.

    Private to its owner: read and written only through the owner's own lease, never exported, deleted when the
    lease ends in a review, dispute or feedback note."""

    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_drafts")
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="+")
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["reviewer", "item"], name="review_draft_once")]

    def __str__(self) -> str:
        return f"draft of {self.reviewer_id} on {self.item_id}"
