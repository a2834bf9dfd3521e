"""API token authentication that loads the person, their roles and what the access rules need in one statement.

DRF's own ``TokenAuthentication`` reads the token with its user, and the role check then reads the user's groups:
two round trips and two ORM compilations on every API call. Here the token, the person, their institution (the
admission rule), their roles and whether they have TOTP (the MFA rule) come from one hand-written statement.
The rules themselves live in portal.api_tokens (creation, expiry), portal.roles and portal.mfa.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from portal.mfa import mfa_missing, mfa_required, remember_totp
from portal.models import ApiToken, Institution
from portal.roles import person_may_use_portal, remember_roles

_TOKEN_FIELDS = [f for f in ApiToken._meta.concrete_fields if f.attname != "user_id"]


@cache
def _sql() -> str:
    from allauth.mfa.models import Authenticator

    user_model = get_user_model()
    user, token = user_model._meta.db_table, ApiToken._meta.db_table
    groups = user_model.groups.through._meta.db_table
    columns = ", ".join(f"u.{f.column}" for f in user_model._meta.concrete_fields)
    token_columns = ", ".join(f"t.{f.column} AS token_{f.column}" for f in _TOKEN_FIELDS)
    institution = ", ".join(f"i.{f.column} AS inst_{f.column}" for f in Institution._meta.concrete_fields)
    return f"""
        SELECT {columns}, {token_columns}, {institution},
               ARRAY(SELECT g.name FROM {groups} ug JOIN {Group._meta.db_table} g ON g.id = ug.group_id
                     WHERE ug.user_id = u.id) AS role_names,
               EXISTS(SELECT 1 FROM {Authenticator._meta.db_table} a
                      WHERE a.user_id = u.id AND a.type = '{Authenticator.Type.TOTP.value}') AS has_totp
        FROM {token} t JOIN {user} u ON u.id = t.user_id
             LEFT JOIN {Institution._meta.db_table} i ON i.id = u.institution_id
        WHERE t.key_hash = %s"""


def _take(user, model, prefix: str, fields):
    """The ``model`` instance read along with ``user`` under column aliases starting with ``prefix``."""
    values = [user.__dict__.pop(f"{prefix}{f.column}") for f in fields]
    return model.from_db("default", [f.attname for f in fields], values)


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, DRF's header rules and messages, one query, the portal's access rules."""

    def authenticate_credentials(self, key):
        user = next(iter(get_user_model().objects.raw(_sql(), [ApiToken.hash_of(key)])), None)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = _take(user, ApiToken, "token_", _TOKEN_FIELDS)
        token.user_id, token.user = user.pk, user
        institution = _take(user, Institution, "inst_", Institution._meta.concrete_fields)
        if user.institution_id is not None:
            user.institution = institution
        remember_roles(user, user.__dict__.pop("role_names"))
        remember_totp(user, user.__dict__.pop("has_totp"))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if not person_may_use_portal(user):
            raise exceptions.AuthenticationFailed(_("This person's institution is not admitted to the portal."))
        if token.expired:
            raise exceptions.AuthenticationFailed(_("Token expired: create a new one on the API tokens page."))
        if mfa_missing(user):
            raise exceptions.AuthenticationFailed(
                _("Organizers must enrol an authenticator app before their API tokens work again.")
            )
        if mfa_required(user) and not token.created_with_mfa:
            raise exceptions.AuthenticationFailed(
                _(
                    "This token was created without your authenticator app, which organizers' tokens need: "
                    "create a new one on the API tokens page."
                )
            )
        return user, token
