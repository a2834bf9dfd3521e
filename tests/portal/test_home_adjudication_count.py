"""Usability F25: the organizer's "what to do next" gives one number for the items waiting for adjudication and
splits it the way "Items by status" beside it counts them, so "2 wait" next to "In adjudication 1" adds up."""

from __future__ import annotations

import re
from pathlib import Path

from annotation.models import Dispute, QAItem
from annotation.services.imports import items_import

ROOT = Path(__file__).resolve().parents[2]


def _step(client, key):
    html = client.get("/").content.decode()
    found = re.search(rf'<li data-step="{key}">(.*?)</li>', html, re.S)
    return found.group(1) if found else ""


def test_waiting_count_says_how_many_are_held_with_an_open_issue(organizer, reviewer, client):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    first, second, third = QAItem.objects.order_by("pk")[:3]
    QAItem.objects.filter(pk=first.pk).update(status="in_adjudication")
    QAItem.objects.filter(pk__in=[second.pk, third.pk]).update(status="held")
    Dispute.objects.create(item=second, raised_by=reviewer, category="other", text="The answer is outdated.")
    client.force_login(organizer)
    step = _step(client, "adjudication_waiting")
    # The held item without an open issue does not wait; the one with a dispute does, and the sentence says so.
    assert step.startswith("2 items wait for adjudication: 1 in adjudication and 1 held with an open dispute")


def test_only_items_in_adjudication_keep_the_short_sentence(organizer, client):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    QAItem.objects.filter(pk=QAItem.objects.order_by("pk").first().pk).update(status="in_adjudication")
    client.force_login(organizer)
    assert _step(client, "adjudication_waiting").startswith("1 item waits for adjudication.")
