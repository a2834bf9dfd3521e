"""Who must use two-factor authentication, and whether they do: one rule for pages, sessions and API tokens."""

from __future__ import annotations

from allauth.mfa.stages import AuthenticateStage
from django.conf import settings

from portal.roles import can_organize


def mfa_required(user) -> bool:
    """Organizers must enrol TOTP when PORTAL_REQUIRE_ORGANIZER_MFA is on (the production default)."""
    return settings.PORTAL_REQUIRE_ORGANIZER_MFA and can_organize(user)


def has_totp(user) -> bool:
    """Whether the person has enrolled TOTP (read once per request; the token authentication reads it with the
    person, see ``remember_totp``)."""
    cached = getattr(user, "_portal_has_totp", None)
    if cached is None:
        from allauth.mfa.models import Authenticator

        cached = remember_totp(user, Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists())
    return cached


def remember_totp(user, enrolled: bool) -> bool:
    user._portal_has_totp = bool(enrolled)
    return user._portal_has_totp


def mfa_missing(user) -> bool:
    """The person must have TOTP and has none: refused everywhere but the MFA set-up pages."""
    return mfa_required(user) and not has_totp(user)


def session_passed_mfa(request) -> bool:
    """Whether this session's person gave a second factor in this session (at sign-in or reauthentication)."""
    from allauth.account.authentication import get_authentication_records

    return any(record.get("method") == "mfa" for record in get_authentication_records(request, request.user))


class AuthenticateUnlessIdpVouchedStage(AuthenticateStage):
    """allauth's TOTP step at sign-in, except for a single sign-on whose identity provider vouched for its own second
    factor where the deployment trusts it (``portal.sso.idp_vouched_for_mfa``: ``OIDC_TRUSTS_MFA`` and ``amr``
    containing ``mfa``). That sign-in is recorded as one that gave a second factor, as a TOTP code would be, so
    :func:`session_passed_mfa` holds for the session."""

    def handle(self):
        from allauth.account.internal.flows.login import record_authentication

        from portal.sso import idp_vouched_for_mfa

        sociallogin = (self.login.signal_kwargs or {}).get("sociallogin")
        if self.login.user is not None and idp_vouched_for_mfa(sociallogin):
            record_authentication(self.request, self.login.user, "mfa", type="identity_provider")
            return None, True
        return super().handle()
