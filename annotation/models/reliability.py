"""The reliability model of the vetting labels (a Dawid–Skene fit), as the portal keeps it between fits.

A fit reads every standing judgement (primary and second reviews, adjudications as a senior labeller, gold answers
anchored by the gold's known verdict) and is stored whole: the labels' prior over the verdicts, overall and per QA
type, and per reviewer (overall and per QA type) the confusion matrix with its intervals and the accuracy over time
windows. Only the latest fit is read (the queue's adaptive second review, the reliability page); older fits stay as
history of how the figures moved.
"""

from __future__ import annotations

import math

from django.conf import settings
from django.db import models

from portal.jsonfields import FiniteJSONEncoder


class ReliabilityFit(models.Model):
    """One fit of the model over all the vetting labels at a moment."""

    created_at = models.DateTimeField(auto_now_add=True)
    job = models.ForeignKey("portal.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    labels = models.JSONField(help_text="The verdicts the model knows, in its order.")
    prior = models.JSONField(encoder=FiniteJSONEncoder, help_text="Share of items per true verdict, all types.")
    prior_by_type = models.JSONField(
        encoder=FiniteJSONEncoder, default=dict, help_text="Per QA type: share of items per true verdict."
    )
    n_items = models.PositiveIntegerField()
    n_labels = models.PositiveIntegerField()
    n_reviews_seen = models.PositiveIntegerField(help_text="Reviews stored when the fit started (the refit trigger).")
    iterations = models.PositiveIntegerField()
    window = models.PositiveIntegerField(help_text="Reviews per time window of a reviewer's accuracy.")
    adaptive_threshold = models.FloatField(
        null=True,
        help_text="The adaptive second review's threshold on a first verdict's release risk: items above it are read "
        "twice (infinity: only the uniform slice; minus infinity: every item); None when no first reviewer was known "
        "well enough.",
    )
    adaptive_tie_share = models.FloatField(
        default=0.0, help_text="The share of the items exactly at the threshold that are read twice (a random draw)."
    )
    seconds = models.FloatField(help_text="How long the fit took.")

    class Meta:
        ordering = ["-created_at"]
        get_latest_by = "created_at"

    def __str__(self) -> str:
        return f"reliability fit {self.pk} ({self.n_labels} labels)"

    @property
    def adaptive_scope(self) -> str:
        """Which items beyond the uniform slice the threshold sends to a second reading: "none", "all" or "some"."""
        if self.adaptive_threshold == math.inf:
            return "none"
        if self.adaptive_threshold == -math.inf:
            return "all"
        return "some"


class ReviewerReliability(models.Model):
    """One person's figures in one fit: over all types (``qa_type`` empty) or on one QA type.

    ``confusion[true][given]`` is the share of items whose true verdict is ``true`` that the person called ``given``;
    ``intervals`` the same cells' 95 % intervals; ``windows`` the accuracy over consecutive windows of the person's
    reviews (oldest first), each ``{"start", "end", "n", "accuracy", "low", "high"}``. ``as_adjudicator`` marks
    the figures of someone's adjudications, a labeller of their own."""

    fit = models.ForeignKey(ReliabilityFit, on_delete=models.CASCADE, related_name="reviewers")
    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    as_adjudicator = models.BooleanField(default=False)
    qa_type = models.CharField(max_length=30, blank=True)
    n_labels = models.PositiveIntegerField()
    accuracy = models.FloatField()
    accuracy_low = models.FloatField()
    accuracy_high = models.FloatField()
    confusion = models.JSONField(encoder=FiniteJSONEncoder)
    intervals = models.JSONField(encoder=FiniteJSONEncoder, default=dict)
    windows = models.JSONField(encoder=FiniteJSONEncoder, default=list)
    drift = models.BooleanField(default=False, help_text="The latest window fell below the person's own interval.")

    class Meta:
        ordering = ["fit", "person", "as_adjudicator", "qa_type"]
        constraints = [
            models.UniqueConstraint(
                fields=["fit", "person", "as_adjudicator", "qa_type"], name="reviewer_reliability_once_per_fit"
            )
        ]

    def __str__(self) -> str:
        return f"{self.person_id} in fit {self.fit_id}{' · ' + self.qa_type if self.qa_type else ''}"
