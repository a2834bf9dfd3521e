"""The release name rule has one home (annotation.services.releases) for the page, the API and the command, and
accepts the names the demo uses ("ClinIQLink demo"); the freeze form states it at the field. The form's Preview
carries no CSRF token into the address bar, and freezing asks for confirmation on a page that shows what will be
frozen (usability report F9, F10)."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import QAItem, Release
from annotation.services.imports import items_import
from annotation.services.releases import RELEASE_NAME_RULE, release_name_problem

ROOT = Path(__file__).resolve().parents[2]
FORM = {"min_relevance": 5, "final_verdict": "correct", "exclude_open_issues": "on", "benchmark": "cliniqlink"}

pytestmark = pytest.mark.django_db


@pytest.fixture
def vetted():
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    keep = list(QAItem.objects.order_by("id").values_list("pk", flat=True)[:6])
    QAItem.objects.filter(pk__in=keep).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )


@pytest.mark.parametrize("name", ["ClinIQLink demo", "ClinIQLink demo with nuggets", "cliniqlink-2025", "v1.2 (draft)"])
def test_the_rule_accepts_the_demos_names(name):
    assert release_name_problem(name) is None


@pytest.mark.parametrize("name", ["", " lead", "trail ", "two  spaces", "a@b", "a/b", 'say "x"', "x" * 101, "é"])
def test_the_rule_refuses_names_that_break_urls_or_file_names(name):
    assert RELEASE_NAME_RULE in release_name_problem(name)


def test_a_name_with_spaces_freezes_through_the_page_and_downloads(vetted, organizer_client):
    response = organizer_client.post("/releases/", FORM | {"name": "UX test release"})
    assert response.status_code == 302, response.content.decode()[:2000]
    release = Release.objects.get(name="UX test release")
    page = organizer_client.get(response["Location"])
    assert page.status_code == 200 and "UX test release@1" in page.content.decode()
    download = organizer_client.get(f"/releases/{release.label}/download/csv/")
    assert download.status_code == 200
    assert download["Content-Disposition"] == 'attachment; filename="ux-test-release-v1-csv.zip"'
    names = zipfile.ZipFile(io.BytesIO(download.content)).namelist()
    assert "UX test release-v1-csv/SHA256SUMS" in names


def test_a_bad_name_is_refused_at_the_field_with_the_rule(vetted, organizer_client):
    page = organizer_client.get("/releases/").content.decode()
    assert RELEASE_NAME_RULE[1:] in page  # the rule is stated under the field before anyone submits
    for send in (organizer_client.post, organizer_client.get):
        response = send("/releases/", FORM | {"name": "a/b", "confirm": "1"})
        html = response.content.decode()
        field = re.search(
            r'<ul class="errorlist"[^>]*>(.*?)</ul>\s*<label for="id_name"|id="id_name_error".*?</ul>', html, re.S
        )
        assert "A release name has" in html and field, html[:3000]
    assert not Release.objects.exists()


def test_api_and_command_share_the_rule(vetted, organizer_client):
    response = organizer_client.post("/api/releases/", {"name": "API release"}, content_type="application/json")
    assert response.status_code == 201, response.json()
    response = organizer_client.post("/api/releases/", {"name": "a@b"}, content_type="application/json")
    assert response.status_code == 400 and RELEASE_NAME_RULE in str(response.json()["name"])
    with pytest.raises(CommandError, match="A release name has"):
        call_command("freeze_release", "bad/name")


def test_preview_carries_no_csrf_token_and_freezing_asks_first(vetted, organizer_client):
    page = organizer_client.get("/releases/").content.decode()
    form = re.search(r'<form method="get">(.*?)</form>', page, re.S).group(1)
    assert "csrfmiddlewaretoken" not in form

    confirm = organizer_client.get("/releases/", FORM | {"name": "ClinIQLink demo", "confirm": "1"})
    html = confirm.content.decode()
    assert confirm.status_code == 200 and not Release.objects.exists()  # nothing frozen by looking
    assert "Freeze ClinIQLink demo@1?" in html
    assert "Freeze 6 items as ClinIQLink demo@1" in html
    assert "can never be changed" in html and 'name="csrfmiddlewaretoken"' in html
    back = re.search(r'href="(/releases/\?[^"]*)"', html).group(1)
    assert "confirm" not in back

    # The confirmation's form sends back exactly what was chosen.
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', html))
    hidden.pop("csrfmiddlewaretoken")
    response = organizer_client.post("/releases/", hidden)
    assert response.status_code == 302
    release = Release.objects.get()
    assert release.label == "ClinIQLink demo@1" and release.item_count == 6
