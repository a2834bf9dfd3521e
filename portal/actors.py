"""Who acted, as stored on a row (``created_by``, an audit entry's actor)."""

from __future__ import annotations

from portal.models import User


def acting_user(user: object) -> User | None:
    """``user`` when it is a saved user; None for none at all (the command line, a task) and for an anonymous
    visitor (not a saved user), so a row never points at a user that is not in the database."""
    return user if isinstance(user, User) and user.pk else None
