from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings


class PortalAccountAdapter(DefaultAccountAdapter):
    """People are admitted by organizers; public sign-up only when PORTAL_OPEN_SIGNUP is on."""

    def is_open_for_signup(self, request):
        return settings.PORTAL_OPEN_SIGNUP
