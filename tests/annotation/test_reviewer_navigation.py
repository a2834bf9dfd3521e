"""Reviewers' own navigation (issue 45, F2 and F38): Guidelines, My reviews and API tokens in the top bar for the
roles that use them, and on the home page how many items wait, the review page's own count."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.selectors.queue import queue_outlook
from annotation.services.queue import assignment_next

pytestmark = pytest.mark.django_db


def _nav_links(html: str) -> set[str]:
    """The addresses linked from the top bar (the main navigation and the person's own links)."""
    header = html.split('<header class="topbar">', 1)[1].split("</header>", 1)[0]
    return set(re.findall(r'href="([^"]+)"', header))


@pytest.mark.parametrize(
    ("roles", "present", "absent"),
    [
        (("reviewer",), {"guidelines", "review_mine", "api_tokens"}, {"guideline_list"}),
        (("adjudicator",), {"guidelines", "api_tokens"}, {"review_mine"}),
        (("ranker",), {"api_tokens"}, {"guidelines", "review_mine"}),
        (("organizer",), {"guideline_list", "api_tokens"}, {"guidelines", "review_mine"}),
    ],
)
def test_the_top_bar_links_each_role_to_its_own_pages(client, make_user, roles, present, absent):
    client.force_login(make_user(*roles))
    links = _nav_links(client.get(reverse("home")).content.decode())
    assert {reverse(name) for name in present} <= links
    assert not {reverse(name) for name in absent} & links


def test_the_home_page_says_how_many_items_wait_as_the_review_page_counts_them(client, sample_items, config, make_user):
    alice = make_user("reviewer")
    client.force_login(alice)
    waiting = queue_outlook(alice)["left"]
    assert waiting == len(sample_items)
    assert f"{waiting} items wait for you." in client.get(reverse("home")).content.decode()
    lease = assignment_next(reviewer=alice)
    # The open item counts as waiting, as on the review page ("N items left for you").
    assert queue_outlook(alice, lease=lease)["left"] == waiting
    assert f"{waiting} items wait for you." in client.get(reverse("home")).content.decode()


def test_the_home_page_says_when_nothing_waits(client, make_user):
    client.force_login(make_user("reviewer"))
    assert "No items wait for you right now." in client.get(reverse("home")).content.decode()


def test_one_top_bar_link_only_is_marked_as_the_current_page(client, make_user):
    """``/review/mine/`` lies under ``/review/``: only "My reviews" is marked there, only "Review" on the queue."""
    import re

    client.force_login(make_user("reviewer"))
    current = re.findall(r'<a href="([^"]+)" aria-current="page">', client.get("/review/mine/").content.decode())
    assert current == ["/review/mine/"]
