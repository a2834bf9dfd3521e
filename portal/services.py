"""People and institutions: admitting, role assignment (used by the organizer page, admin actions and demo)."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction

from portal.audit import audit_record
from portal.errors import DomainError
from portal.models import Institution, User
from portal.roles import Role


def person_admit(
    *,
    email: str,
    name: str = "",
    institution: Institution | None,
    roles: list[str],
    password: str | None = None,
    by=None,
) -> User:
    """Create (or update) a person with the given roles. Without a password the person uses password reset."""
    unknown = set(roles) - {r.value for r in Role}
    if unknown:
        raise DomainError(f"unknown role(s): {', '.join(sorted(unknown))}")
    email = email.strip().lower()
    with transaction.atomic():
        user, created = User.objects.get_or_create(email=email)
        if name:
            first, _, last = name.partition(" ")
            user.first_name, user.last_name = first, last
        user.institution = institution
        if password:
            user.set_password(password)
        elif created:
            user.set_unusable_password()
        user.save()
        before = sorted(user.groups.values_list("name", flat=True))
        user.groups.set(_role_groups(roles))
        _ensure_verified_email(user)
        audit_record(
            actor=by,
            obj=user,
            action="person_admitted" if created else "person_updated",
            before={"roles": before},
            after={"roles": sorted(roles), "institution": str(institution or "")},
        )
    return user


def roles_set(*, user: User, roles: list[str], by=None) -> None:
    before = sorted(user.groups.values_list("name", flat=True))
    user.groups.set(_role_groups(roles))
    audit_record(actor=by, obj=user, action="roles_changed", before={"roles": before}, after={"roles": sorted(roles)})


def _role_groups(roles: list[str]) -> list[Group]:
    # The groups are seeded by a migration; get_or_create keeps this working after a test flush too.
    return [Group.objects.get_or_create(name=str(role))[0] for role in roles]


def _ensure_verified_email(user: User) -> None:
    from allauth.account.models import EmailAddress

    EmailAddress.objects.update_or_create(user=user, email=user.email, defaults={"verified": True, "primary": True})
