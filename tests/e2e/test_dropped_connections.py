"""A submit whose connection drops: sent over a real socket to a live server and abandoned mid-way. It is
stored once (the whole request arrived; the retry with the same idempotency key changes nothing) or not at all
(the body never arrived), never twice."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
import requests

from annotation.models import Review, VettingConfig
from annotation.services.imports import items_import

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _raw_post(url: str, headers: dict, body: bytes, *, send_bytes: int) -> None:
    """Send a POST, but only its first ``send_bytes`` bytes, then drop the connection without reading."""
    parts = urlparse(url)
    head = "".join(
        f"{k}: {v}\r\n" for k, v in {**headers, "Content-Length": str(len(body)), "Host": parts.netloc}.items()
    )
    request = f"POST {parts.path} HTTP/1.1\r\n{head}Connection: close\r\n\r\n".encode() + body
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        sock.sendall(request[:send_bytes])
        sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def api(live_server, reviewer):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    config = VettingConfig.load()
    config.gold_rate = 0.0
    config.save()
    from portal.api_tokens import api_token_create

    token = api_token_create(user=reviewer, name="e2e", mfa_verified=True)[1]
    return live_server.url, {"Authorization": f"Token {token}", "Content-Type": "application/json"}


def _next(base, headers) -> tuple[str, bytes]:
    assignment = requests.post(f"{base}/api/review/next/", json={}, headers=headers, timeout=10).json()
    body = json.dumps({"idempotency_key": assignment["idempotency_key"], "verdict": "correct", "relevance": 5}).encode()
    return f"{base}/api/review/assignments/{assignment['id']}/review/", body


def _wait_for(predicate, seconds: float = 5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.05)


def test_dropped_after_sending_is_stored_once_even_when_retried(api):
    base, headers = api
    url, body = _next(base, headers)
    _raw_post(url, headers, body, send_bytes=10_000)  # the whole request, then the client vanishes
    _wait_for(lambda: Review.objects.exists())
    retry = requests.post(url, data=body, headers=headers, timeout=10)  # the client does not know: it retries
    assert retry.status_code == 201
    assert Review.objects.count() == 1


def test_dropped_before_the_body_arrived_stores_nothing_and_the_retry_stores_once(api):
    base, headers = api
    url, body = _next(base, headers)
    _raw_post(url, headers, body, send_bytes=len(url) + 40)  # cut inside the request
    time.sleep(0.5)
    assert Review.objects.count() == 0
    assert requests.post(url, data=body, headers=headers, timeout=10).status_code == 201
    assert requests.post(url, data=body, headers=headers, timeout=10).status_code == 201
    assert Review.objects.count() == 1
