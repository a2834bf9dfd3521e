"""50 concurrent simulated reviewers against a running portal (gunicorn on 127.0.0.1) over 20,000 fresh items.

Each simulated reviewer loops: POST /api/review/next/ then POST .../review/ (token auth, keep-alive HTTP/1.1).
Reports p50 / p95 latency of "next" and "submit", requests/s, errors, and checks the database afterwards for
double assignments and lost submissions.

Run: .venv/bin/python bench/bench_review.py [--items 20000] [--reviewers 50] [--seconds 30] [--workers 4] [--think 2]
     [--html] [--keepalive 75] [--policy adaptive]

``--html`` drives the HTML pages instead, as a browser does (session cookie, CSRF token): the review page (GET),
then the review form (POST), which stores the review, takes the next item and redirects to its page. "next" is
then the GET of a review page and "submit" the POST (store + take the next lease). One pause per review.

``--think`` is each simulated reviewer's pause (uniform 0.5-1.5 x the value, in seconds) before "next" and before
"submit". With ``--think 0`` the 50 clients fire back to back and the run measures saturation throughput: latency
is then queueing time (Little's law: 50 clients / throughput), not service time.
Targets (docs/design.md §7): "next" p95 < 30 ms with zero double assignments; submit p95 < 50 ms, zero lost.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from _django import ROOT, setup_django
from _server import add_server_arguments, percentile, run_clients


def prepare(n_items: int, n_reviewers: int, policy: str = "uniform") -> list[str]:
    """Import the items, create reviewers with API tokens; returns the tokens. ``policy``: the second review's rule
    (``adaptive``: with a reliability fit that knows every reviewer, overall and per QA type, as after a round of
    vetting, so every first review is read through the model)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_import import make_dataset

    from annotation.models import VettingConfig
    from annotation.services.imports import items_import
    from portal.api_tokens import api_token_create
    from portal.services import person_admit

    with tempfile.TemporaryDirectory() as tmp:
        make_dataset(Path(tmp), n_items)
        result = items_import(paths=[Path(tmp)])
    print(f"imported {result.created} items")
    # The tables as autovacuum leaves them within minutes of an import, before reviewers arrive: fresh planner
    # statistics (with none, PostgreSQL guesses the new rows are a handful and sorts them all instead of walking
    # the queue index), and the new rows vacuumed. With statistics alone, autovacuum's first pass over the new
    # table ran inside the first measured minute and raised PostgreSQL's CPU per review there (docs/benchmarks.md).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    config = VettingConfig.load()
    config.gold_rate = 0.0
    config.second_share = 0.45
    config.save()
    tokens = []
    for i in range(n_reviewers):
        user = person_admit(email=f"bench-reviewer-{i}@bench.portal", institution=None, roles=["reviewer"])
        tokens.append(api_token_create(user=user, name="bench", mfa_verified=True)[1])
    if policy == "adaptive":
        config.second_review_policy = "adaptive"
        config.uniform_share = 0.1
        config.save()
        adaptive_fit(random.Random(7))
    return tokens


def adaptive_fit(rng: random.Random) -> None:
    """A reliability fit as the adaptive rule reads it: a prior per QA type, and each reviewer's confusion overall and
    on every type (accuracies drawn between 0.6 and 0.97), with a threshold that reads about a third of items twice."""
    from annotation.models import QAItem, ReliabilityFit, ReviewerReliability
    from annotation.services.reliability import LABELS
    from portal.models import User

    types = sorted(set(QAItem.objects.values_list("qa_type", flat=True)))
    prior = {label: share for label, share in zip(LABELS, (0.85, 0.1, 0.05), strict=False)}
    fit = ReliabilityFit.objects.create(
        labels=list(LABELS), prior=prior, prior_by_type=dict.fromkeys(types, prior), n_items=20_000, n_labels=30_000,
        n_reviews_seen=0, iterations=20, window=50, adaptive_threshold=0.05, adaptive_tie_share=0.5, seconds=1.0,
    )  # fmt: skip
    rows = []
    for person in User.objects.filter(email__startswith="bench-reviewer-"):
        accuracy = rng.uniform(0.6, 0.97)
        confusion = {
            truth: {given: accuracy if given == truth else (1 - accuracy) / (len(LABELS) - 1) for given in LABELS}
            for truth in LABELS
        }
        for qa_type in ["", *types]:
            rows.append(
                ReviewerReliability(
                    fit=fit,
                    person=person,
                    qa_type=qa_type,
                    n_labels=100,
                    accuracy=accuracy,
                    accuracy_low=accuracy - 0.05,
                    accuracy_high=accuracy + 0.05,
                    confusion=confusion,
                )  # fmt: skip
            )
    ReviewerReliability.objects.bulk_create(rows)


