"""Nuggets: the atomic, checkable facts a good answer to an item must contain (or, ``avoid``, must not).

An item's nugget list is versioned. A :class:`NuggetSet` is one version and is never edited once written: a change
(an author's draft, a validator's edit, an adjudicator's decision, an import) is a new version whose ``based_on``
points at the one it changed. At most one version per item is ``validated`` at a time; it is the one studies and
releases use. The rules that move a version between states live in ``annotation/nugget_workflow.py``; the services
in ``annotation/services/nuggets*.py`` are the only writers.

A :class:`NuggetTask` is one person's lease on one item at one stage (writing, validating, adjudicating), the same
way a review :class:`~annotation.models.review.Assignment` is.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.nugget_workflow import SetStatus
from metrics.nuggets import IMPORTANCES

IMPORTANCE_LABELS = {
    "vital": "Vital: a good answer must say this",
    "okay": "Okay: good to have",
    "avoid": "Avoid: a wrong or dangerous claim the answer must not make",
}
IMPORTANCE_CHOICES = [(value, IMPORTANCE_LABELS[value]) for value in IMPORTANCES]


class NuggetSet(models.Model):
    """One version of an item's nugget list."""

    Status = SetStatus  # the states and their moves are defined once, in the workflow's rules

    class Origin(models.TextChoices):
        AUTHORED = "authored", "Written in the portal"
        IMPORTED = "imported", "Imported from a file"
        VALIDATION = "validation", "Changed by the validator"
        ADJUDICATION = "adjudication", "Decided by an adjudicator"

    item = models.ForeignKey("annotation.QAItem", on_delete=models.PROTECT, related_name="nugget_sets")
    version = models.PositiveIntegerField(help_text="1, 2, … per item, in the order the versions were written.")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT, db_index=True)
    origin = models.CharField(max_length=12, choices=Origin.choices)
    based_on = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+", help_text="The version it changed."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    import_name = models.CharField(max_length=200, blank=True, help_text="File an imported draft came from.")
    validated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    validated_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True, help_text="Why it was changed or decided so (validator, adjudicator).")

    class Meta:
        ordering = ["item_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["item", "version"], name="nugget_set_version_unique"),
            # The version studies and releases read: never two at once.
            models.UniqueConstraint(
                fields=["item"], condition=Q(status="validated"), name="nugget_set_one_validated_per_item"
            ),
        ]

    def __str__(self) -> str:
        return f"nuggets v{self.version} of item {self.item_id} ({self.status})"


class Nugget(models.Model):
    """One fact of a nugget list: a short sentence and how much it matters."""

    nugget_set = models.ForeignKey(NuggetSet, on_delete=models.CASCADE, related_name="nuggets")
    position = models.PositiveSmallIntegerField(help_text="1-based order in the list.")
    key = models.CharField(max_length=50, help_text='The nugget\'s id in files ("n1"); kept across versions.')
    text = models.TextField()
    importance = models.CharField(max_length=10, choices=IMPORTANCE_CHOICES)

    class Meta:
        ordering = ["nugget_set_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["nugget_set", "key"], name="nugget_key_unique_in_set"),
            models.UniqueConstraint(fields=["nugget_set", "position"], name="nugget_position_unique_in_set"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.importance})"


class NuggetTask(models.Model):
    """One person's lease on one item's nuggets at one stage; one row per (item, person, stage)."""

    class Stage(models.TextChoices):
        WRITE = "write", "Writing nuggets"
        VALIDATE = "validate", "Validating nuggets"
        ADJUDICATE = "adjudicate", "Settling a nugget disagreement"

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUBMITTED = "submitted"
        RELEASED = "released"  # the lease ran out, or its holder put the item back

    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="nugget_tasks")
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="nugget_tasks")
    stage = models.CharField(max_length=12, choices=Stage.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    nugget_set = models.ForeignKey(
        NuggetSet,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tasks",
        help_text="The version worked on (validate, adjudicate) or written (write).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "person", "stage"], name="nugget_task_once_per_person_stage"),
            # Behind the row locks: one live lease per item and stage.
            models.UniqueConstraint(
                fields=["item", "stage"], condition=Q(status="active"), name="nugget_task_one_active_per_stage"
            ),
        ]
        indexes = [models.Index(fields=["person", "status"]), models.Index(fields=["item", "stage", "status"])]

    def __str__(self) -> str:
        return f"{self.person} · {self.item_id} · {self.stage} · {self.status}"
