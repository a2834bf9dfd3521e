"""Forms of the dispute pages and of filing a dispute or feedback note: they check shape; the services check rules."""

from __future__ import annotations

from django import forms

from annotation.models import Dispute


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
