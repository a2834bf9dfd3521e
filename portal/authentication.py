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

from portal.bulk import columns_sql, from_row, row_fields
from portal.mfa import mfa_missing, mfa_required, remember_totp
from portal.models import ApiToken, Institution
from portal.prepared import prepared_cursor
from portal.roles import person_may_use_portal, remember_roles

# The statement's columns, in its order: the person's, the token's (but its user), the institution's.
_USER_FIELDS = row_fields(get_user_model())
_TOKEN_FIELDS = row_fields(ApiToken, leave_out=["user"])
_INSTITUTION_FIELDS = row_fields(Institution)


@cache
def _sql() -> str:
    from allauth.mfa.models import Authenticator

    user_model = get_user_model()
    user, token = user_model._meta.db_table, ApiToken._meta.db_table
    groups = user_model.groups.through._meta.db_table
    columns = columns_sql(_USER_FIELDS, "u")
    token_columns = columns_sql(_TOKEN_FIELDS, "t")
    institution = columns_sql(_INSTITUTION_FIELDS, "i")
    return f"""
        SELECT {columns}, {token_columns}, {institution},
               ARRAY(SELECT g.name FROM {groups} ug JOIN {Group._meta.db_table} g ON g.id = ug.group_id
                     WHERE ug.user_id = u.id) AS role_names,
               EXISTS(SELECT 1 FROM {Authenticator._meta.db_table} a
                      WHERE a.user_id = u.id AND a.type = '{Authenticator.Type.TOTP.value}') AS has_totp
        FROM {token} t JOIN {user} u ON u.id = t.user_id
             LEFT JOIN {Institution._meta.db_table} i ON i.id = u.institution_id
        WHERE t.key_hash = %s"""


def _read(cursor, key_hash: str):
    """The statement's one row as (user, token, institution, role names, has TOTP), or None for an unknown token.

    A plain cursor rather than ``User.objects.raw``: every API call authenticates, and the raw queryset maps its
    columns onto the model afresh on every call, which cost more than the statement itself."""
    cursor.execute(_sql(), [key_hash])
    row = cursor.fetchone()
    if row is None:
        return None
    user_end = len(_USER_FIELDS)
    token_end = user_end + len(_TOKEN_FIELDS)
    institution_end = token_end + len(_INSTITUTION_FIELDS)
    return (
        from_row(get_user_model(), _USER_FIELDS, row[:user_end]),
        from_row(ApiToken, _TOKEN_FIELDS, row[user_end:token_end]),
        from_row(Institution, _INSTITUTION_FIELDS, row[token_end:institution_end]),
        *row[institution_end:],  # the role names, whether the person has TOTP
    )


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, DRF's header rules and messages, one query, the portal's access rules."""

    def authenticate_credentials(self, key):
        with prepared_cursor() as cursor:  # every API request runs it: planned once per connection
            found = _read(cursor, ApiToken.hash_of(key))
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, token, institution, role_names, has_totp = found
        token.user_id, token.user = user.pk, user
        if user.institution_id is not None:
            user.institution = institution
        remember_roles(user, role_names)
        remember_totp(user, has_totp)
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
