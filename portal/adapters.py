import hashlib

from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied

from portal.clientip import client_ip
from portal.forms import person_email_field
from portal.roles import person_may_use_portal


class PortalAccountAdapter(DefaultAccountAdapter):
    """People are admitted by organizers; public sign-up only when PORTAL_OPEN_SIGNUP is on."""

    error_messages = {
        **DefaultAccountAdapter.error_messages,
        "too_many_login_attempts": (
            "Too many failed login attempts. Try again in a few minutes, or unlock your account at once: "
            "“Forgot your password?” e-mails you a link, and setting your password with it unlocks the account."
        ),
    }

    def is_open_for_signup(self, request):
        return settings.PORTAL_OPEN_SIGNUP

    def clean_email(self, email):
        # allauth's address forms (add an address, sign up) save what passes here: the people page's rule.
        return super().clean_email(person_email_field().clean(email))

    def get_client_ip(self, request):
        # allauth's rate limits (login throttling) key on this: the trusted-proxy rule of portal.clientip.
        ip = client_ip(request)
        if not ip:
            raise PermissionDenied("Unable to determine client IP address")
        return ip

    # Login throttling (ACCOUNT_RATE_LIMITS["login_failed"]): allauth counts an account's failed sign-ins under this
    # key ("5/5m/key") and every failure from an address under the address ("10/m/ip"). Keyed by account alone, anyone
    # who knows an e-mail address could keep its owner locked out; keyed by account *and* client address, a stranger
    # locks the account only at the stranger's address, while the per-address limit still stops guessing across
    # accounts. The account's unlock generation, changed by a password reset (the e-mailed link, which only the
    # owner receives), starts the count afresh at every address: the unlock for an owner who shares an address (a
    # hospital's NAT) with whoever locked it.
    def _get_login_attempts_cache_key(self, request, **credentials):
        account = super()._get_login_attempts_cache_key(request, **credentials)
        generation = cache.get(_unlock_generation_key(account), 0)
        return f"{account}:{generation}:{self.get_client_ip(request)}"

    def _delete_login_attempts_cached_email(self, request, **credentials):
        # allauth calls this for each of the person's addresses once a password was set from a reset link.
        super()._delete_login_attempts_cached_email(request, **credentials)
        account = super()._get_login_attempts_cache_key(request, **credentials)
        key = _unlock_generation_key(account)
        cache.set(key, cache.get(key, 0) + 1, timeout=None)  # one small entry per account that was ever reset

    def pre_login(self, request, user, **kwargs):
        # allauth's own check is is_active only; the backends refuse the person, but allauth then signs in the
        # person it stashed unless refused here. Same rule, same "account inactive" page.
        if user.is_active and not person_may_use_portal(user):
            from allauth.account.internal.stagekit import clear_login

            clear_login(request)
            return self.respond_user_inactive(request, user)
        return super().pre_login(request, user, **kwargs)


def _unlock_generation_key(account: str) -> str:
    return "portal:login-unlock:" + hashlib.sha256(account.encode()).hexdigest()
