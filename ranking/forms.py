from __future__ import annotations

import re

from django import forms

from annotation.models import Release
from annotation.qa_types import QA_TYPE_LABELS
from portal.forms import MultipleFileField
from portal.importing import ImportProblem
from portal.numbers import WholeNumberField
from portal.roles import ranker_accounts
from ranking.models import DEFAULT_TAG_SCALE, OVERLAP_MAX, OVERLAP_MIN, System
from ranking.rules.rankings import HALLUCINATION_KINDS
from ranking.services.outputs import system_name_check
from ranking.services.submissions import IncompleteRanking
from records.json_values import json_loads, place, refused_value

# The nugget assessment's page fields: nug_<slot>_<nugget position> and mark_<slot>_<sentence index>.
NUGGET_FIELD = re.compile(r"^nug_([A-Z]{1,2})_(\d{1,4})$")
MARK_FIELD = re.compile(r"^mark_([A-Z]{1,2})_(\d{1,5})$")


class StudyForm(forms.Form):
    name = forms.CharField(max_length=200)
    systems = forms.ModelMultipleChoiceField(
        queryset=System.objects.filter(is_reference=False).order_by("name"), widget=forms.CheckboxSelectMultiple
    )
    qa_types = forms.MultipleChoiceField(
        choices=[(t.value, label) for t, label in QA_TYPE_LABELS.items()],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="QA types",
        help_text="None ticked: every type.",
    )
    sample_size = WholeNumberField(min_value=1, required=False, help_text="Empty: every eligible item.")
    seed = WholeNumberField(initial=0)
    # Picked by name: an organizer knows "cliniqlink v2", not the release's number in the database.
    release_id = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        label="Release",
        help_text="Optional: only the items of this frozen release are used.",
    )
    ask_ranking = forms.BooleanField(
        initial=True, required=False, label="Rank the answers", help_text="Rankers order the answers, best first."
    )
    ask_nuggets = forms.BooleanField(
        required=False,
        label="Check each answer against the item's nuggets",
        help_text="Rankers mark every validated nugget as supported, partly supported or not supported by each "
        "answer, and mark its wrong or unsupported sentences. Only items with validated nuggets take part.",
    )
    ask_spans = forms.BooleanField(
        required=False,
        label="Rankers mark hallucinated words",
        help_text="Rankers select the words of each answer that are hallucinated (intrinsic, extrinsic or other), "
        "or confirm an answer has none; stored as character spans (SHROOM's labels). With the hallucination "
        "question below, its yes/no and kind are derived from the marks.",
    )
    spans_by_character = forms.BooleanField(
        required=False,
        label="Marks by character",
        help_text="Keep exactly the characters a ranker selects. By default a selection that starts or ends inside a "
        "word grows to the whole word.",
    )
    include_reference = forms.BooleanField(initial=True, required=False)
    overlap = forms.IntegerField(min_value=OVERLAP_MIN, max_value=OVERLAP_MAX, initial=3, label="Rankers per question")
    ties_allowed = forms.BooleanField(required=False)
    tag_scale = forms.CharField(initial=", ".join(DEFAULT_TAG_SCALE), help_text="Best first, comma-separated.")
    ask_hallucination = forms.BooleanField(
        required=False, label="Ask about hallucinations (intrinsic / extrinsic / other)"
    )
    ask_harm = forms.BooleanField(required=False, label="Ask about potential patient harm")
    show_passage = forms.BooleanField(
        required=False,
        label="Show rankers the source passage",
        help_text="The textbook passage each question was written from. Needed to judge intrinsic hallucinations "
        "(claims that contradict the source); it may hint at the right answer.",
    )
    unblinding_rate = forms.FloatField(
        min_value=0, max_value=1, initial=0, help_text="Share of tasks asking which answer is the reference."
    )
    guidelines = forms.CharField(widget=forms.Textarea, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Asking more rankers per question than there are people who may rank leaves every question incomplete:
        # the field says how many there are now, and a new form asks no more of them than that.
        rankers = ranker_accounts().count()
        overlap = self.fields["overlap"]
        overlap.help_text = (
            f"{rankers} {'person has' if rankers == 1 else 'people have'} the ranker role now; a question is "
            "complete once this many of them have ranked it."
        )
        if not self.is_bound and 0 < rankers < overlap.initial:
            overlap.initial = max(OVERLAP_MIN, rankers)

        self.fields["release_id"].choices = [("", "No release: every eligible item")] + [
            (r.pk, f"{r} ({r.item_count} items, frozen {r.created_at:%Y-%m-%d})")
            for r in Release.objects.order_by("name", "-version")
        ]

    def clean(self):
        data = super().clean()
        if not (data.get("ask_ranking") or data.get("ask_nuggets") or data.get("ask_spans")):
            raise forms.ValidationError(
                "Choose what rankers do: rank the answers, check them against the item's nuggets, mark hallucinated "
                "words, or any combination."
            )
        return data

    def clean_tag_scale(self):
        return [t.strip() for t in self.cleaned_data["tag_scale"].split(",") if t.strip()]


class OutputsImportForm(forms.Form):
    system = forms.CharField(
        max_length=200, help_text="A new name creates the system; importing the same files again adds nothing twice."
    )
    family = forms.CharField(max_length=100, required=False)
    parameter_count = WholeNumberField(min_value=1, required=False)
    files = MultipleFileField(
        help_text="Harness output files (true_false.json … multi_hop_inverse.json), .jsonl, or PromptCBLUE predictions "
        "(test_predictions.json)"
    )

    def clean_system(self):
        # The import job checks the name too (CLI); checked here as well so the page says it at once.
        try:
            return system_name_check(self.cleaned_data["system"])
        except ImportProblem as exc:
            raise forms.ValidationError(exc.detail) from exc


def answers_from_post(post, slots: list[str]) -> dict:
    """The ranking page's fields (rank_A, tag_A, hall_A, hallkind_A, harm_A …) as the service's ``answers``."""
    answers = {}
    for slot in slots:
        kind = post.get(f"hallkind_{slot}", "")
        answers[slot] = {
            "rank": post.get(f"rank_{slot}", ""),
            "tag": post.get(f"tag_{slot}", ""),
            "hallucination": post.get(f"hall_{slot}") == "on",
            "hallucination_kind": kind if kind in HALLUCINATION_KINDS else "",
            "harm": post.get(f"harm_{slot}") == "on",
        }
    return answers


def spans_from_post(post) -> object:
    """The page's ``spans`` field (JSON written by spans.js) as the service's ``spans``, read by the one parser of
    people's JSON: a key given twice, NaN or a number such as 1e400 is refused as the ranking's problem (the page
    keeps what was written); text that is not JSON is passed on as is, so the service names the problem."""
    raw = post.get("spans", "")
    if not raw:
        return {}
    try:
        spans = json_loads(raw)
    except (ValueError, RecursionError):
        return raw
    refused = refused_value(spans)
    if refused is not None:
        path, reason = refused
        raise IncompleteRanking([f"{_span_place(path)}: {reason}"])
    return spans


def _span_place(path: list) -> str:
    """Where in the spans a refused value sits, in the words of the span rules' own messages ("answer A, mark 1,
    end"), so one problem reads the same whichever check caught it."""
    if len(path) >= 2 and isinstance(path[0], str) and isinstance(path[1], int):
        rest = place(path[2:])
        return f"answer {path[0][:4]}, mark {path[1] + 1}" + (f", {rest}" if rest else "")
    return f"spans, {place(path) or 'the whole list'}"


def assessment_from_post(post, nuggets: list[dict]) -> tuple[dict, dict]:
    """The nugget page's fields as the service's ``nugget_labels`` ({slot: {nugget id: label}}) and
    ``sentence_marks`` ({slot: {index: kind}}); every posted mark is passed on, so the service refuses bad ones."""
    key_at = {str(n["position"]): n["id"] for n in nuggets}
    labels: dict[str, dict] = {}
    marks: dict[str, dict] = {}
    for name, value in post.items():
        if match := NUGGET_FIELD.match(name):
            slot, position = match.groups()
            labels.setdefault(slot, {})[key_at.get(position, f"#{position}")] = value
        elif (match := MARK_FIELD.match(name)) and value:
            slot, index = match.groups()
            marks.setdefault(slot, {})[index] = value
    return labels, marks
