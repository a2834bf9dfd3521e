"""Content-Security-Policy: every HTML page carries it (in the production profile too), it allows no inline script
or style, and no template puts an inline script, event handler or style back (the browser tests check that the
pages really run under it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_pages_carry_a_policy_without_inline_script_or_style(organizer_client):
    header = organizer_client.get("/").headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in header.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    assert directives["base-uri"] == "'self'" and directives["form-action"] == "'self'"
    assert "unsafe" not in header


@pytest.mark.django_db
def test_with_single_sign_on_the_identity_providers_origin_may_receive_the_sign_in_form(client):
    """The hospital button posts to the portal, which redirects to the provider: browsers hold that redirect to
    form-action, and Chromium refused it while the policy allowed 'self' alone (tests/browser/test_sso_audit_browser)."""
    from django.test import override_settings

    from portal.sso import SsoConfig

    with override_settings(PORTAL_SSO=SsoConfig(issuer="https://idp.hospital.example/realms/staff", client_id="p",
                                                client_secret="s")):  # fmt: skip
        header = client.get("/accounts/login/").headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in header.split(";"))
    assert directives["form-action"] == "'self' https://idp.hospital.example"
    assert "idp.hospital.example" not in header.replace(directives["form-action"], "")


def test_production_profile_sends_the_policy():
    """The production settings, as deployed (HTTPS behind the proxy, the public host), on a 404 page. A real
    deployment builds the static files manifest (collectstatic, 35 s here); the pages' static URLs are read from
    the plain storage instead, which changes nothing about the headers."""
    code = (
        "from django.conf import settings; "
        "settings.STORAGES = {**settings.STORAGES, "
        "'staticfiles': {'BACKEND': 'django.contrib.staticfiles.storage.StaticFilesStorage'}}; "
        "from django.test import Client; "
        "r = Client().get('/no-such-page/', secure=True, headers={'host': 'portal.example.org'}); "
        "print(r.status_code, r.headers.get('Content-Security-Policy'))"
    )
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "PORTAL_PROFILE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in unset} | {
        "PORTAL_PROFILE": "production",
        "SECRET_KEY": "x" * 60 + "-not-a-real-secret",
        "ALLOWED_HOSTS": "portal.example.org",
        "REDIS_URL": "redis://127.0.0.1:6390/1",  # required by the profile; this 404 never reaches the cache
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("404 default-src 'self'; script-src 'self'; style-src 'self'"), result.stdout


INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+\s*=", re.I)


def test_no_template_has_inline_script_handler_or_style():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for app in ("portal", "annotation", "ranking", "analytics", "home")
        for path in (ROOT / app).rglob("templates/**/*.html")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if INLINE.search(re.sub(r"\{#.*?#\}", "", line))
    ]
    assert not found, found
