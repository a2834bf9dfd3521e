"""Who acted, as stored on a row: a saved user, else None."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser

from portal.actors import acting_user
from portal.models import User


def test_acting_user_is_the_saved_user_or_none():
    saved = User(pk=7, email="a@test.portal")
    assert acting_user(saved) is saved
    assert acting_user(None) is None
    assert acting_user(AnonymousUser()) is None
    assert acting_user(User(email="unsaved@test.portal")) is None
