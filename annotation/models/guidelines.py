"""Reviewer guidelines (the codebook): versioned text per benchmark and QA type, and reviewers' acknowledgements.

Versions are append-only: a new version is a new row with the next
number, and the database refuses any UPDATE or DELETE of a stored one (migration ``0009_guidelines``), so every
review keeps pointing at the exact text it was made under.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.qa_types import QA_TYPE_LABELS, QAType, qa_type_label

BENCHMARK_LABELS = {"cliniqlink": "ClinIQLink", "promptcblue": "PromptCBLUE"}


class GuidelineVersion(models.Model):
    """One version of the guideline for the items of one benchmark and QA type (markdown, rendered safely)."""

    benchmark = models.CharField(max_length=40)
    qa_type = models.CharField(max_length=30, choices=[(t.value, QA_TYPE_LABELS[t]) for t in QAType])
    number = models.PositiveIntegerField(help_text="1, 2, 3, … per benchmark and QA type.")
    text = models.TextField(help_text="Markdown; raw HTML is shown as text.")
    change_note = models.CharField(max_length=300, blank=True, help_text="What changed since the previous version.")
    # PROTECT: a version keeps its author; the database refuses the UPDATE that SET_NULL would need.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "qa_type", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "qa_type", "number"], name="guideline_version_once"),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark} · {self.type_label} · version {self.number}"

    @property
    def type_label(self) -> str:
        return qa_type_label(self.qa_type)

    @property
    def title(self) -> str:
        """What the guideline is for, as people say it: "True / false", "PromptCBLUE", "List · MedQA"."""
        benchmark = BENCHMARK_LABELS.get(self.benchmark, self.benchmark)
        if self.qa_type == QAType.GENERIC:
            return benchmark
        return self.type_label if self.benchmark == "cliniqlink" else f"{self.type_label} · {benchmark}"

    @property
    def author_label(self) -> str:
        return str(self.author) if self.author_id else "Shipped with the portal"


class GuidelineAcknowledgement(models.Model):
    """A reviewer confirmed having read one set of current guideline versions (asked again when any changes)."""

    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    versions = models.ManyToManyField(GuidelineVersion, related_name="+")
    signature = models.CharField(max_length=64, help_text="Digest of the version ids of the set acknowledged.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["reviewer", "signature"], name="guideline_ack_once_per_set"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer_id} read guideline set {self.signature[:8]}"
