"""Forms of the release pages: they check input shape; ``annotation.services.releases`` checks the freeze rule."""

from __future__ import annotations

from django import forms

from annotation.qa_types import CLINIQLINK_TYPES, DEFAULT_BENCHMARK, QA_TYPE_LABELS
from annotation.services.release_contents import benchmark_choices
from annotation.services.release_rules import RuleError, SelectionRule
from annotation.services.releases import RELEASE_NAME_MAX, RELEASE_NAME_RULE, release_name_problem


class FreezeForm(forms.Form):
    name = forms.CharField(
        max_length=RELEASE_NAME_MAX,
        strip=False,  # the rule refuses spaces at either end rather than quietly dropping them
        help_text=f"{RELEASE_NAME_RULE[0].upper()}{RELEASE_NAME_RULE[1:]}. A new version is created if the name exists.",
    )
    benchmark = forms.ChoiceField(
        choices=[],
        required=False,
        help_text="One benchmark per release: the ClinIQLink files cannot hold other benchmarks' items.",
    )
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    min_relevance = forms.FloatField(
        initial=5, min_value=1, max_value=5, required=False, label="Minimum final GP relevance"
    )
    final_verdict = forms.ChoiceField(
        choices=[("correct", "Correct"), ("", "Any verdict")], initial="correct", required=False
    )
    exclude_open_issues = forms.BooleanField(
        initial=True, required=False, label="Hold out items with open feedback or disputes"
    )
    qa_types = forms.MultipleChoiceField(
        choices=[(t.value, QA_TYPE_LABELS[t]) for t in CLINIQLINK_TYPES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: all types.",
        label="QA types",
    )
    with_nuggets = forms.BooleanField(
        required=False,
        label="Freeze the validated nuggets with the items",
        help_text="Each item's validated nugget list is frozen with it; every download then holds nuggets.jsonl.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].choices = benchmark_choices() + [("", "All benchmarks")]
        self.fields["benchmark"].initial = DEFAULT_BENCHMARK

    def clean_name(self):
        name = self.cleaned_data["name"]
        if problem := release_name_problem(name):
            raise forms.ValidationError(problem)
        return name

    def clean(self):
        data = super().clean()
        if not any(name in self.errors for name in self.fields if name not in ("name", "note")):
            # The rule's own class validates it, as for the API and the command line.
            try:
                self.selection = SelectionRule.from_dict(
                    {
                        "final_verdict": data["final_verdict"] or None,
                        "min_relevance": data["min_relevance"],
                        "exclude_open_issues": data["exclude_open_issues"],
                        "qa_types": list(data["qa_types"]),
                        # A request that does not name the field (an old bookmark, a script) gets the default
                        # benchmark too; "All benchmarks" is a choice made on purpose.
                        "benchmark": (data["benchmark"] if "benchmark" in self.data else DEFAULT_BENCHMARK) or None,
                    }
                )
            except RuleError as exc:
                self.add_error(exc.field if exc.field in self.fields else None, exc.reason)
        return data

    def rule(self) -> dict:
        return self.selection.as_dict()
