"""Two uploaded files that would be saved under one name (``a/MC.json`` and ``b/MC.json``: a browser sends base
names; or names that differ only in characters the portal replaces) are refused before anything is stored, with
"two files named MC.json", on the import page, over the API and on the outputs page. They overwrote each other on
disk, and the job then failed with a duplicate-uid message that pointed at the wrong cause (the December security
review, finding 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import QAItem
from portal.importing import ImportProblem
from portal.models import Job
from portal.uploads import save_uploads
from ranking.models import System, SystemOutput

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"
MC = json.loads((SAMPLE / "MC.json").read_text())

pytestmark = pytest.mark.django_db


def _two_of_one_name(first: str = "a/MC.json", second: str = "b/MC.json") -> list[SimpleUploadedFile]:
    return [
        SimpleUploadedFile(first, json.dumps(MC[:2]).encode(), content_type="application/json"),
        SimpleUploadedFile(second, json.dumps(MC[2:]).encode(), content_type="application/json"),
    ]


def _stored_uploads() -> list[Path]:
    root = Path(settings.PORTAL_UPLOADS_DIR)
    return sorted(root.rglob("*")) if root.exists() else []


def test_the_import_page_refuses_two_files_of_one_name_and_stores_nothing(organizer_client):
    before = _stored_uploads()
    response = organizer_client.post(
        reverse("import"), {"kind": "items", "format": "cliniqlink", "files": _two_of_one_name()}
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "two files named MC.json" in page and 'name="files"' in page  # the form again, with the reason
    assert _stored_uploads() == before and not Job.objects.exists() and not QAItem.objects.exists()


def test_the_import_api_refuses_two_files_of_one_name_with_a_400(organizer_client):
    before = _stored_uploads()
    response = organizer_client.post("/api/imports/", {"files": _two_of_one_name()}, format="multipart")
    assert response.status_code == 400
    assert "two files named MC.json" in response.json()["detail"]
    assert _stored_uploads() == before and not Job.objects.exists() and not QAItem.objects.exists()


def test_the_outputs_page_refuses_two_files_of_one_name(organizer_client):
    uploads = [SimpleUploadedFile(name, b'{"item_uid": "x", "response": "y"}\n') for name in ("a/o.jsonl", "b/o.jsonl")]
    response = organizer_client.post(reverse("outputs_import"), {"system": "S1", "files": uploads})
    assert response.status_code == 400 and "two files named o.jsonl" in response.content.decode()
    assert not Job.objects.exists() and not System.objects.exists() and not SystemOutput.objects.exists()


def test_names_that_differ_only_in_replaced_characters_are_one_name():
    before = _stored_uploads()
    with pytest.raises(ImportProblem, match=r"^\(upload\): two files named M_C\.json; upload files of the same name"):
        save_uploads(_two_of_one_name("M C.json", "M_C.json"))
    assert _stored_uploads() == before


def test_files_of_different_names_are_all_stored():
    paths, displays = save_uploads(_two_of_one_name("MC.json", "more MC.json"))
    assert [path.name for path in paths] == ["MC.json", "more_MC.json"]
    assert [displays[str(path)] for path in paths] == ["MC.json", "more MC.json"]
    assert json.loads(paths[1].read_text()) == MC[2:]
