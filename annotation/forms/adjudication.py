"""Forms of the adjudication pages: they check input shape; the services check the rules."""

from __future__ import annotations

from django import forms

from annotation.forms.review import RELEVANCE_CHOICES
from annotation.workflow import Verdict


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