class Reviewer(threading.Thread):
    def __init__(self, token: str, port: int, stop_at: float, barrier: threading.Barrier, think: float):
        super().__init__(daemon=True)
        self.token, self.port, self.stop_at, self.barrier, self.think = token, port, stop_at, barrier, think
        self.next_ms: list[float] = []
        self.submit_ms: list[float] = []
        self.errors: list[str] = []
        self.submitted: list[int] = []
        self.rng = random.Random(token)

    def _post(self, conn, path: str, body: dict) -> tuple[int, bytes, float]:
        started = time.perf_counter()
        conn.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        data = response.read()
        return response.status, data, (time.perf_counter() - started) * 1000

    def _pause(self):
        if self.think > 0:
            time.sleep(self.think * self.rng.uniform(0.5, 1.5))

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.barrier.wait()
        while time.time() < self.stop_at:
            try:
                self._pause()
                status, data, ms = self._post(conn, "/api/review/next/", {})
                self.next_ms.append(ms)
                if status == 204:
                    break
                if status != 200:
                    self.errors.append(f"next {status} {data[:200]!r}")
                    continue
                lease = json.loads(data)
                verdict = self.rng.choices(["correct", "incorrect", "cannot_tell"], [0.8, 0.15, 0.05])[0]
                body = {
                    "idempotency_key": lease["idempotency_key"],
                    "verdict": verdict,
                    "relevance": self.rng.choice([3, 4, 5, 5, 5]),
                    "comment": "bench",
                    "active_seconds": 10,
                    **({"cannot_tell_reason": "excerpt"} if verdict == "cannot_tell" else {}),
                }
                self._pause()
                status, data, ms = self._post(conn, f"/api/review/assignments/{lease['id']}/review/", body)
                self.submit_ms.append(ms)
                if status != 201:
                    self.errors.append(f"submit {status} {data[:200]!r}")
                else:
                    self.submitted.append(lease["id"])
            except (OSError, http.client.HTTPException) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.close()


class HtmlReviewer(Reviewer):
    """The same reviewer through the HTML pages: session cookie, CSRF token, form posts, redirects."""

    _KEY = re.compile(rb'name="idempotency_key" value="([^"]+)"')
    _CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')

    def _request(self, conn, method: str, path: str, form: dict | None = None):
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        started = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        elapsed = (time.perf_counter() - started) * 1000
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        return response.status, response.getheader("Location", ""), data, elapsed

    def run(self):
        self.cookies = {"sessionid": self.token}  # for HtmlReviewer the "token" is a session key
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        status, location, page, _ = self._request(conn, "GET", "/review/")
        csrf = self._CSRF.search(page)
        self.barrier.wait()
        if status != 200 or csrf is None:
            self.errors.append(f"start page {status} {location}")
            return
        self._pause()
        # "I have read the guidelines": asked once before a reviewer's first item
        first_next = {"csrfmiddlewaretoken": csrf.group(1), "guidelines_read": "on"}
        status, location, _, _ = self._request(conn, "POST", "/review/", first_next)
        while time.time() < self.stop_at and status == 302 and "/review/" in location and "done" not in location:
            try:
                status, _, page, ms = self._request(conn, "GET", location)
                self.next_ms.append(ms)
                key, csrf = self._KEY.search(page), self._CSRF.search(page)
                if status != 200 or key is None or csrf is None:
                    self.errors.append(f"review page {status}")
                    break
                self._pause()
                verdict = self.rng.choices(["correct", "incorrect", "cannot_tell"], [0.8, 0.15, 0.05])[0]
                form = {
                    "csrfmiddlewaretoken": csrf.group(1), "idempotency_key": key.group(1).decode(),
                    "verdict": verdict, "relevance": self.rng.choice([3, 4, 5, 5, 5]), "comment": "bench",
                    "active_seconds": 10, **({"cannot_tell_reason": "excerpt"} if verdict == "cannot_tell" else {}),
                }  # fmt: skip
                assignment = int(location.rstrip("/").rsplit("/", 1)[-1])
                status, location, data, ms = self._request(conn, "POST", location, form)
                self.submit_ms.append(ms)
                if status != 302:
                    self.errors.append(f"submit {status} {data[:200]!r}")
                    break
                self.submitted.append(assignment)
            except (OSError, http.client.HTTPException) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
                break
        conn.close()


