"""Systems, their outputs, and the expert preference study (Task 2).

Blinding rule: nothing a ranker receives may name a :class:`System` or say which answer is the reference. Answers
reach rankers only through a :class:`RankingTask`, whose stored permutation maps slot letters (A, B, C…) to
:class:`StudyAnswer` rows; the letters are the only handles the page and the API expose.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from ranking.shuffle import new_shuffle_secret

DEFAULT_TAG_SCALE = ["good", "okay", "bad"]
# Rankers per question: the study service checks it, the form and the API offer it. A fully crossed study (every
# physician ranks every question) needs as many as it has physicians; the column is a small integer.
OVERLAP_MIN, OVERLAP_MAX = 1, 500


def default_tag_scale() -> list[str]:
    return list(DEFAULT_TAG_SCALE)


class System(models.Model):
    """A model (or the gold reference, ``is_reference``) whose answers are compared."""

    REFERENCE_NAME = "reference"

    name = models.CharField(max_length=200, unique=True)
    family = models.CharField(max_length=100, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True)
    notes = models.TextField(blank=True)
    is_reference = models.BooleanField(default=False, help_text="The pseudo-system holding each item's gold answer.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class SystemOutput(models.Model):
    """One system's answer to one item, as imported from the harness output (or derived, for the reference)."""

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="outputs")
    item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="system_outputs")
    response = models.TextField(help_text="The response flattened to text (lists joined, dicts → generated_text).")
    raw = models.JSONField(null=True, blank=True, help_text="The response exactly as the harness wrote it.")
    prompt = models.TextField(blank=True)
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["system_id", "item_id"]
        constraints = [models.UniqueConstraint(fields=["system", "item"], name="ranking_output_unique_system_item")]

    def __str__(self) -> str:
        return f"{self.system_id}/{self.item_id}"


