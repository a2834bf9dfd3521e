"""Sign-in: email + password through allauth, throttling of failed logins, organizer MFA, admitting people."""

from __future__ import annotations

import pytest
from allauth.mfa.models import Authenticator
from django.core.cache import cache
from django.urls import reverse

from portal.models import Institution, User

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=False)
def clean_cache():
    cache.clear()
    yield
    cache.clear()


def test_login_with_email_and_password(client, make_user, clean_cache):
    user = make_user("reviewer")
    response = client.post(reverse("account_login"), {"login": user.email, "password": "pw-for-tests-123"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_repeated_failed_logins_are_throttled(client, make_user, clean_cache):
    user = make_user("reviewer")
    bodies = [
        client.post(reverse("account_login"), {"login": user.email, "password": "wrong"}).content.decode()
        for _ in range(6)
    ]
    assert "Too many failed login attempts" not in bodies[0]
    assert "Too many failed login attempts" in bodies[-1]
    # While throttled, even the right password does not sign in.
    response = client.post(reverse("account_login"), {"login": user.email, "password": "pw-for-tests-123"})
    assert response.status_code == 200 and "Too many failed login attempts" in response.content.decode()
    assert client.get("/").status_code == 302


def test_public_signup_is_closed_by_default(client, clean_cache):
    response = client.post(
        reverse("account_signup"),
        {"email": "new@x.org", "password1": "A-long-pass-123", "password2": "A-long-pass-123"},
    )
    assert not User.objects.filter(email="new@x.org").exists()
    assert response.status_code in (200, 403)


def test_organizer_without_totp_is_sent_to_mfa_setup_when_required(client, organizer, settings):
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    client.force_login(organizer)
    response = client.get("/items/")
    assert response.status_code == 302 and response["Location"] == reverse("mfa_activate_totp")
    Authenticator.objects.create(user=organizer, type=Authenticator.Type.TOTP, data={"secret": "x"})
    assert client.get("/items/").status_code == 200


def test_reviewer_is_not_asked_for_mfa(client, reviewer, settings):
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    client.force_login(reviewer)
    assert client.get("/").status_code == 200


def test_organizer_admits_an_institution_and_a_person_with_roles(organizer_client):
    organizer_client.post(reverse("people"), {"add_institution": "1", "name": "St. Elsewhere", "country": "UK"})
    institution = Institution.objects.get(name="St. Elsewhere")
    response = organizer_client.post(
        reverse("people"),
        {
            "email": "Dr.Who@Example.org",
            "name": "Doc Who",
            "institution": institution.pk,
            "roles": ["ranker", "reviewer"],
        },
    )
    assert response.status_code == 302
    person = User.objects.get(email="dr.who@example.org")
    assert person.institution == institution
    assert set(person.groups.values_list("name", flat=True)) == {"ranker", "reviewer"}
    assert not person.has_usable_password()
