"""Sessions on shared hospital computers: a session idle for PORTAL_SESSION_IDLE_MINUTES is signed out (the login
page says why), "remember me" keeps nobody signed in beyond that in production, and "Sign out everywhere" ends every
session of the person on every device and nothing else (API tokens, TOTP)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import SESSION_KEY
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from portal.api_tokens import api_token_create
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pw-for-tests-123"


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()  # the login throttling's counts
    yield
    cache.clear()


@pytest.fixture
def clock(monkeypatch):
    """Moves Django's clock (``timezone.now``) forward: ``clock(hours=9)``."""
    real_now = timezone.now
    offset = {"by": timedelta(0)}
    monkeypatch.setattr(timezone, "now", lambda: real_now() + offset["by"])

    def advance(**delta):
        offset["by"] += timedelta(**delta)

    return advance


def _signed_in(person) -> Client:
    """A browser signed in through the real login form."""
    browser = Client()
    response = browser.post(reverse("account_login"), {"login": person.email, "password": PASSWORD})
    assert response.status_code == 302, response.content.decode()[:500]
    return browser


def test_a_session_idle_for_the_limit_is_signed_out_and_the_login_page_says_why(make_user, clock, settings):
    settings.PORTAL_SESSION_IDLE_MINUTES = 8 * 60
    browser = _signed_in(make_user("reviewer"))
    assert browser.get("/").status_code == 200
    clock(hours=8, minutes=1)
    response = browser.get("/review/", follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("account_login"))
    page = response.content.decode()
    assert "signed out after 8 hours without activity" in page
    assert SESSION_KEY not in browser.session
    assert browser.get("/").status_code == 302  # and it stays signed out


def test_activity_keeps_the_session_and_the_limit_counts_from_the_last_request(make_user, clock, settings):
    settings.PORTAL_SESSION_IDLE_MINUTES = 8 * 60
    browser = _signed_in(make_user("reviewer"))
    for _ in range(3):  # 21 hours in all, never 8 without a request
        clock(hours=7)
        assert browser.get("/").status_code == 200
    clock(hours=8, minutes=1)
    assert browser.get("/").status_code == 302


def test_a_page_polling_by_itself_does_not_keep_the_session_alive(make_user, clock, settings, organizer):
    """The vetting dashboard and job pages refresh themselves (htmx, every few seconds): left open on a shared
    computer they must not keep the person signed in; once signed out, the page itself goes to the login page."""
    settings.PORTAL_SESSION_IDLE_MINUTES = 60
    browser = _signed_in(organizer)
    assert browser.get(reverse("vetting_dashboard")).status_code == 200
    poll = {"HTTP_HX_REQUEST": "true"}
    for _ in range(4):  # a poll every 14 minutes: the page stays signed in, and the polls count as no activity
        clock(minutes=14)
        response = browser.get(reverse("vetting_progress"), **poll)
        assert response.status_code == 200 and "HX-Redirect" not in response
    clock(minutes=5)  # 61 minutes after the last page the person opened
    response = browser.get(reverse("vetting_progress"), **poll)
    assert response.status_code == 200 and response["HX-Redirect"].startswith(reverse("account_login"))
    login_page = browser.get(response["HX-Redirect"]).content.decode()
    assert "signed out after 1 hour without activity" in login_page
    assert browser.get("/").status_code == 302


def test_api_calls_with_a_token_are_not_affected_by_the_idle_timeout(make_user, clock, settings, client):
    settings.PORTAL_SESSION_IDLE_MINUTES = 60
    person = make_user("reviewer")
    _, key = api_token_create(user=person, name="script", mfa_verified=False)
    clock(hours=5)
    assert client.get("/api/disputes/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


def test_the_production_profile_offers_no_remember_me_beyond_the_idle_limit():
    code = (
        "from django.conf import settings as s; "
        "print(s.ACCOUNT_SESSION_REMEMBER, s.PORTAL_SESSION_IDLE_MINUTES, s.SESSION_COOKIE_AGE)"
    )
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "PORTAL_PROFILE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in unset} | {
        "PORTAL_PROFILE": "production",
        "SECRET_KEY": "x" * 60 + "-not-a-real-secret",
        "ALLOWED_HOSTS": "portal.example.org",
        "REDIS_URL": "redis://127.0.0.1:6390/1",
        "PORTAL_SESSION_IDLE_MINUTES": "120",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    remember, idle, cookie_age = result.stdout.split()[-3:]
    # Always a browser-session cookie; the server keeps the session a day past the idle limit, only so that the
    # login page can still say why it was ended.
    assert (remember, int(idle)) == ("False", 120)
    assert int(cookie_age) == 120 * 60 + 24 * 3600


def test_sign_out_everywhere_ends_every_session_of_the_person_and_nothing_else(make_user, client):
    person = make_user("reviewer", "ranker")
    other = make_user("reviewer")
    laptop, ward_computer, someone_else = _signed_in(person), _signed_in(person), _signed_in(other)
    _, key = api_token_create(user=person, name="script", mfa_verified=False)

    security = laptop.get(reverse("mfa_index")).content.decode()
    assert "Sign out everywhere" in security and reverse("account_sign_out_everywhere") in security
    response = laptop.post(reverse("account_sign_out_everywhere"), follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("account_login"))
    assert "signed out on every device" in response.content.decode()

    assert laptop.get("/").status_code == 302
    assert ward_computer.get("/").status_code == 302
    assert someone_else.get("/").status_code == 200
    # Nothing else is revoked: the API token still works, and the person signs in again as before.
    assert client.get("/api/disputes/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert _signed_in(person).get("/").status_code == 200
    entry = AuditEntry.objects.get(object_id=str(person.pk), action="sessions_ended")
    assert entry.actor == person


def test_sign_out_everywhere_takes_a_post_and_a_signed_in_person(make_user, client):
    assert client.post(reverse("account_sign_out_everywhere")).status_code == 302  # to the login page
    browser = _signed_in(make_user("reviewer"))
    assert browser.get(reverse("account_sign_out_everywhere")).status_code == 405
    assert browser.get("/").status_code == 200
