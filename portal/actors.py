"""Who acted, as stored on a row (``created_by``, an audit entry's actor)."""

from __future__ import annotations

from typing import Any


def acting_user(user: Any):
    """``user`` when it is a saved user; None for none at all (the command line, a task) and for an anonymous
    visitor (no primary key), so a row never points at a user that is not in the database."""
    return user if getattr(user, "pk", None) else None
