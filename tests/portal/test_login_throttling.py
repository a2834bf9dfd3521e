"""Login throttling that a stranger cannot turn against the account's owner, counted in a cache every web process
shares: failed sign-ins are limited per client address (any account) and per account *and* address, so failures
from one address do not refuse the right password from another; the e-mailed password-reset link unlocks the account
everywhere; the production profile refuses to start without the shared cache (REDIS_URL)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from tests.e2e.conftest import start_redis, test_database_url

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pw-for-tests-123"
STRANGER, OWNER = "203.0.113.9", "198.51.100.7"
THROTTLED = "Too many failed login attempts"


@pytest.fixture
def redis_url(tmp_path):
    """A throwaway redis-server (as the end-to-end tests start one)."""
    import shutil

    if not shutil.which("redis-server"):
        if os.environ.get("CI"):
            pytest.fail("redis-server is missing: .ci/run must install Debian's redis-server")
        pytest.skip("redis-server not installed (apt-get install redis-server)")
    proc, url = start_redis(tmp_path)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(autouse=True)
def _clean_cache(settings):
    settings.ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip,5/5m/key"}
    cache.clear()
    yield
    cache.clear()


def _login(client: Client, email: str, password: str, address: str):
    return client.post(reverse("account_login"), {"login": email, "password": password}, REMOTE_ADDR=address)


def test_a_strangers_failures_do_not_refuse_the_owners_password_at_the_owners_address(make_user):
    owner = make_user("ranker")
    stranger = Client()
    answers = [_login(stranger, owner.email, f"guess-{n}", STRANGER).content.decode() for n in range(7)]
    assert THROTTLED not in answers[0] and THROTTLED in answers[-1]
    # At the stranger's address the account is locked, the right password included...
    assert THROTTLED in _login(stranger, owner.email, PASSWORD, STRANGER).content.decode()
    # ...but the owner, at their own address, signs in.
    assert _login(Client(), owner.email, PASSWORD, OWNER).status_code == 302


def test_the_per_address_limit_still_stops_guessing_across_accounts(make_user):
    people = [make_user("reviewer") for _ in range(12)]
    attacker = Client()
    answers = [_login(attacker, p.email, "wrong", STRANGER).content.decode() for p in people]
    assert THROTTLED not in answers[9] and THROTTLED in answers[10]  # 10 a minute from one address, any accounts
    assert _login(Client(), people[-1].email, PASSWORD, OWNER).status_code == 302


def test_the_emailed_password_reset_link_unlocks_the_account_at_every_address(make_user, mailoutbox):
    """Behind one hospital address (a NAT) a stranger can still lock the owner out at the owner's address: the
    owner unlocks it with "Forgot your password?"; setting a password from the e-mailed link clears the counts."""
    owner = make_user("reviewer")
    for address in (OWNER, STRANGER):
        for n in range(6):
            _login(Client(), owner.email, f"guess-{n}", address)
        assert THROTTLED in _login(Client(), owner.email, PASSWORD, address).content.decode()
    throttled = _login(Client(), owner.email, PASSWORD, OWNER).content.decode()
    assert "Forgot your password?" in throttled and "unlock" in throttled

    browser = Client(REMOTE_ADDR=OWNER)
    browser.post(reverse("account_reset_password"), {"email": owner.email})
    link = next(line for line in mailoutbox[-1].body.splitlines() if "/accounts/password/reset/key/" in line)
    form_url = browser.get(link.strip()).url
    response = browser.post(form_url, {"password1": "a-new-long-pass-42", "password2": "a-new-long-pass-42"})
    assert response.status_code == 302
    for address in (OWNER, STRANGER):
        assert _login(Client(), owner.email, "a-new-long-pass-42", address).status_code == 302


def _manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "PORTAL_PROFILE", "DJANGO_ALLOW_ASYNC_UNSAFE", "REDIS_URL"}
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )


# Eight failed sign-ins for unknown accounts from one address, through the real login view; prints how many were
# processed (not throttled). Rolled back at the end: the refused sign-ins' audit entries would otherwise stay in the
# tests' database (committed outside any test's transaction, and the audit trail refuses deletion).
_EIGHT_FAILURES = """
from django.db import transaction
from django.test import Client
client = Client()
with transaction.atomic():
    answers = [
        client.post("/accounts/login/", {"login": "nobody%d@example.org" % n, "password": "wrong"},
                    REMOTE_ADDR="203.0.113.9").content.decode()
        for n in range(8)
    ]
    transaction.set_rollback(True)
print("processed", sum("Too many failed login attempts" not in a for a in answers))
"""


def test_two_web_processes_share_the_failed_login_counts_through_redis(redis_url):
    """Two processes (two gunicorn workers, or two nodes) with the same REDIS_URL: 16 failed sign-ins from one
    address let through 10, the limit, not 10 per process."""
    env = {"DATABASE_URL": test_database_url(), "REDIS_URL": redis_url, "LOGIN_FAILED_RATE": "10/m/ip,5/5m/key"}
    command = [sys.executable, "manage.py", "shell", "-c", _EIGHT_FAILURES]
    first = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    second = _manage("shell", "-c", _EIGHT_FAILURES, env=env)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, err[-2000:] + second.stderr[-2000:]
    processed = [int(result.split("processed ")[1]) for result in (out, second.stdout)]
    assert sum(processed) == 10, processed


def test_the_production_profile_refuses_to_start_without_a_shared_cache():
    production = {
        "PORTAL_PROFILE": "production",
        "SECRET_KEY": "x" * 60 + "-not-a-real-secret",
        "ALLOWED_HOSTS": "portal.example.org",
    }
    refused = _manage("check", env=production)
    assert refused.returncode != 0
    assert "ImproperlyConfigured: REDIS_URL must be set in the production profile" in refused.stderr
    started = _manage("check", env={**production, "REDIS_URL": "redis://127.0.0.1:6390/1"})
    assert started.returncode == 0, started.stderr[-2000:]
