from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings
from django.core.exceptions import PermissionDenied

from portal.clientip import client_ip


class PortalAccountAdapter(DefaultAccountAdapter):
    """People are admitted by organizers; public sign-up only when PORTAL_OPEN_SIGNUP is on."""

    def is_open_for_signup(self, request):
        return settings.PORTAL_OPEN_SIGNUP

    def get_client_ip(self, request):
        # allauth's rate limits (login throttling) key on this: the trusted-proxy rule of portal.clientip.
        ip = client_ip(request)
        if not ip:
            raise PermissionDenied("Unable to determine client IP address")
        return ip
