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


class PhysicianSampleForm(forms.Form):
    """The organizer's "ask physicians for a sample only" form on the study page (the judges: those imported)."""

    share = forms.FloatField(
        required=False, label="Share of the questions", help_text="More than 0 and at most 1; or give a number."
    )
    number = WholeNumberField(min_value=1, required=False, label="Or a number of questions")
    design = forms.ChoiceField(
        choices=[
            ("uniform", "uniformly at random"),
            ("judge_uncertain", "towards questions where the judge is least certain"),
            ("systems_differ", "towards questions where the judge scores the systems most differently"),
        ]
    )
    judge = forms.ChoiceField(required=False, help_text="Needed for the two designs that follow a judge.")
    seed = WholeNumberField(min_value=0, required=False, help_text="Empty: a random one (recorded with the study).")

    def __init__(self, *args, judges: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [("", "—"), *((name, name) for name in judges)]
