"""API tokens: the one home of their rules (creation, expiry, revocation, who may use one).

- A person creates and revokes their own tokens on the API tokens page; the key is shown once and only its
  SHA-256 is stored (``ApiToken``).
- Someone who must use two-factor authentication (``portal.mfa.mfa_required``) creates tokens only from a session
  that gave the second factor, so a stolen password alone never yields an API key.
- A token expires ``PORTAL_API_TOKEN_DAYS`` after creation, and stops working at once when its person is
  deactivated, loses admission (``person_may_use_portal``) or, while required to, no longer has TOTP enrolled
  (checked on every call by ``portal.authentication``). A token acts for such a person only if it was created
  with the second factor: a reviewer's old token does not become an organizer's key on promotion, and tokens
  from before this rule (DRF's) keep working for everyone else.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from portal.audit import audit_record
from portal.errors import DomainError, NotAllowed
from portal.mfa import mfa_required
from portal.models import ApiToken, User


def api_token_create(*, user: User, name: str, mfa_verified: bool) -> tuple[ApiToken, str]:
    """Create a token for ``user``; returns it with its key, which is not stored and cannot be shown again.

    ``mfa_verified``: the request creating it comes from a session that gave a second factor.
    """
    name = name.strip()
    if not name:
        raise DomainError("Give the token a name (what will use it), to recognise it in the list.")
    limit = ApiToken._meta.get_field("name").max_length
    if limit is not None and len(name) > limit:
        raise DomainError("The token's name is too long (100 characters at most).")
    if mfa_required(user) and not mfa_verified:
        raise NotAllowed(
            "Organizers create API tokens only from a session confirmed with their authenticator app: "
            "confirm it, then create the token.",
            code="mfa_required",
        )
    key = secrets.token_urlsafe(32)
    now = timezone.now()
    token = ApiToken.objects.create(
        user=user,
        name=name,
        key_hash=ApiToken.hash_of(key),
        prefix=key[:8],
        created_at=now,
        expires_at=now + timedelta(days=settings.PORTAL_API_TOKEN_DAYS),
        created_with_mfa=mfa_verified,
    )
    audit_record(actor=user, obj=token, action="api_token_created", after={"name": name, "prefix": token.prefix})
    return token, key


def api_token_revoke(*, token: ApiToken, by: User) -> None:
    """Delete a token; only its owner revokes it (deactivating a person stops all of theirs)."""
    if token.user_id != by.pk:
        raise NotAllowed("This token belongs to someone else.")
    audit_record(actor=by, obj=token, action="api_token_revoked", before={"name": token.name, "prefix": token.prefix})
    token.delete()
