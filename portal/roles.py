"""Role names and predicates, defined once and used by views, DRF permissions and services.

Roles are Django groups (seeded by a data migration). A user may hold several roles. Superusers act as
organizers. Predicates never look at an object's owner: who may act on which item is a service-layer rule.
"""

from __future__ import annotations

from enum import StrEnum

from django.contrib.auth import get_user_model
from django.db.models import Q


class Role(StrEnum):
    REVIEWER = "reviewer"
    ADJUDICATOR = "adjudicator"
    RANKER = "ranker"
    ORGANIZER = "organizer"


ROLE_DESCRIPTIONS = {
    Role.REVIEWER: "Medical student: primary and secondary review of QA items.",
    Role.ADJUDICATOR: "Senior reviewer: resolves disagreements and disputes.",
    Role.RANKER: "Physician: ranks anonymised model answers.",
    Role.ORGANIZER: "Imports, configures, monitors, freezes, exports and reports.",
}


def person_may_use_portal(user) -> bool:
    """The admission rule: an active account whose institution (if it has one) is admitted.

    Checked at sign-in and on every request, session and token (portal.backends, portal.authentication), and by
    every role check below, so a person whose institution loses admission is refused at once. Accounts without an
    institution (the first superuser, organizers' own accounts) are admitted by whoever created them.
    """
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return user.institution_id is None or user.institution.admitted


def user_roles(user) -> frozenset[str]:
    """The role names a user holds, cached on the user object for the request."""
    if not person_may_use_portal(user):
        return frozenset()
    cached = getattr(user, "_portal_roles", None)
    if cached is None:
        cached = remember_roles(user, user.groups.values_list("name", flat=True))
    return cached


def remember_roles(user, group_names) -> frozenset[str]:
    """Cache on ``user`` the roles given by its group names (for code that read them along with the user)."""
    names = set(group_names)
    if user.is_superuser:
        names.add(Role.ORGANIZER)
    if ranker_role_refusal(names, staff=user.is_staff):
        names.discard(Role.RANKER)  # an account made in a shell or the admin: see ranker_role_refusal
    user._portal_roles = frozenset(names & {r.value for r in Role})
    return user._portal_roles


RANKER_ROLE_REFUSED = (
    "A ranker cannot also be an organizer or have access to the Django admin: organizers and staff see which system "
    "wrote each answer (the systems' outputs, the exports with identities), so their rankings could not be blind. "
    "Give the ranker role to a separate account without organizer or admin access."
)


def ranker_role_refusal(roles, *, staff: bool = False) -> str:
    """Why ``roles`` (names; superusers hold organizer) cannot go together, or "" when they can: the ranker role
    with organizer, or on a staff account. The role services refuse such a change with this message, and
    :func:`remember_roles` drops the ranker role from such an account whatever its groups say, so a ranker is
    blinded on every door, accounts made in a shell included."""
    names = {str(role) for role in roles}
    if Role.RANKER.value in names and (Role.ORGANIZER.value in names or staff):
        return RANKER_ROLE_REFUSED
    return ""


def ranker_accounts():
    """Every account that may rank now (admitted, active, the ranker role and nothing it cannot go with)."""
    return (
        get_user_model()
        .objects.filter(groups__name=Role.RANKER.value, is_active=True, is_staff=False, is_superuser=False)
        .filter(Q(institution__isnull=True) | Q(institution__admitted=True))
        .exclude(groups__name=Role.ORGANIZER.value)
        .distinct()
    )


def has_role(user, *roles: Role | str) -> bool:
    """True if the user holds at least one of ``roles``."""
    held = user_roles(user)
    return any(str(role) in held for role in roles)


def can_review(user) -> bool:
    return has_role(user, Role.REVIEWER)


def can_adjudicate(user) -> bool:
    return has_role(user, Role.ADJUDICATOR)


def can_rank(user) -> bool:
    return has_role(user, Role.RANKER)


def can_organize(user) -> bool:
    return has_role(user, Role.ORGANIZER)


def can_follow_job(user, job) -> bool:
    """A job's progress (and a retry once it failed) is for the person who started it and for organizers."""
    return job.created_by_id == user.pk or can_organize(user) or user.is_superuser
