"""People and institutions: admitting, inviting, deactivating, role assignment (organizer page, admin, demo).

Organizers never set or see a password: a new person gets a set-password link by email (allauth's password reset,
so the link reaches only the person's own address), and every password that is set anywhere passes Django's
validators (AUTH_PASSWORD_VALIDATORS).
"""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest

from portal.audit import audit_record
from portal.errors import DomainError, NotAllowed
from portal.models import SPECIALTY_MAX_LENGTH, Institution, TrainingLevel, User
from portal.roles import Role, ranker_role_refusal
from portal.sso import sso_configs


def person_admit(
    *,
    email: str,
    name: str = "",
    institution: Institution | None,
    roles: list[str],
    password: str | None = None,
    by: User | None = None,
) -> User:
    """Create (or update) a person with the given roles.

    Without a password the person sets one from an invitation (``person_invite``); ``password`` is for commands
    and the demo, and must pass the password validators. ``by``: the organizer acting (None: a command).
    """
    unknown = set(roles) - {r.value for r in Role}
    if unknown:
        raise DomainError(f"unknown role(s): {', '.join(sorted(unknown))}")
    email = email.strip().lower()
    with transaction.atomic():
        user, created = User.objects.get_or_create(email=email)
        _check_roles_combination(user=user, roles=roles)
        if not created:
            _check_may_manage(by=by, user=user)
            _check_roles_change(by=by, user=user, roles=roles)
        if name:
            first, _, last = name.partition(" ")
            user.first_name, user.last_name = first, last
        user.institution = institution
        if password:
            password_check(password=password, user=user)
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


def person_update(
    *,
    user: User,
    name: str,
    institution: Institution | None,
    roles: list[str],
    by: User,
    training_level: str | None = None,
    specialty: str | None = None,
) -> User:
    """Change a person's name, institution and roles (the row's Edit on the people page), and their training level
    and specialty when given (``None``: left as they are), audited with what was there before. The same rules as
    admitting: only a superuser changes a superuser, nobody takes the organizer role from themselves, and the last
    active organizer keeps it."""
    unknown = set(roles) - {r.value for r in Role}
    if unknown:
        raise DomainError(f"unknown role(s): {', '.join(sorted(unknown))}")
    training = _training_check(training_level, specialty)
    with transaction.atomic():
        user = User.objects.select_for_update().get(pk=user.pk)
        _check_may_manage(by=by, user=user)
        _check_roles_combination(user=user, roles=roles)
        _check_roles_change(by=by, user=user, roles=roles)
        before = {
            "name": user.get_full_name(),
            "institution": str(user.institution or ""),
            "roles": sorted(user.groups.values_list("name", flat=True)),
            **{field: getattr(user, field) for field in training},
        }
        first, _, last = name.strip().partition(" ")
        user.first_name, user.last_name = first, last.strip()
        user.institution = institution
        for field, value in training.items():
            setattr(user, field, value)
        user.save(update_fields=["first_name", "last_name", "institution", *training])
        user.groups.set(_role_groups(roles))
        after = {
            "name": user.get_full_name(),
            "institution": str(institution or ""),
            "roles": sorted(roles),
            **training,
        }
        if after != before:
            audit_record(actor=by, obj=user, action="person_updated", before=before, after=after)
    return user


def person_roles_from_idp(*, user: User, roles: Collection[str], created: bool = False) -> User:
    """Set a person's roles to those their identity provider's groups grant (``portal.sso``, at every SSO sign-in),
    so a group removed at the IdP takes its role away at the next sign-in. Roles that cannot go together are refused
    (``DomainError``) before anything changes. ``created``: the account was just made by the sign-in.

    The IdP is the authority here, so the organizers' own guards (nobody takes their own organizer role, the last
    organizer keeps it) do not apply: a superuser still acts as organizer. Audited with no actor, noted as coming
    from the identity provider, when the roles changed or the account is new."""
    wanted = sorted(set(roles))
    unknown = set(wanted) - {r.value for r in Role}
    if unknown:
        raise DomainError(f"unknown role(s): {', '.join(sorted(unknown))}")
    with transaction.atomic():
        person = User.objects.select_for_update().get(pk=user.pk)
        _check_roles_combination(user=person, roles=wanted)
        before = sorted(person.groups.values_list("name", flat=True))
        if before == wanted and not created:
            return person
        person.groups.set(_role_groups(wanted))
        audit_record(
            actor=None,
            obj=person,
            action="person_admitted" if created else "person_updated",
            before=None if created else {"roles": before},
            after={"roles": wanted, **({"institution": str(person.institution or "")} if created else {})},
            note="from the identity provider",
        )
    return person


def _training_check(training_level: str | None, specialty: str | None) -> dict[str, str]:
    """The training fields to write (those given), checked: a known level or none, a short specialty."""
    training: dict[str, str] = {}
    if training_level is not None:
        if training_level not in ("", *TrainingLevel.values):
            raise DomainError(f"unknown training level: {training_level}", code="invalid_training_level")
        training["training_level"] = training_level
    if specialty is not None:
        specialty = " ".join(specialty.split())
        if len(specialty) > SPECIALTY_MAX_LENGTH:
            raise DomainError(f"the specialty is at most {SPECIALTY_MAX_LENGTH} characters", code="invalid_specialty")
        training["specialty"] = specialty
    return training