class Study(models.Model):
    """A preference study: which items, which systems, how many rankers per question, and the form's options."""

    class State(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    name = models.CharField(max_length=200, unique=True)
    release = models.ForeignKey(
        "annotation.Release",
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # a frozen release is never deleted; a study keeps saying where its items came from
        related_name="studies",
        help_text="The frozen release whose items the study uses.",
    )
    item_filter = models.JSONField(default=dict, blank=True, help_text="{qa_types, sample_size, seed} as given.")
    seed = models.BigIntegerField(default=0, help_text="Seed of the item sample.")
    # Never shown to rankers (no page, serializer or export carries it); organizers reproduce a task's order from it
    # with ranking.shuffle.task_seed / permutation.
    shuffle_secret = models.CharField(
        max_length=64,
        default=new_shuffle_secret,
        editable=False,
        help_text="Key of every ranker's answer shuffle (hex, 32 random bytes).",
    )
    systems = models.ManyToManyField(System, related_name="studies", help_text="Model systems (never the reference).")
    include_reference = models.BooleanField(default=True)
    overlap = models.PositiveSmallIntegerField(default=3, help_text="Rankers per question.")
    ties_allowed = models.BooleanField(default=False)
    tag_scale = models.JSONField(default=default_tag_scale)
    # What a ranker does with each question: rank the answers, check each answer against the item's validated
    # nuggets (and mark its wrong or unsupported sentences), or both.
    ask_ranking = models.BooleanField(default=True, help_text="Rankers order the answers from best to worst.")
    ask_nuggets = models.BooleanField(
        default=False,
        help_text="Rankers mark, for each answer, which of the item's nuggets it supports, and its wrong sentences.",
    )
    ask_hallucination = models.BooleanField(default=False)
    ask_spans = models.BooleanField(
        default=False,
        help_text="Rankers mark the hallucinated words of each answer (character spans, SHROOM's labels).",
    )
    spans_by_character = models.BooleanField(
        default=False,
        help_text="Span marks keep exactly the characters selected; by default a selection grows to whole words.",
    )
    ask_harm = models.BooleanField(default=False)
    # Intrinsic hallucination (contradicting the source) cannot be judged without the source; the organizer decides
    # whether rankers see it (it may give the gold answer away, which is why it is not always on).
    show_passage = models.BooleanField(
        default=False, help_text="Show rankers the textbook passage each question was written from."
    )
    unblinding_rate = models.FloatField(default=0.0, help_text="Share of tasks that ask which answer is the reference.")
    guidelines = models.TextField(blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN, db_index=True)
    lease_seconds = models.PositiveIntegerField(default=30 * 60)
    excluded_items = models.PositiveIntegerField(default=0, help_text="Items left out: an output was missing.")
    excluded_without_nuggets = models.PositiveIntegerField(
        default=0, help_text="Items left out of a nugget study: no validated nugget list (counted apart)."
    )
    # Recorded with the study so that its estimates stay valid: the report weights each sampled question by 1/its
    # chance of being drawn (analytics.services.physician_sample).
    physician_sample = models.JSONField(
        default=dict,
        blank=True,
        help_text="The designed physician sample, if any: {design, judge, share or number, seed, drawn_at, by}.",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name

    @property
    def is_open(self) -> bool:
        return self.state == self.State.OPEN


class StudyQuestionQuerySet(models.QuerySet):
    def asked(self) -> StudyQuestionQuerySet:
        """The questions physicians are asked: every question of a study without a designed sample, the drawn ones
        under a design. The queue, progress, staffing and the study list all count through this one rule."""
        return self.filter(physician_sampled=True)


class StudyQuestion(models.Model):
    """An item taking part in a study; the queue locks these rows."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questions")
    item = models.ForeignKey("annotation.QAItem", on_delete=models.PROTECT, related_name="study_questions")
    position = models.PositiveIntegerField(help_text="Queue order (the sampled order).")
    nugget_set = models.ForeignKey(
        "annotation.NuggetSet",
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # the version a study's nugget labels refer to is never deleted
        related_name="+",
        help_text="The item's validated nugget version when the study was created (nugget studies only).",
    )
    inclusion_probability = models.FloatField(
        null=True, blank=True, help_text="Its chance of being drawn for the physicians' sample (null: no design)."
    )
    # True without a design: every question goes to the physicians, and the queue reads this one flag either way.
    physician_sampled = models.BooleanField(
        default=True, help_text="Physicians are asked for it: every question, or the drawn ones under a design."
    )

    objects = StudyQuestionQuerySet.as_manager()

    class Meta:
        ordering = ["study_id", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "item"], name="ranking_question_unique_item")]
        indexes = [models.Index(fields=["study", "position"])]

    def __str__(self) -> str:
        return f"{self.study_id}#{self.position}"


class StudyAnswer(models.Model):
    """One answer to rank, its text frozen when the study was created (re-imports do not change a study)."""

    question = models.ForeignKey(StudyQuestion, on_delete=models.CASCADE, related_name="answers")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    output = models.ForeignKey(SystemOutput, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    text = models.TextField()
    sentences = models.JSONField(
        default=list,
        blank=True,
        help_text="The text split into sentences when the study was created (metrics.nuggets.split_sentences): "
        "sentence marks refer to these positions.",
    )

    class Meta:
        ordering = ["question_id", "id"]
        constraints = [models.UniqueConstraint(fields=["question", "system"], name="ranking_answer_unique_system")]

    def __str__(self) -> str:
        return f"answer {self.pk} of question {self.question_id}"


class RankingTask(models.Model):
    """One ranker's work on one question: the stored shuffle, the lease, and (once submitted) the result."""

    class Status(models.TextChoices):
        LEASED = "leased"
        SUBMITTED = "submitted"
        RELEASED = "released"  # the lease ran out and the slot went to someone else
        SKIPPED = "skipped"  # the ranker put it aside; served again once every unskipped question is done

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="tasks")
    question = models.ForeignKey(StudyQuestion, on_delete=models.CASCADE, related_name="tasks")
    ranker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ranking_tasks")
    seed = models.CharField(
        max_length=64,
        help_text="HMAC-SHA256 of ranker id and item id keyed by the study's shuffle secret (tasks handed out before "
        "studies had one: sha256 of study seed, ranker id and item id).",
    )
    order = models.JSONField(help_text="StudyAnswer ids in presented order: slot A is order[0], B order[1], …")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.LEASED, db_index=True)
    leased_at = models.DateTimeField(auto_now_add=True)
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    skipped_at = models.DateTimeField(null=True, blank=True, help_text="When the ranker last skipped it.")
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    comment = models.TextField(blank=True)
    idempotency_key = models.CharField(max_length=100, blank=True)
    ask_unblinding = models.BooleanField(default=False)
    unblinding_guess = models.CharField(max_length=2, blank=True, help_text="Slot letter the ranker guessed.")
    unblinding_correct = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["leased_at"]
        constraints = [
            # Never the same question twice to one ranker, whatever the timing.
            models.UniqueConstraint(fields=["question", "ranker"], name="ranking_task_unique_ranker"),
        ]
        indexes = [
            models.Index(fields=["question", "status", "lease_expires_at"]),
            models.Index(fields=["study", "ranker", "status"]),
        ]

    def __str__(self) -> str:
        return f"task {self.pk} ({self.status})"


class RankingDraft(models.Model):
    """The ranker's unfinished work on a task (order, tags, notes), so it follows them to another device.

    Holds slot letters and the ranker's own choices only; deleted when the task is submitted.
    """

    task = models.OneToOneField(RankingTask, on_delete=models.CASCADE, primary_key=True, related_name="draft")
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"draft of task {self.task_id}"


