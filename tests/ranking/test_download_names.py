"""Downloaded files are named for what they hold: the study's name, the contents, the variant, the extension; no
raw id, no format said twice, the file with e-mail addresses never named as the pseudonymised one; a study name
in any script reaches the browser intact (RFC 6266 ``filename*``) with an ASCII name beside it."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.downloads import ascii_name, attachment_header, download_name

pytestmark = pytest.mark.django_db


def _saved_as(header: str) -> str:
    """The name a client that reads RFC 6266 saves the file under: ``filename*`` (charset, empty language,
    percent-encoded bytes) when there is one, else ``filename``."""
    extended = re.search(r"filename\*=UTF-8''([^;\s]+)", header, re.I)
    if extended:
        return unquote(extended.group(1), encoding="utf-8", errors="strict")
    return re.search(r'filename="([^"]*)"', header).group(1)


def test_study_exports_say_what_they_hold_and_which_variant(make_study, organizer_client):
    study = make_study(name="Demo study")
    plain = organizer_client.get(f"/organize/studies/{study.pk}/export/csv/")
    named = organizer_client.get(f"/organize/studies/{study.pk}/export/csv/?identities=1")
    parquet = organizer_client.get(f"/organize/studies/{study.pk}/export/parquet/")
    assert plain["Content-Disposition"] == 'attachment; filename="demo-study-rankings.csv"'
    assert named["Content-Disposition"] == 'attachment; filename="demo-study-rankings-identified.csv"'
    assert parquet["Content-Disposition"] == 'attachment; filename="demo-study-rankings.parquet"'
    for response in (plain, named, parquet):
        assert str(study.pk) not in response["Content-Disposition"]


def test_span_exports_and_the_api_use_the_same_names(make_study, organizer_client):
    study = make_study(name="Demo study", ask_spans=True)
    spans = organizer_client.get(f"/organize/studies/{study.pk}/export/spans-parquet/")
    blind = organizer_client.get(f"/organize/studies/{study.pk}/export/spans-jsonl/?blind_systems=1&identities=1")
    assert _saved_as(spans["Content-Disposition"]) == "demo-study-rankings-spans.parquet"
    assert _saved_as(blind["Content-Disposition"]) == "demo-study-rankings-spans-identified-systems-blinded.jsonl"
    api = organizer_client.get(f"/api/studies/{study.pk}/export/?fmt=spans-parquet")
    assert api.status_code == 200 and api["Content-Disposition"] == spans["Content-Disposition"]


def test_a_study_name_in_another_script_keeps_its_letters_with_an_ascii_name_beside_it(make_study, organizer_client):
    study = make_study(name="Étude préliminaire 中文")
    header = organizer_client.get(f"/organize/studies/{study.pk}/export/csv/?identities=1")["Content-Disposition"]
    assert _saved_as(header) == "étude-préliminaire-中文-rankings-identified.csv"
    fallback = header.split(";")[1].strip()
    assert fallback == 'filename="etude-preliminaire-rankings-identified.csv"'
    assert header.isascii()


def test_names_are_slugs_and_the_header_follows_rfc_6266():
    assert download_name("  Demo  Study! ", "rankings", "csv") == "demo-study-rankings.csv"
    assert download_name("", "rankings", "csv", variants=["identified"]) == "rankings-identified.csv"
    assert download_name('a/b\\c"d', "", "json") == "abcd.json"
    assert ascii_name("中文.csv") == "download.csv"
    plain = "judgements-pseudonymised-2026-12-06.shroom.json"  # a plain name keeps every dot
    assert ascii_name(plain) == plain and attachment_header(plain) == f'attachment; filename="{plain}"'
    # RFC 6266, section 5's example: the UTF-8 name percent-encoded after the charset and an empty language.
    header = attachment_header("€ rates.pdf")
    assert header == "attachment; filename=\"rates.pdf\"; filename*=UTF-8''%E2%82%AC%20rates.pdf"
    assert unquote(header.split("''", 1)[1]) == "€ rates.pdf"


def test_every_download_of_the_portal_says_what_it_holds(client, make_user):
    """Releases, reports and nugget lists go through the one naming rule too (no raw ids, no spaces)."""
    from analytics.models import Report

    organizer = make_user("organizer")
    client.force_login(organizer)
    report = Report.objects.create(kind=Report.Kind.VETTING_AGREEMENT, result={"notes": []})
    response = client.get(reverse("report_download", args=[report.pk, "csv"]))
    stamp = timezone.localtime(report.created_at).strftime("%Y-%m-%d-%H%M")
    assert response["Content-Disposition"] == f'attachment; filename="vetting-agreement-{stamp}.csv"'
    response = client.get(reverse("nugget_export"), {"status": "validated"})
    assert response["Content-Disposition"] == 'attachment; filename="nuggets-validated.jsonl"'
