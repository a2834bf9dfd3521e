"""Forms of the nugget pages: they read the input's shape; the list rules are ``annotation.nugget_workflow``'s."""

from __future__ import annotations

from django import forms
from django.http import QueryDict

from annotation.services.nugget_files import EXPORT_STATUSES

MAX_IMPORT_BYTES = 20 * 1024 * 1024
#: Rows read from one form: more than the rules allow, so that too long a list gets the rules' own message.
MAX_ROWS = 200


def nugget_rows(data: QueryDict) -> list[dict[str, str]]:
    """The list editor's rows in page order (``nugget_id``, ``nugget_text``, ``nugget_importance``, repeated).
    Rows left entirely blank are dropped: an empty row the keyboard added is not a nugget."""
    ids, texts, importances = (
        data.getlist(name)[:MAX_ROWS] for name in ("nugget_id", "nugget_text", "nugget_importance")
    )
    rows = []
    for index, text in enumerate(texts):
        if not text.strip():
            continue
        rows.append(
            {
                "id": ids[index] if index < len(ids) else "",
                "text": text,
                "importance": importances[index] if index < len(importances) else "",
            }
        )
    return rows


class NuggetImportForm(forms.Form):
    file = forms.FileField(
        label="Nugget file (JSONL)",
        help_text="One line per item, in the format shown under Export. Imported lists are drafts until an expert "
        "validates them; the whole file is imported or none.",
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError(f"The file is {upload.size:,} bytes; the limit is {MAX_IMPORT_BYTES:,}.")
        return upload


class NuggetExportForm(forms.Form):
    status = forms.ChoiceField(choices=[(s, s) for s in EXPORT_STATUSES], initial="validated")


class NuggetAdjudicateForm(forms.Form):
    pick = forms.TypedChoiceField(coerce=int, choices=[], label="The version to keep")
    edit = forms.BooleanField(required=False, label="Use my edited list below instead (based on the picked version)")
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="Why (required)", max_length=5000)

    def __init__(self, *args, versions=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pick"].choices = [(v.version, f"Version {v.version}") for v in versions]
