"""Organizers must enrol TOTP before using the portal when PORTAL_REQUIRE_ORGANIZER_MFA is on."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import redirect
from django.urls import reverse

from portal.roles import can_organize

_EXEMPT_PREFIXES = ("/accounts/", "/static/", "/health/")


class OrganizerMfaMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (
            settings.PORTAL_REQUIRE_ORGANIZER_MFA
            and request.user.is_authenticated
            and not request.path.startswith(_EXEMPT_PREFIXES)
            and can_organize(request.user)
            and not _has_totp(request.user)
        ):
            return redirect(reverse("mfa_activate_totp"))
        return self.get_response(request)


def _has_totp(user) -> bool:
    from allauth.mfa.models import Authenticator

    return Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists()
