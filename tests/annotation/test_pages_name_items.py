"""Reviewer and adjudicator pages name an item by its question (cut to one line, escaped) with the uid beside it;
items of a benchmark without source passages get no "excerpt missing" warning and are not counted as lacking one;
a review page whose hold has run out says so when it opens."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation.models import Assignment, QAItem
from annotation.selectors.vetting import missing_excerpts
from annotation.services.disputes import dispute_file, feedback_file
from annotation.services.imports import items_import
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus
from home.next_steps import organizer_next_steps

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

# Markup and a line break in the question: the page must show them as text, on one line, cut before the end.
QUESTION = (
    "Does <b>aspirin</b> & warfarin\ntaken together raise the risk of bleeding in an elderly patient "
    "on long-term anticoagulation?"
)
# Written out by hand: the first 79 characters of the question on one line, then an ellipsis (80 in all).
TITLE = "Does <b>aspirin</b> & warfarin taken together raise the risk of bleeding in an …"


def _h1(html: str) -> str:
    match = re.search(r"<h1>(.*?)</h1>", html, flags=re.S)
    assert match, "no <h1>"
    return match.group(1)


def _title(html: str) -> str:
    return re.search(r"<title>(.*?)</title>", html, flags=re.S).group(1)


def _named(html: str, item: QAItem, where: str) -> None:
    assert escape(TITLE) in where and item.uid in where, where
    assert "<b>aspirin" not in html  # never the question's markup as markup


def test_the_expected_title_is_the_question_cut_to_eighty_characters():
    assert len(TITLE) == 80 and TITLE.endswith("an …") and "\n" not in TITLE


def test_reviewer_and_adjudicator_pages_name_the_item_by_its_question(client, sample_items, config, make_user, review):
    config.second_share = 0.0
    config.save()
    alice, adjudicator, organizer = make_user("reviewer"), make_user("adjudicator"), make_user("organizer")
    reviewed = assignment_next(reviewer=alice)
    QAItem.objects.filter(pk=reviewed.item_id).update(question=QUESTION)
    review(reviewed, "correct", 4)
    noted = assignment_next(reviewer=alice)
    QAItem.objects.filter(pk=noted.item_id).update(question=QUESTION)
    feedback_file(author=alice, assignment_id=noted.pk, idempotency_key=noted.idempotency_key, text="a typo")
    disputed = assignment_next(reviewer=alice)
    QAItem.objects.filter(pk=disputed.item_id).update(question=QUESTION)
    dispute = dispute_file(
        raised_by=alice,
        assignment_id=disputed.pk,
        idempotency_key=disputed.idempotency_key,
        category="factual_error",
        text="The answer is outdated.",
    )
    reviewed_item, noted_item, disputed_item = (QAItem.objects.get(pk=a.item_id) for a in (reviewed, noted, disputed))

    client.force_login(alice)
    html = client.get(reverse("review_edit", args=[reviewed.pk])).content.decode()
    _named(html, reviewed_item, _h1(html))
    assert escape(TITLE) in _title(html)
    html = client.get(reverse("review_mine")).content.decode()
    row = re.search(r'<table id="my-reviews">.*?</table>', html, flags=re.S).group(0)
    _named(html, reviewed_item, row)
    html = client.get(reverse("review_next")).content.decode()
    _named(html, noted_item, html[html.index('id="my-feedback"') :])
    html = client.get(reverse("dispute_list")).content.decode()
    _named(html, disputed_item, re.search(r'<tr class="dispute-row".*?</tr>', html, flags=re.S).group(0))
    html = client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    _named(html, disputed_item, _h1(html))

    client.force_login(adjudicator)
    html = client.get(reverse("adjudication_queue")).content.decode()
    rows = re.findall(r"<tr data-uid=.*?</tr>", html, flags=re.S)
    _named(html, disputed_item, next(r for r in rows if disputed_item.uid in r))
    html = client.get(reverse("adjudication_item", args=[disputed_item.uid])).content.decode()
    _named(html, disputed_item, _h1(html))
    assert escape(TITLE) in _title(html)

    client.force_login(organizer)
    for name in ("item_detail", "vetting_reassign"):
        html = client.get(reverse(name, args=[disputed_item.uid])).content.decode()
        _named(html, disputed_item, _h1(html))


@pytest.fixture
def both_benchmarks(db):
    """The ClinIQLink sample without its passages, and the PromptCBLUE sample (which has none by design)."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    return QAItem.objects.filter(benchmark="cliniqlink"), QAItem.objects.filter(benchmark="promptcblue")


