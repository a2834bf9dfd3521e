"""Forms of the organizers' vetting pages: they check input shape; the services check the rules."""

from __future__ import annotations

from django import forms

from annotation.second_review import Policy
from annotation.workflow import (
    GOLD_MIN_ANSWERS_MAX,
    GOLD_MIN_ANSWERS_MIN,
    RELEVANCE_GAP_MAX,
    RELEVANCE_GAP_MIN,
    Verdict,
)
from portal.numbers import WholeNumberField


class ReassignForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), label="Why it goes back to review (kept in the audit trail)"
    )


class VettingConfigForm(forms.Form):
    seed = forms.CharField(max_length=64)
    second_share = forms.FloatField(min_value=0, max_value=1)
    # Optional: a form (or a script) that leaves them out keeps the policy as it is.
    second_review_policy = forms.ChoiceField(choices=Policy.choices, label="Second review policy", required=False)
    uniform_share = forms.FloatField(min_value=0, max_value=1, label="Uniform share (adaptive policy)", required=False)
    adjudicate_above = forms.FloatField(
        min_value=0, max_value=1, label="Straight to an adjudicator from (adaptive policy)", required=False
    )
    relevance_gap = forms.IntegerField(min_value=RELEVANCE_GAP_MIN, max_value=RELEVANCE_GAP_MAX)
    gold_rate = forms.FloatField(min_value=0, max_value=1)
    gold_min_accuracy = forms.FloatField(min_value=0, max_value=1)
    gold_min_answers = forms.IntegerField(min_value=GOLD_MIN_ANSWERS_MIN, max_value=GOLD_MIN_ANSWERS_MAX)


class BatchForm(forms.Form):
    paused = forms.BooleanField(required=False)
    priority = WholeNumberField()


class GoldForm(forms.Form):
    uid = forms.CharField(max_length=100, label="Item uid")
    expected_verdict = forms.ChoiceField(choices=Verdict.choices)
    planted_error = forms.BooleanField(required=False)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
