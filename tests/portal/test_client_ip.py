"""The client's address behind the reverse proxy (portal.clientip) and login throttling keyed on it."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import RequestFactory
from django.urls import reverse

from portal.clientip import client_ip

PROXY = "10.0.0.5"


def _request(remote: str, xff: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if xff is not None:
        extra["HTTP_X_FORWARDED_FOR"] = xff
    return RequestFactory().get("/", **extra)


@pytest.mark.parametrize(
    "trusted,remote,xff,expected",
    [
        ([], "203.0.113.9", "198.51.100.1", "203.0.113.9"),  # no proxy configured: the header is ignored
        ([PROXY], "203.0.113.9", "198.51.100.1", "203.0.113.9"),  # peer is not the proxy: header is a forgery
        ([PROXY], PROXY, "198.51.100.1", "198.51.100.1"),
        ([PROXY], PROXY, "6.6.6.6, 198.51.100.1", "198.51.100.1"),  # left-most entry was written by the client
        (["10.0.0.0/8"], PROXY, "198.51.100.1, 10.1.1.1", "198.51.100.1"),  # two trusted hops
        ([PROXY], PROXY, None, PROXY),
        ([PROXY], PROXY, "garbage", PROXY),
        ([PROXY], PROXY, "[2001:db8::1]:443", "2001:db8::1"),
        (["10.0.0.0/8"], PROXY, "10.1.1.1", "10.1.1.1"),  # only proxies: the farthest one seen
    ],
)
def test_client_address_believes_forwarded_for_only_from_a_trusted_proxy(settings, trusted, remote, xff, expected):
    settings.PORTAL_TRUSTED_PROXIES = trusted
    assert client_ip(_request(remote, xff)) == expected


@pytest.mark.django_db
def test_login_throttling_behind_the_proxy_locks_out_the_attacker_not_everyone(client, settings, make_user):
    settings.PORTAL_TRUSTED_PROXIES = [PROXY]
    settings.ACCOUNT_RATE_LIMITS = {"login_failed": "3/m/ip"}
    cache.clear()
    user = make_user("reviewer")
    url = reverse("account_login")
    for _ in range(4):
        client.post(url, {"login": "x@y.org", "password": "wrong"}, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="6.6.6.6")
    attacker = client.post(
        url, {"login": "x@y.org", "password": "wrong"}, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="6.6.6.6"
    )
    assert "Too many failed login attempts" in attacker.content.decode()
    # Another person behind the same proxy still signs in.
    response = client.post(
        url,
        {"login": user.email, "password": "pw-for-tests-123"},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR="198.51.100.7",
    )
    assert response.status_code == 302
    cache.clear()


@pytest.mark.django_db
def test_a_forged_forwarded_for_does_not_escape_throttling(client, settings):
    settings.PORTAL_TRUSTED_PROXIES = [PROXY]
    settings.ACCOUNT_RATE_LIMITS = {"login_failed": "3/m/ip"}
    cache.clear()
    url = reverse("account_login")
    bodies = [
        client.post(
            url, {"login": "x@y.org", "password": "wrong"}, REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR=f"1.2.3.{i}"
        ).content.decode()
        for i in range(5)
    ]
    assert "Too many failed login attempts" in bodies[-1]
    cache.clear()
