"""The API tokens page: a person lists, creates (key shown once) and revokes their own tokens; organizers who must
use MFA create them only from a session that gave the second factor."""

from __future__ import annotations

import pytest
from allauth.account.internal.flows.login import record_authentication
from allauth.mfa.models import Authenticator
from django.test import RequestFactory
from django.urls import reverse
from rest_framework.test import APIClient

from portal.models import ApiToken, AuditEntry

pytestmark = pytest.mark.django_db

URL = reverse("api_tokens")


def _create(client, name="my script"):
    return client.post(URL, {"create": "1", "name": name})


def test_a_person_creates_a_token_sees_the_key_once_and_it_works(client, reviewer):
    client.force_login(reviewer)
    response = _create(client)
    assert response.status_code == 200
    key = response.context["new_key"]
    assert key in response.content.decode()
    token = ApiToken.objects.get(user=reviewer)
    assert token.name == "my script" and token.key_hash == ApiToken.hash_of(key)
    assert AuditEntry.objects.filter(action="api_token_created", object_id=str(token.pk)).exists()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/review/progress/").status_code == 200
    listing = client.get(URL).content.decode()
    assert "my script" in listing and token.prefix in listing and key not in listing


def test_a_person_revokes_their_token_and_it_stops_working(client, reviewer):
    client.force_login(reviewer)
    key = _create(client).context["new_key"]
    token = ApiToken.objects.get(user=reviewer)
    assert client.post(URL, {"revoke": token.pk}).status_code == 302
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/review/progress/").status_code == 403


def test_nobody_sees_or_revokes_someone_elses_token(client, reviewer, make_user):
    other = make_user("reviewer")
    client.force_login(other)
    _create(client, name="other's script")
    token = ApiToken.objects.get(user=other)
    client.force_login(reviewer)
    assert "other&#x27;s script" not in client.get(URL).content.decode()
    assert client.post(URL, {"revoke": token.pk}).status_code == 404
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_a_token_needs_a_name(client, reviewer):
    client.force_login(reviewer)
    response = _create(client, name="  ")
    assert response.status_code == 400 and "Give the token a name" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_an_organizer_must_confirm_the_session_with_mfa_before_creating_a_token(client, organizer, settings):
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    totp = Authenticator.objects.create(user=organizer, type=Authenticator.Type.TOTP, data={"secret": "x"})
    client.force_login(organizer)  # a session that gave no second factor (e.g. TOTP enrolled within it)
    page = client.get(URL).content.decode()
    assert reverse("mfa_reauthenticate") in page
    response = _create(client)
    assert response.status_code == 400 and "authenticator app" in response.content.decode()
    assert not ApiToken.objects.exists()
    # Give the session an MFA record, as allauth does at sign-in or reauthentication with a code.
    request = RequestFactory().get("/")
    request.session = client.session
    record_authentication(request, organizer, "mfa", id=totp.pk, type="totp")
    request.session.save()
    response = _create(client)
    assert response.status_code == 200 and response.context["new_key"]
    assert ApiToken.objects.filter(user=organizer).count() == 1


def test_token_names_are_escaped(client, reviewer):
    client.force_login(reviewer)
    _create(client, name='<script>alert("t")</script>')
    page = client.get(URL).content.decode()
    assert '<script>alert("t")' not in page and "&lt;script&gt;" in page


def test_an_organizer_who_signed_in_with_password_and_code_creates_a_token(client, organizer, settings):
    """The whole path through allauth: the second factor given at sign-in is what the token page accepts."""
    from allauth.mfa.totp.internal.auth import (
        TOTP,
        format_hotp_value,
        generate_totp_secret,
        hotp_value,
        yield_hotp_counters_from_time,
    )
    from django.core.cache import cache

    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    cache.clear()
    secret = generate_totp_secret()
    TOTP.activate(organizer, secret)
    response = client.post(reverse("account_login"), {"login": organizer.email, "password": "pw-for-tests-123"})
    assert response["Location"] == reverse("mfa_authenticate")
    code = format_hotp_value(hotp_value(secret, next(yield_hotp_counters_from_time())))
    assert client.post(reverse("mfa_authenticate"), {"code": code}).status_code == 302
    response = _create(client)
    assert response.status_code == 200 and response.context["new_key"]
    token = ApiToken.objects.get(user=organizer)
    assert token.created_with_mfa
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {response.context['new_key']}")
    assert api.get("/api/items/").status_code == 200
    cache.clear()
