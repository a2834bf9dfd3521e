"""The organizers' item page shows the judgements (reviews with comments, final verdict and relevance, gold,
disputes) and offers the actions through their services; the judgement export is a download and an API endpoint,
audited as every export of people's judgements, with file names that say whether people are named (F39)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from django.urls import reverse

from annotation.models import Dispute, GoldItem, QAItem
from annotation.services.imports import items_import
from portal.models import AuditEntry
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


@pytest.fixture
def items(make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample" / "TF.json"])
    first, second, fresh = QAItem.objects.order_by("id")[:3]
    a, b = make_user("reviewer"), make_user("reviewer")
    done_review(first, a, "primary", "incorrect", 2).__class__.objects.filter(reviewer=a).update(
        comment="=HYPERLINK(the source contradicts it)"
    )
    done_review(first, b, "secondary", "incorrect", 2).__class__.objects.filter(reviewer=b).update(
        comment="Wrong: the excerpt says the opposite."
    )
    QAItem.objects.filter(pk=first.pk).update(
        status="rejected", final_verdict="incorrect", final_relevance=2, final_source="agreement"
    )
    Dispute.objects.create(item=second, raised_by=b, category="ambiguous", text="two answers fit")
    return {"first": first, "second": second, "fresh": fresh, "reviewers": (a, b)}


def test_item_page_shows_comments_final_verdict_gold_disputes_and_actions(organizer_client, items):
    page = organizer_client.get(reverse("item_detail", args=[items["first"].uid])).content.decode()
    assert "Wrong: the excerpt says the opposite." in page
    assert "Final verdict: <strong>Incorrect</strong>, GP relevance 2" in page and "two reviews agreed" in page
    assert 'id="actions"' in page and "Open a dispute" in page
    assert "Only an item nobody has reviewed can become gold." in page
    disputed = organizer_client.get(reverse("item_detail", args=[items["second"].uid])).content.decode()
    dispute = Dispute.objects.get(item=items["second"])
    assert reverse("dispute_detail", args=[dispute.pk]) in disputed and "two answers fit" in disputed


def test_item_page_marks_gold_and_opens_a_dispute_through_the_services(organizer_client, organizer, items):
    url = reverse("item_detail", args=[items["fresh"].uid])
    assert "Mark as gold" in organizer_client.get(url).content.decode()
    response = organizer_client.post(
        url, {"action": "gold_mark", "uid": items["fresh"].uid, "expected_verdict": "incorrect", "planted_error": "on"}
    )
    assert response.status_code == 302
    gold = GoldItem.objects.get(item=items["fresh"])
    assert gold.expected_verdict == "incorrect" and gold.planted_error
    assert AuditEntry.objects.filter(action="gold_marked", actor=organizer).exists()
    page = organizer_client.get(url).content.decode()
    assert "Gold item</span>" in page and "Change gold item" in page and "Nobody has answered it yet." in page
    # A reviewed item: the service refuses, the page says why.
    refused = organizer_client.post(
        reverse("item_detail", args=[items["first"].uid]),
        {"action": "gold_mark", "uid": items["first"].uid, "expected_verdict": "correct"},
    )
    assert refused.status_code == 409 and "already in review" in refused.content.decode()
    opened = organizer_client.post(url, {"action": "dispute", "category": "ambiguous", "text": "two readings"})
    dispute = Dispute.objects.get(item=items["fresh"])
    assert opened["Location"] == reverse("dispute_detail", args=[dispute.pk]) and dispute.raised_by == organizer


def test_conflicted_organizer_is_still_refused_the_page_and_its_actions(client, make_user, items):
    conflicted = make_user("organizer", "reviewer")
    done_review(items["second"], conflicted, "primary", "correct", 5)
    client.force_login(conflicted)
    url = reverse("item_detail", args=[items["second"].uid])
    assert client.get(url).status_code == 403
    assert client.post(url, {"action": "dispute", "category": "ambiguous", "text": "x"}).status_code == 403
    assert Dispute.objects.filter(item=items["second"], raised_by=conflicted).count() == 0


def test_download_is_pseudonymised_spreadsheet_safe_named_and_audited(organizer_client, organizer, items):
    a, b = items["reviewers"]
    response = organizer_client.get(reverse("judgement_export", args=["judgements", "csv"]))
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    assert "judgements-pseudonymised-" in response["Content-Disposition"]
    table = pd.read_csv(io.BytesIO(response.content))
    assert set(table["annotator"]) == {a.pseudonym, b.pseudonym}
    assert "'=HYPERLINK(the source contradicts it)" in set(table["comment"])
    entry = AuditEntry.objects.get(action="judgements_exported", actor=organizer)
    assert entry.after == {"format": "csv", "identities": False}


def test_download_with_identities_has_its_own_name_and_audit(organizer_client, organizer, items):
    response = organizer_client.get(reverse("judgement_export", args=["disputes", "parquet"]) + "?identities=1")
    assert "disputes-with-identities-" in response["Content-Disposition"]
    assert response["Content-Disposition"].endswith('.parquet"')
    table = pd.read_parquet(io.BytesIO(response.content))
    assert list(table["raised_by"]) == [items["reviewers"][1].email]
    entry = AuditEntry.objects.get(action="disputes_exported", actor=organizer)
    assert entry.after == {"format": "parquet", "identities": True}
    assert organizer_client.get(reverse("judgement_export", args=["disputes", "shroom"])).status_code == 404


def test_api_returns_the_same_rows_and_audits(organizer_client, organizer, items):
    plain = organizer_client.get("/api/judgements/?table=judgements&fmt=csv")
    named = organizer_client.get("/api/judgements/?table=judgements&fmt=csv&identities=true")
    assert plain.status_code == named.status_code == 200
    assert "pseudonymised" in plain["Content-Disposition"] and "with-identities" in named["Content-Disposition"]
    emails = {u.email for u in items["reviewers"]}
    assert set(pd.read_csv(io.BytesIO(named.content))["annotator"]) == emails
    assert not emails & set(pd.read_csv(io.BytesIO(plain.content))["annotator"])
    audited = AuditEntry.objects.filter(action="judgements_exported", actor=organizer).order_by("id")
    assert [e.after["identities"] for e in audited] == [False, True]
    assert organizer_client.get("/api/judgements/?table=disputes&fmt=shroom").status_code == 400


def test_the_download_and_api_are_for_organizers_only(client, make_user, items):
    client.force_login(make_user("reviewer", "adjudicator"))
    assert client.get(reverse("judgement_export", args=["judgements", "csv"])).status_code == 403
    assert client.get("/api/judgements/").status_code == 403
    assert not AuditEntry.objects.filter(action="judgements_exported").exists()
