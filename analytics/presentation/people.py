"""How the analytics pages name people: organizers read a person's name (``str(user)``: full name, else e-mail, the
name the Reviewer-quality report and the vetting dashboard show), while what is stored and downloaded keeps the
pseudonym. The one place a pseudonym or a user id becomes a name on a page."""

from __future__ import annotations

from collections.abc import Iterable

from portal.models import User


def names_by_pseudonym(pseudonyms: Iterable[str]) -> dict[str, str]:
    """Pseudonym -> the person's name, for the pseudonyms that are people's (others, such as a judge's name, are
    left out). A pseudonym is a keyed digest of the user id, so it is found by computing every person's."""
    wanted = {p for p in pseudonyms if isinstance(p, str) and p.startswith("annotator-")}
    if not wanted:
        return {}
    found = {}
    for user in User.objects.only("pk", "first_name", "last_name", "email"):
        if user.pseudonym in wanted:
            found[user.pseudonym] = str(user)
    return found


def names_by_id(user_ids: Iterable[int]) -> dict[int, str]:
    """User id -> the person's name."""
    return {user.pk: str(user) for user in User.objects.filter(pk__in=set(user_ids))}


def person_name(pseudonym: str, names: dict[str, str] | None) -> str:
    """The name a page shows for ``pseudonym``: the person's name where ``names`` (from :func:`names_by_pseudonym`)
    knows it, the pseudonym otherwise (an export, or a person since deleted)."""
    return (names or {}).get(pseudonym, pseudonym)
