"""Sign-ins into the audit trail: every one (how, from where) and every refused one (connected in PortalConfig.ready).

Refusals of the single sign-on are recorded where they are decided (``portal.sso``); these receivers see the
password form and whatever else goes through ``django.contrib.auth.authenticate``.
"""

from __future__ import annotations

from allauth.account.signals import user_logged_in
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

from portal.audit import audit_access

# AuditEntry.object_id's length: the address tried is kept whole in the entry's ``after``.
_OBJECT_ID_MAX = 80


@receiver(user_logged_in, dispatch_uid="portal_audit_login")
def audit_login(sender, request, user, **kwargs) -> None:
    """``login``: detail ``sso`` when allauth signed the person in through a provider (it then passes
    ``sociallogin``), ``password`` otherwise; the provider goes with an SSO entry."""
    sociallogin = kwargs.get("sociallogin")
    if sociallogin is None:
        audit_access(action="login", actor=user, obj=user, detail="password", request=request)
        return
    provider = getattr(getattr(sociallogin, "account", None), "provider", "") or ""
    audit_access(action="login", actor=user, obj=user, detail="sso", request=request, extra={"provider": provider})


@receiver(user_login_failed, dispatch_uid="portal_audit_login_refused")
def audit_login_refused(sender, credentials, request=None, **kwargs) -> None:
    """``login_refused`` naming the address tried, never the password (Django has already masked it in
    ``credentials``; only the address is read). No actor: nobody was signed in."""
    tried = _text(credentials.get("email") or credentials.get("username") or credentials.get("login") or "")
    audit_access(
        action="login_refused",
        actor=None,
        obj=("sign-in", tried[:_OBJECT_ID_MAX]),
        detail="password",
        request=request,
        extra={"email": tried},
    )


def _text(value: object) -> str:
    # PostgreSQL stores no NUL character in text or jsonb: a hostile form value must not turn a refusal into a 500.
    return str(value).replace("\x00", "")
