"""The item status machine: states, the allowed moves, and one function that refuses illegal ones."""

from __future__ import annotations

from django.db import models


class ItemStatus(models.TextChoices):
    IMPORTED = "imported", "Imported"
    IN_REVIEW = "in_review", "In review"
    REVIEWED = "reviewed", "Reviewed"
    IN_SECOND_REVIEW = "in_second_review", "In second review"
    AGREED = "agreed", "Agreed"
    IN_ADJUDICATION = "in_adjudication", "In adjudication"
    VERIFIED = "verified", "Verified"
    REJECTED = "rejected", "Rejected"
    HELD = "held", "Held"
