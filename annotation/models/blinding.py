"""What a page showed a person of an item that no other record remembers.

Blinding is decided per item (``annotation.selectors.blinding``). Most of what a person saw of an item is on record
already: a review lease (``Assignment``) showed its answer, a nugget task or version its answer, an adjudication its
reviews. A few pages and endpoints show an item's other reviews or its answer and leave nothing behind: the
adjudication page and API, the organizers' item page and API, a dispute's page. They write an :class:`ItemExposure`
row, once per person, item and kind, so that the rule can still say later that this person must not review the item
(they read its reviews) or rank its question (they saw its reference answer).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ItemExposure(models.Model):
    """A person was shown something of an item that biases their later judgement of it. Written once (the first
    time), never changed; nothing on the review path writes it."""

    class Kind(models.TextChoices):
        REVIEWS = "reviews", "Other people's judgements of the item (reviews, disputes, its history)"
        REFERENCE = "reference", "The item's answer, which is the reference answer of every study"

    # Looked up by (item, person) only: the unique constraint's index serves the review queue's and the ranking
    # queue's per-item checks; nothing reads the table by person alone.
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="+", db_index=False)
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", db_index=False)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    first_at = models.DateTimeField(help_text="When it was first shown.")
    where = models.CharField(max_length=40, help_text="The page or endpoint that first showed it.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "person", "kind"], name="item_exposure_once_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.person_id} saw {self.kind} of item {self.item_id} ({self.where})"
