"""Forms of the review pages (one reviewer's work on one item): they check input shape; the services check the rules."""

from __future__ import annotations

from django import forms

from annotation.qa_types import QA_TYPE_LABELS
from annotation.services.queue import GiveBackReason
from annotation.workflow import RELEVANCE_SCALE, CannotTellReason, Verdict

QA_TYPE_CHOICES = [("", "Any type")] + [(t.value, label) for t, label in QA_TYPE_LABELS.items()]
RELEVANCE_CHOICES = [(k, f"{k} — {v}") for k, v in RELEVANCE_SCALE.items()]


def cannot_tell_reason_field() -> forms.ChoiceField:
    """Why the reviewer cannot tell: optional here (the page sends it only with that verdict); whether it must or must
    not be given is the service's rule (``annotation.workflow.cannot_tell_reason_problem``)."""
    return forms.ChoiceField(
        choices=CannotTellReason.choices, required=False, widget=forms.RadioSelect, label="Why you cannot tell"
    )


class NextForm(forms.Form):
    qa_type = forms.ChoiceField(choices=QA_TYPE_CHOICES, required=False, label="QA type")


class ReviewForm(forms.Form):
    idempotency_key = forms.UUIDField(widget=forms.HiddenInput)
    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect)
    cannot_tell_reason = cannot_tell_reason_field()
    relevance = forms.TypedChoiceField(
        choices=RELEVANCE_CHOICES, coerce=int, widget=forms.RadioSelect, label="GP relevance"
    )
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    active_seconds = forms.FloatField(required=False, min_value=0, widget=forms.HiddenInput)
    qa_type = forms.CharField(required=False, widget=forms.HiddenInput)


class ReviewEditForm(forms.Form):
    """Changing one's own review: the same fields as the review form, without the lease's key."""

    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect)
    cannot_tell_reason = cannot_tell_reason_field()
    relevance = forms.TypedChoiceField(
        choices=RELEVANCE_CHOICES, coerce=int, widget=forms.RadioSelect, label="GP relevance"
    )
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class GiveBackForm(forms.Form):
    """Giving an item back without a judgement (outside one's field, a conflict of interest)."""

    reason = forms.ChoiceField(choices=GiveBackReason.CHOICES, widget=forms.RadioSelect, label="Why")
    note = forms.CharField(required=False, max_length=500, label="Note (optional)")
    qa_type = forms.CharField(required=False, widget=forms.HiddenInput)
