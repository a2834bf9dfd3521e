"""Forms of the adjudication pages: they check input shape; the services check the rules."""

from __future__ import annotations

from django import forms

from annotation.forms.review import RELEVANCE_CHOICES
from annotation.models import Dispute, QAItem
from annotation.selectors.disputes import open_issues
from annotation.services.disputes import dispute_outcomes_by_verdict
from annotation.workflow import Verdict

OUTCOME_CHOICES = [(Dispute.Status.UPHELD.value, "Upheld"), (Dispute.Status.REJECTED.value, "Rejected")]


class AdjudicationForm(forms.Form):
    """The final judgement; with ``item``, one outcome field per open dispute of the item (``dispute_<id>``).

    Nothing is preselected there: the verdict settles most outcomes (the page shows which, and fills them in as
    the verdict is chosen), and where it does not the adjudicator chooses. The service checks the combination
    (``annotation.services.disputes.dispute_outcomes_settle``)."""

    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect, label="Final verdict")
    relevance = forms.TypedChoiceField(
        choices=RELEVANCE_CHOICES, coerce=int, widget=forms.RadioSelect, label="Final GP relevance"
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args, item: QAItem | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.open_disputes: list[Dispute] = list(open_issues(item)[0].order_by("pk")) if item is not None else []
        for dispute in self.open_disputes:
            self.fields[self._field_name(dispute)] = forms.ChoiceField(
                choices=OUTCOME_CHOICES, widget=forms.RadioSelect, required=False, label=f"Dispute {dispute.pk}"
            )

    @staticmethod
    def _field_name(dispute: Dispute) -> str:
        return f"dispute_{dispute.pk}"

    def dispute_rows(self) -> list[dict]:
        """Per open dispute: the dispute, its outcome field and what each verdict does to it (for the page)."""
        rows = []
        for dispute in self.open_disputes:
            outcomes = dispute_outcomes_by_verdict(dispute.category)
            rows.append(
                {
                    "dispute": dispute,
                    "field": self[self._field_name(dispute)],
                    "by_verdict": [(value, label, outcomes[value]) for value, label in Verdict.choices],
                }
            )
        return rows

    def dispute_outcomes(self) -> dict[int, str]:
        """The outcomes the adjudicator chose (a valid form), by dispute id; the rest follow the verdict."""
        chosen = {d.pk: self.cleaned_data.get(self._field_name(d)) for d in self.open_disputes}
        return {pk: outcome for pk, outcome in chosen.items() if outcome}