def sessions_for(tokens: list[str]) -> list[str]:
    """A signed-in session per bench reviewer (what the login page would create), by the reviewer's API token."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    from portal.models import ApiToken

    keys = []
    for token in ApiToken.objects.filter(key_hash__in=[ApiToken.hash_of(key) for key in tokens]).select_related("user"):
        session = SessionStore()
        session[SESSION_KEY] = str(token.user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = token.user.get_session_auth_hash()
        session.create()
        keys.append(session.session_key)
    return keys


def check_database(submitted: list[int]) -> dict:
    from django.db.models import Count, F

    from annotation.models import Assignment, Review

    live_or_done = Assignment.objects.filter(status__in=["active", "submitted"]).exclude(stage="gold")
    doubles = live_or_done.values("item_id", "stage").annotate(n=Count("id")).filter(n__gt=1).count()
    same_person = (
        Review.objects.filter(stage="secondary")
        .filter(item__reviews__stage="primary", item__reviews__reviewer=F("reviewer"))
        .count()
    )
    stored = set(Review.objects.filter(assignment_id__in=submitted).values_list("assignment_id", flat=True))
    return {
        "double_assignments": doubles,
        "secondary_same_as_primary": same_person,
        "lost_submissions": len(set(submitted) - stored),
        "reviews_in_db": Review.objects.count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--reviewers", type=int, default=50)
    add_server_arguments(parser)
    parser.add_argument("--think", type=float, default=0.0, help="seconds a reviewer pauses before each request")
    parser.add_argument("--html", action="store_true", help="drive the HTML pages (session + CSRF) instead of the API")
    parser.add_argument("--policy", choices=["uniform", "adaptive"], default="uniform", help="second review's rule")
    args = parser.parse_args()
    setup_django("portal_bench_review")
    from django.db import connection

    tokens = prepare(args.items, args.reviewers, args.policy)
    client_class = Reviewer
    if args.html:
        tokens, client_class = sessions_for(tokens), HtmlReviewer
    connection.close()
    clients, elapsed = run_clients(
        args, len(tokens), lambda i, port, stop_at, barrier: client_class(tokens[i], port, stop_at, barrier, args.think)
    )
    next_ms = [m for c in clients for m in c.next_ms]
    submit_ms = [m for c in clients for m in c.submit_ms]
    errors = [e for c in clients for e in c.errors]
    submitted = [a for c in clients for a in c.submitted]
    db = check_database(submitted)
    total = len(next_ms) + len(submit_ms)
    print(
        f"reviewers: {len(tokens)} ({'HTML pages' if args.html else 'API'}, {args.policy} second review)  gunicorn: {args.workers} workers x {args.threads} threads, keep-alive {args.keepalive} s  "
        f"think: {args.think} s  run: {elapsed:.1f} s  cpus: {os.cpu_count()}  load: {os.getloadavg()[0]:.1f}"
    )
    print(f"next item:  n={len(next_ms)}  p50={percentile(next_ms, 50):.1f} ms  p95={percentile(next_ms, 95):.1f} ms")
    print(
        f"submit:     n={len(submit_ms)}  p50={percentile(submit_ms, 50):.1f} ms  p95={percentile(submit_ms, 95):.1f} ms"
    )
    print(f"requests/s: {total / elapsed:.1f}   reviews/s: {len(submitted) / elapsed:.1f}")
    print(f"errors:     {len(errors)}" + (f"  first: {errors[0]}" if errors else ""))
    print(f"fairness:   {fairness(clients)}")
    print(f"database:   {db}")


def fairness(clients: list) -> str:
    """How evenly the server shared itself among the reviewers: reviews each stored, and each one's mean request
    time. Served fairly, every reviewer gets about as many; a wide spread says some connections wait behind others
    (with ``--think 0`` the mean over all is fixed by Little's law, so the tail is this spread)."""
    counts = sorted(len(c.submitted) for c in clients)
    means = sorted(sum(c.next_ms + c.submit_ms) / len(c.next_ms + c.submit_ms) for c in clients if c.next_ms)
    if not counts or not means:
        return "no reviews"
    return (
        f"reviews per reviewer min {counts[0]}, median {counts[len(counts) // 2]}, max {counts[-1]}; "
        f"mean request time per reviewer min {means[0]:.0f} ms, median {means[len(means) // 2]:.0f} ms, "
        f"max {means[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main()
