"""Disputes (with their comment threads) and feedback notes: issues filed on an item; an open one holds the item."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models.review import Assignment


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
