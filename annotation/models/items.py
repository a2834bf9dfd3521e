"""Items, their source passages and the import batches they came from."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.qa_types import QA_TYPE_LABELS, QAType, qa_type_label
from annotation.second_review import Reason
from annotation.workflow import ItemStatus


class SourcePassage(models.Model):
    """The textbook excerpt an item was generated from, keyed by the item's ``paragraph_id``."""

    paragraph_id = models.CharField(max_length=200, unique=True)
    isbn = models.CharField(max_length=40, blank=True)
    page = models.CharField(max_length=20, blank=True)
    text = models.TextField()
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["paragraph_id"]

    def __str__(self) -> str:
        return self.paragraph_id


class ImportBatch(models.Model):
    """One all-or-nothing upload of items. Items already in the portal are recognised, not duplicated."""

    name = models.CharField(max_length=200)
    fmt = models.CharField("format", max_length=30)
    files = models.JSONField(default=list)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    items_created = models.PositiveIntegerField(default=0)
    items_existing = models.PositiveIntegerField(default=0)
    paused = models.BooleanField(default=False, help_text="Paused batches are not handed out for review.")
    priority = models.IntegerField(default=0, help_text="Higher priority batches are reviewed first.")

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "import batches"

    def __str__(self) -> str:
        return f"{self.name} ({self.items_created} new)"


class QueueKey(models.Func):
    """The first 60 bits of md5(uid) as a number: the item's fixed place in the review queue's random cycle
    (``annotation.workflow.queue_key`` computes the same in Python)."""

    template = "('x' || substr(md5(%(expressions)s), 1, 15))::bit(60)::bigint"
    output_field = models.BigIntegerField()


class QAItem(models.Model):
    """A question-answer pair of any supported type.

    Type-specific fields are typed columns so every page and export can read them without parsing; the record
    as imported is kept verbatim in ``raw`` so that an export reproduces it byte for byte.
    """

    uid = models.CharField(max_length=100)  # unique: Meta.constraints (see the note on indexes there)
    qa_type = models.CharField(max_length=30, choices=[(t.value, QA_TYPE_LABELS[t]) for t in QAType])
    benchmark = models.CharField(max_length=40, default="cliniqlink")
    question = models.TextField()
    answer = models.TextField(
        blank=True, help_text="Gold answer text (TF, short, multi-hop; the false answer for inverse types)."
    )
    answer_list = models.JSONField(default=list, blank=True, help_text="List type: the correct options.")
    options = models.JSONField(default=list, blank=True)
    correct_answer = models.TextField(blank=True, help_text="Multiple choice: the correct option text.")
    false_answer = models.TextField(blank=True)
    incorrect_explanation = models.TextField(blank=True)
    reasoning = models.JSONField(default=list, blank=True)
    incorrect_reasoning_step = models.JSONField(default=list, blank=True)
    isbn = models.CharField(max_length=40, blank=True)
    page = models.CharField(max_length=20, blank=True)
    paragraph_id = models.CharField(max_length=200, blank=True)
    passage = models.ForeignKey(SourcePassage, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")
    extra = models.JSONField(default=dict, blank=True, help_text="Fields of other benchmarks (task type, dataset...).")
    raw = models.JSONField(help_text="The record exactly as imported.")
    batch = models.ForeignKey(ImportBatch, on_delete=models.PROTECT, related_name="items", db_index=False)
    status = models.CharField(max_length=30, choices=ItemStatus.choices, default=ItemStatus.IMPORTED)
    created_at = models.DateTimeField(auto_now_add=True)
    # Vetting outcome (see annotation/workflow.py for the exact rules). Written only by the vetting services.
    final_verdict = models.CharField(
        max_length=20, blank=True, help_text="correct / incorrect / cannot_tell; empty until final."
    )
    final_relevance = models.FloatField(
        null=True, blank=True, help_text="Final GP relevance 1-5 (mean of agreeing reviews)."
    )
    final_source = models.CharField(max_length=20, blank=True, help_text="primary / agreement / adjudication")
    finalized_at = models.DateTimeField(null=True, blank=True)
    second_review = models.BooleanField(
        null=True, blank=True, help_text="Drawn for second review (set at primary review)."
    )
    second_review_reason = models.CharField(
        max_length=20,
        choices=Reason.choices,
        blank=True,
        help_text="Why it was read twice, or sent straight to an adjudicator (annotation.second_review.Reason).",
    )
    held_from = models.CharField(max_length=30, blank=True, help_text="The status a held item returns to.")
    queue_key = models.GeneratedField(
        expression=QueueKey("uid"),
        output_field=models.BigIntegerField(),
        db_persist=True,
        help_text="Place in the review queue's random cycle (md5 of the uid); see annotation.workflow.queue_order.",
    )

    class Meta:
        ordering = ["id"]
        # A review changes its item's status twice (leased, then reviewed), and as the status is indexed neither
        # change can be a HOT update: PostgreSQL writes a new entry into every index of the table each time. So the
        # table keeps only indexes that a query uses (tests/annotation/test_hot_table_indexes.py): none repeating
        # the leading column of another (qa_type, batch), no ``varchar_pattern_ops`` twin (Django adds one to every
        # CharField with db_index or unique=True, hence the uid's constraint and the plain indexes below; nothing
        # searches these by prefix), and no trigram index on the question (the item search's similarity arm is OR-ed
        # with unindexed ones, so PostgreSQL never used it). Every index entry left out is one write fewer per status
        # change, and with the same rule on the lease, review and audit tables that is less WAL and less of
        # PostgreSQL's CPU per review (docs/benchmarks.md, capacity).
        constraints = [models.UniqueConstraint(fields=["uid"], name="qaitem_uid_unique")]
        indexes = [
            models.Index(fields=["qa_type", "status"]),
            models.Index(fields=["status"], name="qaitem_status"),
            models.Index(fields=["benchmark"], name="qaitem_benchmark"),
            models.Index(fields=["paragraph_id"], name="qaitem_paragraph_id"),
            # The review queue walks these in the random cycle's order from the reviewer's starting point and stops at
            # the first free item (annotation/services/queue.py).
            models.Index(
                fields=["queue_key", "id"],
                condition=models.Q(status__in=["imported", "in_review"]),
                name="qaitem_primary_queue_key",
            ),
            models.Index(
                fields=["queue_key", "id"],
                condition=models.Q(status="in_second_review"),
                name="qaitem_second_queue_key",
            ),
            # "N left for you · batch X % done" on every review page counts on this index (annotation.selectors.queue).
            models.Index(fields=["batch", "status", "qa_type"], name="qaitem_batch_status_type"),
        ]

    def __str__(self) -> str:
        return f"{self.uid}: {self.question[:60]}"

    @property
    def type_label(self) -> str:
        return qa_type_label(self.qa_type)

    @property
    def option_rows(self) -> list[tuple[str, str, bool]]:
        """(label, text, is_correct) for option-bearing types; labels run A, B, … as the harness prints them."""
        correct = set(self.answer_list) if self.qa_type == QAType.LIST else {self.correct_answer}
        return [(chr(65 + i), text, text in correct) for i, text in enumerate(self.options)]