class AnswerJudgement(models.Model):
    """A ranker's rank and tag (and optional hallucination / harm flags) for one answer of one task."""

    class HallucinationKind(models.TextChoices):
        INTRINSIC = "intrinsic"
        EXTRINSIC = "extrinsic"
        OTHER = "other"

    task = models.ForeignKey(RankingTask, on_delete=models.CASCADE, related_name="judgements")
    answer = models.ForeignKey(StudyAnswer, on_delete=models.CASCADE, related_name="judgements")
    slot = models.CharField(max_length=2)
    position = models.PositiveSmallIntegerField(help_text="1-based presented position.")
    rank = models.PositiveSmallIntegerField(help_text="1 = best.")
    tag = models.CharField(max_length=30)
    hallucination = models.BooleanField(null=True, blank=True)
    hallucination_kind = models.CharField(max_length=12, choices=HallucinationKind.choices, blank=True)
    harm = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "position"]
        constraints = [models.UniqueConstraint(fields=["task", "answer"], name="ranking_judgement_unique_answer")]

    def __str__(self) -> str:
        return f"{self.task_id} {self.slot}: rank {self.rank}, {self.tag}"


class ReferenceFlag(models.Model):
    """A question whose reference answer the physicians judged poorly; may be sent back to vetting."""

    question = models.OneToOneField(StudyQuestion, on_delete=models.CASCADE, related_name="reference_flag")
    reasons = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    sent_at = models.DateTimeField(null=True, blank=True)
    dispute = models.ForeignKey(
        "annotation.Dispute",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,  # the flag (and its audit entry) outlives a dispute removed by hand
        related_name="reference_flags",
        help_text="The vetting dispute filed for the flag, once sent.",
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"reference flag on question {self.question_id}"


class NuggetJudgement(models.Model):
    """A ranker's label for one nugget of the question against one answer of a task."""

    class Label(models.TextChoices):
        SUPPORT = "support", "Supported"
        PARTIAL = "partial", "Partly supported"
        NOT_SUPPORT = "not_support", "Not supported"

    task = models.ForeignKey(RankingTask, on_delete=models.CASCADE, related_name="nugget_judgements")
    answer = models.ForeignKey(StudyAnswer, on_delete=models.CASCADE, related_name="nugget_judgements")
    nugget = models.ForeignKey("annotation.Nugget", on_delete=models.PROTECT, related_name="+")
    label = models.CharField(max_length=12, choices=Label.choices)

    class Meta:
        ordering = ["task_id", "answer_id", "nugget_id"]
        constraints = [
            models.UniqueConstraint(fields=["task", "answer", "nugget"], name="ranking_nugget_judgement_unique")
        ]

    def __str__(self) -> str:
        return f"{self.task_id} answer {self.answer_id} {self.nugget_id}: {self.label}"


class SentenceFlag(models.Model):
    """A sentence of an answer the ranker marked wrong or unsupported (for the answer's precision).

    Sentences not flagged in a submitted nugget task were read and found fine.
    """

    class Kind(models.TextChoices):
        WRONG = "wrong", "Wrong"
        UNSUPPORTED = "unsupported", "Unsupported"

    task = models.ForeignKey(RankingTask, on_delete=models.CASCADE, related_name="sentence_flags")
    answer = models.ForeignKey(StudyAnswer, on_delete=models.CASCADE, related_name="sentence_flags")
    index = models.PositiveSmallIntegerField(help_text="0-based position in StudyAnswer.sentences.")
    kind = models.CharField(max_length=12, choices=Kind.choices)

    class Meta:
        ordering = ["task_id", "answer_id", "index"]
        constraints = [models.UniqueConstraint(fields=["task", "answer", "index"], name="ranking_sentence_flag_unique")]

    def __str__(self) -> str:
        return f"{self.task_id} answer {self.answer_id} sentence {self.index}: {self.kind}"


class HallucinationSpan(models.Model):
    """A stretch of an answer a ranker marked as hallucinated, with its kind and an optional note.

    ``start`` / ``end`` are half-open offsets in *characters* (Unicode code points, Python's string indices) into
    :attr:`StudyAnswer.text`, the exact text the ranker was shown (frozen when the study was created, so offsets never
    drift). One ranker's spans of one answer never overlap or touch: the service merges them before storing
    (:func:`metrics.spans.merge_spans`). A submitted task of a span study with no span for an answer means the ranker
    read it and found nothing hallucinated.
    """

    task = models.ForeignKey(RankingTask, on_delete=models.CASCADE, related_name="spans")
    answer = models.ForeignKey(StudyAnswer, on_delete=models.CASCADE, related_name="spans")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=AnswerJudgement.HallucinationKind.choices)
    note = models.TextField(blank=True, max_length=1000)

    class Meta:
        ordering = ["task_id", "answer_id", "start"]
        constraints = [
            models.UniqueConstraint(fields=["task", "answer", "start"], name="ranking_span_unique_start"),
            models.CheckConstraint(condition=models.Q(end__gt=models.F("start")), name="ranking_span_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} answer {self.answer_id} [{self.start}, {self.end}): {self.kind}"
