"""Models of the organizers' vetting oversight: the workflow settings and gold items with their answers.

Gold answers are append-only: nothing edits them after they are stored, and each creation writes an audit entry."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import connection, models

from annotation.models.review import RELEVANCE_CHOICES, Assignment
from annotation.second_review import DEFAULT_ADJUDICATE_ABOVE, Policy
from annotation.workflow import CannotTellReason, Verdict
from portal.bulk import columns_sql, from_row, row_fields


def _new_seed() -> str:
    return secrets.token_hex(8)


class VettingConfig(models.Model):
    """Singleton (pk=1) holding the organizer's vetting settings; the seed makes the second-review draw reproducible."""

    seed = models.CharField(max_length=64, default=_new_seed, help_text="Seed of the second-review draw.")
    second_share = models.FloatField(default=0.45, help_text="Share of items drawn for an independent second review.")
    second_review_policy = models.CharField(
        max_length=10,
        choices=Policy.choices,
        default=Policy.UNIFORM,
        help_text="Which items get a second review: a random share, or where the reliability model expects a second "
        "opinion to change the release (annotation.second_review).",
    )
    uniform_share = models.FloatField(
        default=0.1,
        help_text="Adaptive policy: the share of items always read twice at random, whatever the model says (the "
        "agreement figures are measured on these).",
    )
    adjudicate_above = models.FloatField(
        default=DEFAULT_ADJUDICATE_ABOVE,
        help_text="Adaptive policy: an item the model picks goes straight to an adjudicator when its first verdict is "
        "at least this likely wrong, else to a second reviewer (0: every picked item, the most wrong items caught per "
        "judgement; 1: none, sparing adjudicators; annotation.second_review).",
    )
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
        """The settings row, created with the defaults on first use.

        Read with a plain cursor: every review routes its item with these settings, and ``get_or_create`` compiled
        its statement afresh each time (longer than PostgreSQL took to run it)."""
        with connection.cursor() as cursor:
            cursor.execute(cls.load_sql())
            return cls.from_load_row(cursor.fetchone())

    @classmethod
    def load_sql(cls) -> str:
        """The statement :meth:`load` runs, to send along with others; its row goes to :meth:`from_load_row`."""
        return f"SELECT {columns_sql(row_fields(cls))} FROM {cls._meta.db_table} WHERE id = 1"

    @classmethod
    def from_load_row(cls, row) -> VettingConfig:
        """The settings from the row :meth:`load_sql` read, or created with the defaults when there was none."""
        if row is not None:
            return from_row(cls, row_fields(cls), row)
        config, _ = cls.objects.get_or_create(pk=1, defaults={"second_share": settings.REVIEW_SECOND_SHARE})
        return config


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
    # Asked and kept as on a review: a gold item must look like any other to the reviewer.
    cannot_tell_reason = models.CharField(max_length=20, choices=CannotTellReason.choices, blank=True)
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
