"""Large request bodies: an anonymous client cannot make a worker read more than PORTAL_ANONYMOUS_BODY_MAX_BYTES
(the sign-in pages need a few hundred bytes); the body is refused from its declared length, before anything reads it,
with a 413 that says why. Signed-in people (session or API token) keep the larger limits their imports need."""

from __future__ import annotations

import io
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from portal.api_tokens import api_token_create

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"


class _UnreadableBody(io.BytesIO):
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


def _huge_post(client: Client, path: str, content_type: str = FORM, **extra):
    """A POST declaring 50 MB of body that is never sent: only its Content-Length is looked at."""
    return client.post(path, b"", content_type=content_type, CONTENT_LENGTH=str(50 * 1024 * 1024), **extra)


@pytest.mark.parametrize("path", ["/accounts/login/", "/health/", "/api/review/next/", "/accounts/password/reset/"])
def test_an_anonymous_large_body_is_refused_before_it_is_read(client, path, monkeypatch):
    from django.core.handlers import wsgi

    real_init = wsgi.WSGIRequest.__init__

    def guarded(self, environ):
        real_init(self, environ)
        self._stream = _UnreadableBody()

    monkeypatch.setattr(wsgi.WSGIRequest, "__init__", guarded)
    response = _huge_post(client, path)
    assert response.status_code == 413
    text = response.content.decode()
    assert "too large" in text and "sign in" in text
    if path.startswith("/api/"):
        assert response.json()["code"] == "request_too_large"


def test_an_anonymous_body_over_the_limit_is_refused_and_one_under_it_is_read(client, settings):
    settings.PORTAL_ANONYMOUS_BODY_MAX_BYTES = 64 * 1024
    url = reverse("account_login")
    big = client.post(url, {"login": "x@example.org", "password": "p" * (80 * 1024)})
    assert big.status_code == 413
    small = client.post(url, {"login": "x@example.org", "password": "p" * 1024})
    assert small.status_code == 200 and "too large" not in small.content.decode()


def test_signed_in_people_keep_the_larger_limit(make_user, settings, client):
    settings.PORTAL_ANONYMOUS_BODY_MAX_BYTES = 64 * 1024
    person = make_user("reviewer")
    body = {"comment": "c" * (200 * 1024)}
    browser = Client()
    browser.force_login(person)
    assert browser.post(reverse("review_next"), body).status_code != 413
    _, key = api_token_create(user=person, name="script", mfa_verified=False)
    form = urlencode({"note": "n" * (200 * 1024)})
    response = client.post("/api/review/next/", form, content_type=FORM, HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code != 413
    # A token that does not authenticate is anonymous.
    forged = client.post("/api/review/next/", form, content_type=FORM, HTTP_AUTHORIZATION="Token forged")
    assert forged.status_code == 413
