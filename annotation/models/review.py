"""Vetting models: configuration, review leases, reviews, gold items, disputes, feedback and adjudications.

Imported at the end of ``annotation/models.py``. Gold answers and adjudications are append-only: nothing edits them
after they are stored, and each creation writes an audit entry. A primary review can be changed by its author while
nothing was built on it yet (``annotation.workflow.review_edit_refusal``); every earlier version is kept as a
:class:`ReviewRevision` row and audited. A review's ``superseded_at`` is set once, audited, when an organizer sends
its item back to review.
"""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.workflow import Stage, Verdict

__all__ = [
    "VettingConfig",
    "Assignment",
    "Review",
    "ReviewRevision",
    "ReviewDraft",
    "GoldItem",
    "GoldAnswer",
    "Dispute",
    "DisputeComment",
    "FeedbackNote",
    "Adjudication",
]

RELEVANCE_CHOICES = [(i, str(i)) for i in range(1, 6)]


def _new_seed() -> str:
    return secrets.token_hex(8)


class VettingConfig(models.Model):
    """Singleton (pk=1) holding the organizer's vetting settings; the seed makes the second-review draw reproducible."""

    seed = models.CharField(max_length=64, default=_new_seed, help_text="Seed of the second-review draw.")
    second_share = models.FloatField(default=0.45, help_text="Share of items drawn for an independent second review.")
    relevance_gap = models.PositiveSmallIntegerField(
        default=2, help_text="Relevance difference that needs adjudication."
    )
    gold_rate = models.FloatField(default=0.05, help_text="Share of 'next' requests answered with a gold item.")
    gold_min_accuracy = models.FloatField(default=0.8, help_text="Reviewers below this gold accuracy are flagged.")
    gold_min_answers = models.PositiveSmallIntegerField(default=5, help_text="Gold answers needed before flagging.")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        verbose_name = "vetting configuration"

    def __str__(self) -> str:
        return f"seed {self.seed}, second share {self.second_share:.0%}"

    @classmethod
    def load(cls) -> VettingConfig:
        config, _ = cls.objects.get_or_create(pk=1, defaults={"second_share": settings.REVIEW_SECOND_SHARE})
        return config


class Assignment(models.Model):
    """A reviewer's lease on one item at one stage. One row per (item, reviewer): never the same item twice."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUBMITTED = "submitted"  # a review (or gold answer) was stored
        RELEASED = "released"  # the lease ended without a review: expired, or a dispute / feedback instead
        SUPERSEDED = "superseded"  # its review was set aside when an organizer sent the item back to review

    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    stage = models.CharField(max_length=12, choices=Stage.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    idempotency_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

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
        help_text="The guideline version shown with the item (empty: none existed for its benchmark and type).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    superseded_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When an organizer sent the item back to review because no adjudicator could decide it; the "
        "review is kept (and counts in agreement figures) but no longer routes the item.",
    )
    edited_at = models.DateTimeField(null=True, blank=True, help_text="Last change by its author; empty if never.")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "stage"], condition=Q(superseded_at__isnull=True), name="review_one_per_stage"
            )
        ]

    def __str__(self) -> str:
        return f"{self.stage} review of {self.item_id} by {self.reviewer_id}"


class ReviewRevision(models.Model):
    """An earlier version of a review, written when its author changed it (append-only).

    Version 1 is what was first submitted; the review row itself holds the newest version."""

    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="revisions")
    version = models.PositiveSmallIntegerField()
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
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


class GoldItem(models.Model):
    """An item with a known verdict (possibly a planted error) mixed into queues to measure reviewer accuracy."""

    item = models.OneToOneField("annotation.QAItem", on_delete=models.CASCADE, related_name="gold")
    expected_verdict = models.CharField(max_length=20, choices=Verdict.choices)
    planted_error = models.BooleanField(default=False, help_text="The item was made wrong on purpose.")
    note = models.TextField(blank=True, help_text="What is wrong with it (organizers only).")
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"gold {self.item_id}: {self.expected_verdict}"


class GoldAnswer(models.Model):
    """A reviewer's answer on a gold item. Kept apart from :class:`Review` so it never counts as a real review."""

    assignment = models.OneToOneField(Assignment, on_delete=models.PROTECT, related_name="gold_answer")
    gold = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="answers")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="gold_answers")
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    relevance = models.PositiveSmallIntegerField(choices=RELEVANCE_CHOICES)
    comment = models.TextField(blank=True)
    is_correct = models.BooleanField()
    server_seconds = models.FloatField()
    active_seconds = models.FloatField(null=True, blank=True)
    guideline = models.ForeignKey(
        "annotation.GuidelineVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"gold answer {self.pk} ({'right' if self.is_correct else 'wrong'})"


class Dispute(models.Model):
    """A formal objection to an item; holds the item until resolved."""

    class Category(models.TextChoices):
        FACTUAL_ERROR = "factual_error", "Factual error in question or answer"
        NOT_IN_SOURCE = "not_in_source", "Not supported by the source excerpt"
        AMBIGUOUS = "ambiguous", "Ambiguous or more than one right answer"
        WRONG_FORMAT = "wrong_format", "Wrong type, options or format"
        OTHER = "other", "Other"

    class Status(models.TextChoices):
        OPEN = "open"
        UPHELD = "upheld"
        REJECTED = "rejected"

    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="disputes")
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="disputes"
    )
    raised_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="disputes_raised")
    category = models.CharField(max_length=20, choices=Category.choices)
    text = models.TextField()
    quote_start = models.PositiveIntegerField(null=True, blank=True)
    quote_end = models.PositiveIntegerField(null=True, blank=True)
    quote_text = models.TextField(blank=True, help_text="The quoted span of the source excerpt.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)
    resolver = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="disputes_resolved"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"dispute {self.pk} on {self.item_id} ({self.status})"


class DisputeComment(models.Model):
    dispute = models.ForeignKey(Dispute, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"comment {self.pk} on dispute {self.dispute_id}"


class FeedbackNote(models.Model):
    """An informal note on an item (typo, unclear wording); holds the item until closed."""

    class Status(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="feedback_notes")
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="feedback"
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="feedback_notes")
    text = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="feedback_closed"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    response = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"feedback {self.pk} on {self.item_id} ({self.status})"


class Adjudication(models.Model):
    """An adjudicator's final judgement of an item; the latest one is copied onto the item's final fields."""

    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications")
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    relevance = models.PositiveSmallIntegerField(choices=RELEVANCE_CHOICES)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"adjudication {self.pk} of {self.item_id}: {self.verdict}"