def test_items_of_a_benchmark_without_sources_lack_no_excerpt(both_benchmarks, make_user, client):
    cliniqlink, promptcblue = both_benchmarks
    assert promptcblue.count() == 3 and cliniqlink.count() == 35
    assert not QAItem.objects.filter(passage__isnull=False).exists()
    organizer = make_user("organizer")
    steps = {step.key: step.text for step in organizer_next_steps(organizer)}
    assert steps["missing_excerpts"].startswith("35 items have no source excerpt")
    missing = missing_excerpts()
    assert missing["item_count"] == 35
    assert not any(item.uid.startswith("pcb-") for item in missing["items"])
    client.force_login(organizer)
    dashboard = client.get(reverse("vetting_dashboard")).content.decode()
    assert "pcb-" not in dashboard[dashboard.index('id="missing-excerpts"') :]
    listed = client.get(reverse("item_list"), {"excerpt": "missing"}).content.decode()  # the dashboard's link
    assert "35 found" in listed and "pcb-" not in listed


def test_the_adjudication_page_of_a_promptcblue_item_warns_of_no_missing_excerpt(both_benchmarks, make_user, client):
    cliniqlink, promptcblue = both_benchmarks
    chinese = promptcblue.get(uid="pcb-train-demo-0002")
    english = cliniqlink.first()
    QAItem.objects.filter(pk__in=[chinese.pk, english.pk]).update(status=ItemStatus.IN_ADJUDICATION)
    client.force_login(make_user("adjudicator"))
    html = client.get(reverse("adjudication_item", args=[chinese.uid])).content.decode()
    assert "Excerpt missing" not in html and "ISBN —" not in html and "paragraph id “”" not in html
    assert 'id="no-source"' in html
    assert "Task: Classification · CHIP-STS" in html and "Task: cls" not in html
    assert "· PromptCBLUE</p>" in html
    # A ClinIQLink item whose passage was never imported still says so.
    html = client.get(reverse("adjudication_item", args=[english.uid])).content.decode()
    assert f"no passage with paragraph id “{escape(english.paragraph_id)}” has been imported" in html


def _lease_ended(html: str) -> str:
    return re.search(r'<p class="lease-ended" id="lease-ended"[^>]*>(.*?)</p>', html, flags=re.S).group(0)


def test_a_review_page_opened_after_the_hold_ran_out_says_the_review_will_be_late(
    client, sample_items, config, reviewer
):
    lease = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    html = client.get(reverse("review_assignment", args=[lease.pk])).content.decode()
    assert re.search(r'id="lease-ended"[^>]* hidden>', html)  # there, for review.js, but not shown
    assert not re.search(r'id="lease-until"[^>]* hidden', html)

    # The hold ran out 7 minutes and some seconds ago.
    Assignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(minutes=7, seconds=20))
    html = client.get(reverse("review_assignment", args=[lease.pk])).content.decode()
    shown = _lease_ended(html)
    assert " hidden>" not in shown.split(">", 1)[0] + ">"
    text = re.sub(r"<[^>]+>", "", re.sub(r"\s+", " ", shown)).strip()
    assert text.startswith(
        "Your hold on this item ended 7 min ago; you can still send this review, it will be marked late"
    )
    assert re.search(r'id="lease-until"[^>]* hidden', html)
