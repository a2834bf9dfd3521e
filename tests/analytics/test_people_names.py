"""Organizers read people's names on the analytics pages (the name the portal gives a person everywhere); what
is stored and downloaded keeps the pseudonyms."""

from __future__ import annotations

import pytest
from django.utils import timezone

from analytics.models import Report
from analytics.presentation.people import names_by_pseudonym, person_name
from stats.results import StatResult

pytestmark = pytest.mark.django_db


def _named(make_user, first, last):
    user = make_user("reviewer")
    user.first_name, user.last_name = first, last
    user.save()
    return user


def test_vetting_pairs_are_named_on_the_page_and_pseudonyms_in_the_download(make_user, organizer_client):
    rita, sam = _named(make_user, "Rita", "Reviewer"), _named(make_user, "Sam", "Second")
    result = {
        "pairs": [
            {
                "pair": [rita.pseudonym, sam.pseudonym],
                "n_items": 3,
                "too_few_items": True,
                "verdict_percent_agreement": StatResult("percent_agreement", 1.0, n_items=3).to_dict(),
                "verdict_cohen_kappa": StatResult("cohen_kappa", 0.5, n_items=3).to_dict(),
                "relevance_cohen_kappa_quadratic": StatResult("cohen_kappa_quadratic", 0.4, n_items=3).to_dict(),
            }
        ],
        "min_pair_items": 10,
    }
    report = Report.objects.create(kind="vetting_agreement", params={}, result=result, finished_at=timezone.now())
    page = organizer_client.get(f"/analytics/reports/{report.pk}/").content.decode()
    assert "Rita Reviewer &amp; Sam Second" in page
    assert rita.pseudonym not in page and sam.pseudonym not in page
    csv_text = organizer_client.get(f"/analytics/reports/{report.pk}/download.csv").content.decode()
    assert f"{rita.pseudonym} & {sam.pseudonym}" in csv_text and "Rita" not in csv_text
    report.refresh_from_db()
    assert report.result["pairs"][0]["pair"] == [rita.pseudonym, sam.pseudonym]


def test_the_one_helper_names_people_and_leaves_other_labellers_alone(make_user):
    rita = _named(make_user, "Rita", "Reviewer")
    plain = make_user("ranker")
    names = names_by_pseudonym([rita.pseudonym, plain.pseudonym, "GPT judge", "annotator-00000000"])
    assert names == {rita.pseudonym: "Rita Reviewer", plain.pseudonym: plain.email}
    assert person_name("annotator-00000000", names) == "annotator-00000000"