def password_check(*, password: str, user: User) -> None:
    """Django's password validators, as a DomainError listing what is wrong."""
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise DomainError("Password refused: " + " ".join(exc.messages)) from exc


def person_invite(*, user: User, by: User, request: HttpRequest) -> None:
    """Email the person a link to set their own password (allauth's password reset: one-time, expiring).

    The link goes only to the person's address, never to the organizer: an organizer who could see it could take
    over the account. Locally the console email backend prints it.
    """
    from allauth.account.forms import ResetPasswordForm

    _check_may_manage(by=by, user=user)
    if not user.is_active:
        raise DomainError(f"{user.email} is deactivated: reactivate the account before inviting.")
    form = ResetPasswordForm(data={"email": user.email})
    if not form.is_valid():
        raise DomainError(f"{user.email}: " + " ".join(m for ms in form.errors.values() for m in ms))
    form.save(request)
    audit_record(actor=by, obj=user, action="person_invited")


def person_set_active(*, user: User, active: bool, by: User) -> None:
    """Deactivate (sessions and API tokens stop at once, nothing is deleted) or reactivate a person."""
    _check_may_manage(by=by, user=user)
    if not active and user.pk == getattr(by, "pk", None):
        raise NotAllowed("You cannot deactivate your own account.")
    if not active:
        _check_not_last_organizer(user, "deactivate")
    _switch(obj=user, field="is_active", value=active, by=by, actions=("person_reactivated", "person_deactivated"))


def institution_set_admitted(*, institution: Institution, admitted: bool, by: User) -> None:
    """Withdraw or restore an institution's admission: its members' sign-in, sessions and tokens follow at once
    (``portal.roles.person_may_use_portal``)."""
    if not admitted and getattr(by, "institution_id", None) == institution.pk:
        raise NotAllowed("You cannot withdraw the admission of your own institution.")
    _switch(
        obj=institution,
        field="admitted",
        value=admitted,
        by=by,
        actions=("institution_admitted", "institution_admission_withdrawn"),
    )


def institution_set_password_login(*, institution: Institution, password_login: bool, by: User) -> None:
    """Switch passwords off for an institution's members (they then sign in through single sign-on only, see
    ``portal.adapters.passwords_off_for``), or on again. Their open sessions and API tokens keep working: neither is
    a password sign-in. Refused while single sign-on is not set up: its members would have no way in at all."""
    if not password_login and not sso_configs():
        raise DomainError(
            f"Single sign-on is not set up (OIDC_ISSUER or SAML_IDP_*): switching passwords off would leave the "
            f"members of {institution.name} no way to sign in."
        )
    _switch(
        obj=institution,
        field="password_login",
        value=password_login,
        by=by,
        actions=("institution_passwords_on", "institution_passwords_off"),
    )


def _switch(*, obj: User | Institution, field: str, value: bool, by: User, actions: tuple[str, str]) -> None:
    """Set a yes/no field and audit the change (``actions``: the entry's name when switched on, when off);
    nothing is written when it already has that value."""
    if getattr(obj, field) == value:
        return
    setattr(obj, field, value)
    obj.save(update_fields=[field])
    key = field.removeprefix("is_")
    audit_record(actor=by, obj=obj, action=actions[0 if value else 1], before={key: not value}, after={key: value})


def _check_may_manage(*, by: User | None, user: User) -> None:
    """Organizers manage people; only a superuser changes a superuser's account (None: a command, trusted)."""
    if by is not None and user.is_superuser and not by.is_superuser:
        raise NotAllowed(f"{user.email} is a superuser: only a superuser changes that account.")


def _check_roles_change(*, by: User | None, user: User, roles: list[str]) -> None:
    """Nobody takes the organizer role from themselves, and the last active organizer keeps it: a portal without
    an organizer can admit nobody and freeze nothing (a superuser would have to repair it in the admin)."""
    if str(Role.ORGANIZER) in roles:
        return
    if user.pk == getattr(by, "pk", None) and not user.is_superuser:
        raise NotAllowed("You cannot take the organizer role from yourself; ask another organizer.")
    _check_not_last_organizer(user, "take the organizer role from")


def _check_roles_combination(*, user: User, roles: list[str]) -> None:
    """Roles that cannot go together (``portal.roles.ranker_role_refusal``: a ranker is never an organizer, staff or
    superuser) are refused with the reason, before anything changes."""
    held = [*roles, Role.ORGANIZER.value] if user.is_superuser else roles
    refusal = ranker_role_refusal(held, staff=user.is_staff)
    if refusal:
        raise DomainError(f"{user.email}: {refusal}", code="roles_cannot_combine")


def _check_not_last_organizer(user: User, doing: str) -> None:
    organizers = User.objects.filter(groups__name=str(Role.ORGANIZER), is_active=True)
    if user.is_active and organizers.filter(pk=user.pk).exists() and not organizers.exclude(pk=user.pk).exists():
        raise NotAllowed(
            f"You cannot {doing} {user.email}: they are the last active organizer. Make someone else an "
            "organizer first."
        )


def _role_groups(roles: list[str]) -> list[Group]:
    # The groups are seeded by a migration; get_or_create keeps this working after a test flush too.
    return [Group.objects.get_or_create(name=str(role))[0] for role in roles]


def _ensure_verified_email(user: User) -> None:
    from allauth.account.models import EmailAddress

    EmailAddress.objects.update_or_create(user=user, email=user.email, defaults={"verified": True, "primary": True})
