"""The item-repair list on the vetting dashboard: the items reviewers could not judge for a reason an organizer can
fix (the excerpt, the question's wording, outdated medicine), each reason with how many reviewers gave it, a link to
the item page; never "outside my field" (it says nothing about the item); organizers only, and never an item the
organizer was given to review (it would tell them what the other reviewers answered)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Review
from annotation.selectors.vetting import repair_list
from tests.reviews import done_review

pytestmark = pytest.mark.django_db


def _said(item, who, stage: str, reason: str, *, verdict: str = "cannot_tell") -> Review:
    review = done_review(item, who, stage, verdict, 3)
    Review.objects.filter(pk=review.pk).update(cannot_tell_reason=reason)
    return review


@pytest.fixture
def said(sample_items, make_user):
    """Item 0: the excerpt (two reviewers) and ambiguous wording (one, whose review was set aside); item 1: outdated
    (one); item 2: outside a reviewer's field only; item 3: "cannot tell" from before reasons were asked, and a
    "correct"."""
    people = [make_user("reviewer") for _ in range(6)]
    items = sample_items
    set_aside = _said(items[0], people[2], "primary", "ambiguous")
    Review.objects.filter(pk=set_aside.pk).update(superseded_at=set_aside.created_at)
    _said(items[0], people[0], "primary", "excerpt")
    _said(items[0], people[1], "secondary", "excerpt")
    _said(items[1], people[3], "primary", "outdated")
    _said(items[2], people[4], "primary", "outside_field")
    _said(items[3], people[5], "primary", "")
    _said(items[3], people[0], "secondary", "", verdict="correct")
    return items, people


def test_the_list_holds_exactly_the_fixable_reasons_with_their_reviewers(said, organizer):
    items, _ = said
    listed = repair_list(organizer)
    assert listed["item_count"] == 2
    assert [(row.item.uid, row.reasons, row.reviewers) for row in listed["items"]] == [
        (items[0].uid, (("The excerpt is missing or wrong", 2), ("The question is ambiguous", 1)), 3),
        (items[1].uid, (("The medicine is outdated", 1),), 1),
    ]


def test_items_the_organizer_was_given_to_review_are_left_out(said, make_user):
    items, people = said
    reviewing_organizer = make_user("organizer", "reviewer")
    done_review(items[1], reviewing_organizer, "secondary", "correct", 4)
    assert [row.item.uid for row in repair_list(reviewing_organizer)["items"]] == [items[0].uid]


def test_the_list_is_cut_at_its_limit_and_says_how_many_there_are(said, organizer):
    items, _ = said
    listed = repair_list(organizer, limit=1)
    assert [row.item.uid for row in listed["items"]] == [items[0].uid] and listed["item_count"] == 2


def test_the_dashboard_shows_the_list_with_links_to_the_item_pages(said, organizer_client):
    items, _ = said
    page = organizer_client.get(reverse("vetting_dashboard")).content.decode()
    section = page[page.index('id="repair-list"') :]
    section = section[: section.index("</section>")]
    rows = re.findall(r"<tr><td class=\"item-named\">(.*?)</tr>", section, flags=re.S)
    assert len(rows) == 2
    assert f'href="{reverse("item_detail", args=[items[0].uid])}"' in rows[0]
    assert "The excerpt is missing or wrong" in rows[0] and "(2)" in rows[0] and "<td>3</td>" in rows[0]
    assert f'href="{reverse("item_detail", args=[items[1].uid])}"' in rows[1] and "outdated" in rows[1]
    assert items[2].uid not in section and "Outside my field" not in section


def test_the_dashboard_says_when_nothing_needs_repair(sample_items, organizer_client):
    page = organizer_client.get(reverse("vetting_dashboard")).content.decode()
    assert "No reviewer has named anything to repair." in page


@pytest.mark.parametrize("roles", [("reviewer",), ("adjudicator",), ("ranker",)])
def test_only_organizers_get_the_list(said, make_user, roles):
    client = Client()
    client.force_login(make_user(*roles))
    response = client.get(reverse("vetting_dashboard"))
    assert response.status_code == 403
    assert "The excerpt is missing or wrong" not in response.content.decode()
