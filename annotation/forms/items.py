from django import forms

from annotation.models import Dispute
from annotation.qa_types import QA_TYPE_LABELS, benchmark_label
from annotation.services.imports import FORMATS
from annotation.workflow import ItemStatus
from portal.forms import MultipleFileField
from portal.numbers import WholeNumberField


class ItemImportForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("items", "QA items"), ("sources", "Source passages (JSON or CSV)")], initial="items"
    )
    format = forms.ChoiceField(choices=[(f, benchmark_label(f)) for f in FORMATS], initial="cliniqlink", required=False)
    batch_name = forms.CharField(
        required=False,
        max_length=200,
        help_text="Left empty, the batch is named after its files (“MC.json, TF.json”). No batch is made when "
        "every item of the files is already here.",
    )
    files = MultipleFileField(
        help_text="ClinIQLink: one or more of TF.json, MC.json, … ; PromptCBLUE: .jsonl; source passages: one or "
        "more .json / .csv files (all are imported, or none)"
    )


class ItemFilterForm(forms.Form):
    qa_type = forms.ChoiceField(
        choices=[("", "All types")] + [(t.value, label) for t, label in QA_TYPE_LABELS.items()], required=False
    )
    status = forms.ChoiceField(choices=[("", "Any status")] + list(ItemStatus.choices), required=False)
    batch = WholeNumberField(required=False, widget=forms.HiddenInput)
    excerpt = forms.ChoiceField(
        choices=[("", "With or without"), ("missing", "Missing"), ("present", "Present")], required=False
    )
    q = forms.CharField(required=False, label="Search", max_length=200)


class ItemDisputeForm(forms.Form):
    """An organizer's dispute on an item, from its page (no lease, no quote: the service files it on the item)."""

    category = forms.ChoiceField(choices=Dispute.Category.choices)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="What is wrong")
