"""The import page speaks to people: formats by their names, what an empty batch name becomes, the other kind of
import; a file of the wrong kind is refused by saying which kind the format needs."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.services.imports import items_import
from portal.importing import ImportProblem

pytestmark = pytest.mark.django_db


def test_the_format_select_shows_the_benchmarks_by_name(organizer_client):
    html = organizer_client.get(reverse("import")).content.decode()
    select = re.search(r'<select name="format"[^>]*>(.*?)</select>', html, re.S).group(1)
    options = dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', select))
    assert options == {"cliniqlink": "ClinIQLink", "promptcblue": "PromptCBLUE"}


def test_the_page_states_what_an_empty_batch_name_becomes_and_links_the_output_import(organizer_client):
    html = organizer_client.get(reverse("import")).content.decode()
    assert "Left empty, the batch is named after its files" in html
    link = re.search(r'<a href="([^"]+)" id="outputs-import-link">([^<]+)</a>', html)
    assert link.group(1) == "/organize/outputs/import/" and link.group(2) == "Import system outputs"
    assert organizer_client.get(link.group(1)).status_code == 200


@pytest.mark.parametrize(
    ("name", "content", "fmt", "message"),
    [
        ("items.csv", "question,answer\nIs it?,True\n", "cliniqlink",
         "items.csv: ClinIQLink items must be a JSON file, an array of items as in TF.json (this one looks like CSV)"),
        ("TF.json", "question;answer\n", "cliniqlink",
         "TF.json: ClinIQLink items must be a JSON file, an array of items as in TF.json"),
        ("items.csv", "input,target\n", "promptcblue",
         "items.csv: PromptCBLUE items must be a JSON file, JSONL: one object a line (this one looks like CSV)"),
    ],
)  # fmt: skip
def test_a_file_of_the_wrong_kind_is_refused_naming_the_kind_needed(tmp_path, name, content, fmt, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path], fmt=fmt)
    assert str(caught.value) == message


def test_a_json_file_with_a_slip_still_names_the_place(tmp_path):
    path = tmp_path / "TF.json"
    path.write_text('\ufeff  [{"question": "x",')
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path])
    assert "malformed JSON" in str(caught.value) and "must be a JSON file" not in str(caught.value)
