"""Forms of the analytics pages: they check input shape; the services check the rules."""

from __future__ import annotations

from django import forms

from annotation.models import Release
from portal.numbers import WholeNumberField
from ranking.models import System


class ScoringForm(forms.Form):
    system = forms.ModelChoiceField(queryset=System.objects.filter(is_reference=False), empty_label="Choose a system")
    release = forms.ModelChoiceField(queryset=Release.objects.all(), required=False, empty_label="all answered items")
    profile = forms.ChoiceField(
        choices=[
            ("cliniqlink-2025", "cliniqlink-2025 (public scorer)"),
            ("paper", "paper"),
            ("promptcblue", "PromptCBLUE (official evaluation)"),
        ]
    )
    seed = WholeNumberField(initial=0)
