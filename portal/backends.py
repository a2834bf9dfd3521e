"""Authentication backends that apply the admission rule (``portal.roles.person_may_use_portal``).

Django asks ``user_can_authenticate`` at sign-in and ``get_user`` on every request of a session, so a person who is
deactivated or whose institution loses admission cannot sign in, and their open sessions stop working on the next
request. allauth shows its "account inactive" page when the password was right but the person is refused.
"""

from __future__ import annotations

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth import backends

from portal.roles import person_may_use_portal


class _AdmissionMixin:
    def user_can_authenticate(self, user) -> bool:
        return person_may_use_portal(user)

    def get_user(self, user_id):
        from portal.models import User

        # The institution comes with the person: the admission check on every request costs no extra query.
        user = User._default_manager.select_related("institution").filter(pk=user_id).first()
        return user if user is not None and self.user_can_authenticate(user) else None


class ModelBackend(_AdmissionMixin, backends.ModelBackend):
    pass


class AllauthBackend(_AdmissionMixin, AuthenticationBackend):
    pass
