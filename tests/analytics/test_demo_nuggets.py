"""The demo's nugget step: imported lists, most validated by demo experts, one settled dispute, one open, two
drafts; enough validated items among the demo study's for the nugget study; runs once."""

from __future__ import annotations

import pytest

from annotation.models import NuggetSet, QAItem
from annotation.services.imports import items_import
from demo.management.commands.load_demo import DEMO_USERS, FIXTURES
from demo.nuggets import LEFT_AS_DRAFTS, demo_nuggets
from portal.services import person_admit

pytestmark = pytest.mark.django_db


@pytest.fixture
def users():
    items_import(paths=[FIXTURES / "cliniqlink-sample"])
    made = {}
    for email, name, roles, password in DEMO_USERS:
        made[email] = person_admit(
            email=email, name=name, institution=None, roles=[str(r) for r in roles], password=password
        )
    return made


def test_demo_nuggets(users):
    line = demo_nuggets(users)
    assert "12 items imported" in line
    statuses = {}
    for nugget_set in NuggetSet.objects.select_related("item"):
        statuses.setdefault(nugget_set.status, set()).add(nugget_set.item.uid)
    assert statuses["draft"] == LEFT_AS_DRAFTS
    assert len(statuses["disputed"]) == 1
    study_types = ["short_answer", "short_inverse", "multi_hop"]
    validated_in_study = QAItem.objects.filter(qa_type__in=study_types, nugget_sets__status="validated").count()
    assert validated_in_study >= 8
    assert NuggetSet.objects.filter(origin="adjudication").count() == 0  # the adjudicator picked a version
    assert NuggetSet.objects.filter(status="validated", validated_by__email="adjudicator@demo.portal").count() == 1
    # Validators never validated what they imported; every validated list was validated by a demo expert.
    assert not NuggetSet.objects.filter(status="validated", validated_by__email="organizer@demo.portal").exists()
    assert demo_nuggets(users) == ""
