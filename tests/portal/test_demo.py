"""The demo data loads once and again without duplicating anything, with a user for every role."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from annotation.models import QAItem
from portal.models import User
from portal.roles import Role
from ranking.models import Study, SystemOutput

pytestmark = pytest.mark.django_db


def test_load_demo_is_idempotent_and_covers_every_role(capsys):
    call_command("load_demo")
    first = capsys.readouterr().out
    counts = (QAItem.objects.count(), User.objects.count(), SystemOutput.objects.count(), Study.objects.count())
    call_command("load_demo")
    assert (QAItem.objects.count(), User.objects.count(), SystemOutput.objects.count(), Study.objects.count()) == counts
    assert counts[0] == 38 and counts[3] == 1
    for role in Role:
        assert User.objects.filter(groups__name=role.value).exists(), role
    assert "freeze-and-export-25" in first
    assert User.objects.get(email="organizer@demo.portal").check_password("freeze-and-export-25")
