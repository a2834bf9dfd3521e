"""Forms of the vetting pages: they check input shape; the services check the rules."""

from __future__ import annotations

from django import forms

from annotation.models import Dispute
from annotation.qa_types import QA_TYPE_LABELS
from annotation.workflow import RELEVANCE_SCALE, Verdict
from portal.numbers import WholeNumberField

QA_TYPE_CHOICES = [("", "Any type")] + [(t.value, label) for t, label in QA_TYPE_LABELS.items()]
RELEVANCE_CHOICES = [(k, f"{k} — {v}") for k, v in RELEVANCE_SCALE.items()]


class NextForm(forms.Form):
    qa_type = forms.ChoiceField(choices=QA_TYPE_CHOICES, required=False, label="QA type")


class ReviewForm(forms.Form):
    idempotency_key = forms.UUIDField(widget=forms.HiddenInput)
    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect)
    relevance = forms.TypedChoiceField(
        choices=RELEVANCE_CHOICES, coerce=int, widget=forms.RadioSelect, label="GP relevance"
    )
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    active_seconds = forms.FloatField(required=False, min_value=0, widget=forms.HiddenInput)
    qa_type = forms.CharField(required=False, widget=forms.HiddenInput)


class ReviewEditForm(forms.Form):
    """Changing one's own review: the same fields as the review form, without the lease's key."""

    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect)
    relevance = forms.TypedChoiceField(
        choices=RELEVANCE_CHOICES, coerce=int, widget=forms.RadioSelect, label="GP relevance"
    )
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class DisputeForm(forms.Form):
    idempotency_key = forms.UUIDField(widget=forms.HiddenInput)
    category = forms.ChoiceField(choices=Dispute.Category.choices)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), label="What is wrong")
    quote_text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Quote from the excerpt (optional)"
    )
    qa_type = forms.CharField(required=False, widget=forms.HiddenInput)


class FeedbackForm(forms.Form):
    idempotency_key = forms.UUIDField(widget=forms.HiddenInput)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), label="Feedback note")
    qa_type = forms.CharField(required=False, widget=forms.HiddenInput)


class CommentForm(forms.Form):
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="Comment")


class AdjudicationForm(forms.Form):
    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect, label="Final verdict")
    relevance = forms.TypedChoiceField(
        choices=RELEVANCE_CHOICES, coerce=int, widget=forms.RadioSelect, label="Final GP relevance"
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    dispute_outcome = forms.ChoiceField(
        choices=[("upheld", "Upheld"), ("rejected", "Rejected")],
        initial="upheld",
        label="Open disputes are",
        required=False,
    )


class ReassignForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), label="Why it goes back to review (kept in the audit trail)"
    )


class VettingConfigForm(forms.Form):
    seed = forms.CharField(max_length=64)
    second_share = forms.FloatField(min_value=0, max_value=1)
    relevance_gap = forms.IntegerField(min_value=1, max_value=4)
    gold_rate = forms.FloatField(min_value=0, max_value=1)
    gold_min_accuracy = forms.FloatField(min_value=0, max_value=1)
    gold_min_answers = forms.IntegerField(min_value=1, max_value=1000)


class BatchForm(forms.Form):
    paused = forms.BooleanField(required=False)
    priority = WholeNumberField()


class GoldForm(forms.Form):
    uid = forms.CharField(max_length=100, label="Item uid")
    expected_verdict = forms.ChoiceField(choices=Verdict.choices)
    planted_error = forms.BooleanField(required=False)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
