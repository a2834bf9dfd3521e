"""Locust scenario: reviewers and rankers working through the API as fast as people click (with think time).

Users come from the JSON file named by $LOAD_USERS (written by bench/load_test.py): {"reviewers": [token…],
"rankers": [token…], "study_id": N}. Every successful submission is appended to $LOAD_LOG so that the runner
can check afterwards that each one is in the database exactly once.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import uuid

from locust import HttpUser, between, events, task
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

USERS = json.loads(open(os.environ["LOAD_USERS"]).read())
LOG_PATH = os.environ["LOAD_LOG"]
THINK = float(os.environ.get("LOAD_THINK", "1.0"))
# Pauses of each kind of user (seconds, mean): a reviewer reads an item, a physician ranks eight answers.
REVIEW_THINK = float(os.environ.get("LOAD_REVIEW_THINK") or THINK)
RANK_THINK = float(os.environ.get("LOAD_RANK_THINK") or THINK)
_lock = threading.Lock()
_pools = {"reviewers": list(USERS["reviewers"]), "rankers": list(USERS["rankers"])}
# Several web processes (bench/bench_scale_out.py): each user talks to one of them, taken in turn.
HOSTS = [h for h in os.environ.get("LOAD_HOSTS", "").split(",") if h]
_next_host = itertools.count()


def _take(pool: str, client) -> str:
    with _lock:
        if HOSTS:
            client.base_url = HOSTS[next(_next_host) % len(HOSTS)]
        return _pools[pool].pop()


def _send_again_once(client) -> None:
    """A keep-alive connection that the server closes just as a request goes out fails without an answer. Browsers
    send such a request again, and so does this client, once. Every POST of the API is safe to repeat ("next" hands
    back the open lease or task, a submission is stored once per idempotency key), and the exactly-once check
    afterwards holds the portal to that. Each repeat is logged, and the report counts them."""
    retry = Retry(total=1, connect=1, read=1, status=0, other=0, allowed_methods=None, raise_on_status=False)
    client.mount("http://", HTTPAdapter(max_retries=retry))


def _note_repeat(response) -> None:
    retries = getattr(getattr(response, "raw", None), "retries", None)
    if retries is not None and retries.history:
        _log("repeat", f"{response.request.path_url}: {retries.history[-1].error!r}")


def _log(kind: str, key: str) -> None:
    with _lock, open(LOG_PATH, "a") as out:
        out.write(json.dumps({"kind": kind, "key": key}) + "\n")


class Reviewer(HttpUser):
    weight = int(os.environ.get("LOAD_REVIEWERS", "50"))
    wait_time = between(0.5 * REVIEW_THINK, 1.5 * REVIEW_THINK)

    def on_start(self):
        self.client.headers["Authorization"] = f"Token {_take('reviewers', self.client)}"
        _send_again_once(self.client)

    @task
    def review_one(self):
        with self.client.post("/api/review/next/", json={}, name="review next", catch_response=True) as response:
            _note_repeat(response)
            if response.status_code == 204:
                response.success()
                return
            if response.status_code != 200:
                response.failure(f"next: {response.status_code} {response.error or response.text[:200]}")
                return
            assignment = response.json()
        body = {
            "idempotency_key": assignment["idempotency_key"],
            "verdict": random.choice(["correct", "incorrect"]),
            "relevance": random.randint(1, 5),
            "comment": "load test",
        }
        with self.client.post(
            f"/api/review/assignments/{assignment['id']}/review/", json=body, name="review submit", catch_response=True
        ) as response:
            _note_repeat(response)
            if response.status_code == 201:
                _log("review", str(assignment["id"]))
                response.success()
            else:
                response.failure(f"submit: {response.status_code} {response.error or response.text[:200]}")


class Ranker(HttpUser):
    weight = int(os.environ.get("LOAD_RANKERS", "30"))
    wait_time = between(0.5 * RANK_THINK, 1.5 * RANK_THINK)

    def on_start(self):
        self.client.headers["Authorization"] = f"Token {_take('rankers', self.client)}"
        _send_again_once(self.client)
        self.study = USERS["study_id"]

    @task
    def rank_one(self):
        with self.client.post(
            f"/api/ranking/studies/{self.study}/next/", json={}, name="ranking next", catch_response=True
        ) as response:
            _note_repeat(response)
            if response.status_code == 204:
                response.success()
                return
            if response.status_code not in (200, 201):
                response.failure(f"next: {response.status_code} {response.error or response.text[:200]}")
                return
            task_data = response.json()
        task_id = task_data["task"]
        self.client.get(f"/api/ranking/tasks/{task_id}/", name="ranking page (API)")
        slots = [a["slot"] for a in task_data["answers"]]
        ranks = list(range(1, len(slots) + 1))
        random.shuffle(ranks)
        tags = task_data["study"]["tag_scale"]
        body = {
            "answers": {
                slot: {"rank": rank, "tag": random.choice(tags)} for slot, rank in zip(slots, ranks, strict=True)
            },
            "idempotency_key": str(uuid.uuid4()),
            "time_spent_ms": 30000,
        }
        with self.client.post(
            f"/api/ranking/tasks/{task_id}/submit/", json=body, name="ranking submit", catch_response=True
        ) as response:
            _note_repeat(response)
            if response.status_code in (200, 201):
                _log("ranking", task_id)
                response.success()
            else:
                response.failure(f"submit: {response.status_code} {response.error or response.text[:200]}")


@events.test_start.add_listener
def _reset_log(**_):
    open(LOG_PATH, "w").close()
