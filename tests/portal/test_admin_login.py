"""The Django admin has no login of its own: it goes through the portal's login (MFA, throttling, admission)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from allauth.mfa.models import Authenticator
from django.core.cache import cache
from django.urls import reverse

from portal.models import User

pytestmark = pytest.mark.django_db

PASSWORD = "a-superuser-pass-9481"


@pytest.fixture
def superuser():
    cache.clear()
    user = User.objects.create_superuser("root@test.portal", PASSWORD)
    Authenticator.objects.create(user=user, type=Authenticator.Type.TOTP, data={"secret": "x"})
    yield user
    cache.clear()


def test_admin_login_posting_the_password_alone_does_not_sign_in(client, superuser):
    response = client.post(
        reverse("admin:login"), {"username": superuser.email, "password": PASSWORD, "next": "/admin/"}
    )
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302


def test_admin_login_sends_people_to_the_portal_login_and_back(client, superuser):
    response = client.get(reverse("admin:login") + "?next=/admin/portal/user/")
    assert response.status_code == 302
    assert response["Location"] == reverse("account_login") + "?next=" + quote("/admin/portal/user/", safe="")
    # The portal's login asks the TOTP-enrolled superuser for a code before signing in.
    response = client.post(reverse("account_login"), {"login": superuser.email, "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == reverse("mfa_authenticate")
    assert client.get("/admin/").status_code == 302


def test_a_signed_in_person_who_is_not_staff_is_refused_by_the_admin_login(client, organizer):
    client.force_login(organizer)
    assert client.get(reverse("admin:login")).status_code == 403


def test_throttling_applies_to_admin_sign_in(client, superuser):
    for _ in range(6):
        client.post(reverse("account_login"), {"login": superuser.email, "password": "wrong"})
    response = client.post(reverse("account_login"), {"login": superuser.email, "password": PASSWORD})
    assert "Too many failed login attempts" in response.content.decode()
    assert client.post(reverse("admin:login"), {"username": superuser.email, "password": PASSWORD}).status_code == 302
    assert client.get("/admin/").status_code == 302
