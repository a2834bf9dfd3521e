"""Forms of the guideline pages: they check input shape; ``annotation.services.guidelines`` checks the rules."""

from __future__ import annotations

from django import forms

from portal.numbers import WholeNumberField


class GuidelineVersionForm(forms.Form):
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "true"}),
        label="Guideline (markdown)",
        strip=False,
        max_length=50_000,
    )
    change_note = forms.CharField(
        required=False, max_length=300, label="What changed (shown in the history)",
        widget=forms.TextInput(attrs={"size": 60}),
    )  # fmt: skip
    based_on = WholeNumberField(min_value=0, widget=forms.HiddenInput)


class GuidelineAcknowledgeForm(forms.Form):
    """The "I have read the guidelines" tick on the review start page, sent with "Next item"."""

    guidelines_read = forms.BooleanField(required=False)
    guideline_set = forms.CharField(required=False, max_length=64)
