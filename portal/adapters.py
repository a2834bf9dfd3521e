from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings
from django.core.exceptions import PermissionDenied

from portal.clientip import client_ip
from portal.roles import person_may_use_portal


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

    def pre_login(self, request, user, **kwargs):
        # allauth's own check is is_active only; the backends refuse the person, but allauth then signs in the
        # person it stashed unless refused here. Same rule, same "account inactive" page.
        if user.is_active and not person_may_use_portal(user):
            from allauth.account.internal.stagekit import clear_login

            clear_login(request)
            return self.respond_user_inactive(request, user)
        return super().pre_login(request, user, **kwargs)
