"""Adjudications: the final judgement of an item. Append-only: nothing edits one after it is stored, and each
creation writes an audit entry."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models.review import RELEVANCE_CHOICES
from annotation.workflow import Verdict


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
