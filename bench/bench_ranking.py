"""30 concurrent simulated physicians against a running portal (gunicorn on 127.0.0.1): 1,000 questions × 8 answers.

Set-up: 1,000 items, 7 systems with an output for every item, a study with the reference (8 answers per question)
and 3 rankers per question. Each simulated ranker loops over real HTTP (keep-alive HTTP/1.1):
POST /api/ranking/studies/<id>/next/ (token) → GET /rank/tasks/<uuid>/ (the HTML ranking page, session cookie)
→ POST /api/ranking/tasks/<uuid>/submit/ (token, idempotency key). Reports p50 / p95 of each, and checks the
database afterwards: no question beyond its overlap, no question twice to one ranker, no lost submission.

With ``--nuggets`` the study also asks for the nugget assessment (every item has a validated list of 5 nuggets, each
answer's sentences are frozen): the page is the assessment page and every submit carries 8 × 5 nugget labels and a
few sentence marks.

Run: .venv/bin/python bench/bench_ranking.py [--questions 1000] [--rankers 30] [--seconds 30] [--workers 4] [--think 0]
     [--nuggets]
With ``--think 0`` every ranker fires its next request as soon as the last one answers (a closed loop: it measures
the portal saturated); ``--think S`` waits about S seconds between loading the page and submitting, as a person does.
Targets: ranking page render p95 < 80 ms; submit p95 < 50 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from _django import ROOT, setup_django

sys.path.insert(0, str(ROOT / "bench"))
from _server import add_server_arguments, percentile, run_clients  # noqa: E402

N_SYSTEMS = 7
N_NUGGETS = 5


def _nuggets_for_every_item() -> None:
    """A validated list of N_NUGGETS nuggets per item, written directly (set-up, not what is measured)."""
    from annotation.models import Nugget, NuggetSet, QAItem

    sets = NuggetSet.objects.bulk_create(
        [
            NuggetSet(item_id=pk, version=1, status=NuggetSet.Status.VALIDATED, origin=NuggetSet.Origin.IMPORTED)
            for pk in QAItem.objects.values_list("pk", flat=True)
        ]
    )
    importances = ["vital", "vital", "okay", "okay", "avoid"]
    Nugget.objects.bulk_create(
        [
            Nugget(nugget_set=s, position=k + 1, key=f"n{k + 1}", text=f"Fact {k + 1}.", importance=importances[k])
            for s in sets
            for k in range(N_NUGGETS)
        ]
    )


def prepare(n_questions: int, n_rankers: int, nuggets: bool = False) -> tuple[int, list[tuple[str, str]]]:
    """Items, outputs, the study and the rankers; returns the study id and (token, session cookie) per ranker."""
    from bench_import import make_dataset
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    from annotation.models import QAItem
    from annotation.services.imports import items_import
    from portal.api_tokens import api_token_create
    from portal.services import person_admit
    from ranking.services.outputs import outputs_import
    from ranking.services.studies import study_create

    with tempfile.TemporaryDirectory() as tmp:
        make_dataset(Path(tmp), n_questions)
        items_import(paths=[Path(tmp)])
        uids = list(QAItem.objects.values_list("uid", flat=True))
        rng = random.Random(1)
        names = [f"bench-system-{k}" for k in range(N_SYSTEMS)]
        for name in names:
            path = Path(tmp) / f"{name}.jsonl"
            with path.open("w") as out:
                for uid in uids:
                    words = " ".join(
                        rng.choice(["the", "patient", "dose", "risk", "acute", "renal", "renal."])
                        for _ in range(rng.randint(20, 160))
                    )
                    out.write(json.dumps({"item_uid": uid, "response": words}) + "\n")
            outputs_import(system_name=name, paths=[path])
    if nuggets:
        _nuggets_for_every_item()
    study = study_create(
        name="bench study", systems=names, overlap=3, ask_hallucination=True, unblinding_rate=0.1, ask_nuggets=nuggets
    ).study
    print(f"study {study.pk}: {study.questions.count()} questions × {N_SYSTEMS + 1} answers, overlap {study.overlap}")
    credentials = []
    for i in range(n_rankers):
        user = person_admit(email=f"bench-ranker-{i}@bench.portal", institution=None, roles=["ranker"])
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.save()
        credentials.append((api_token_create(user=user, name="bench", mfa_verified=True)[1], session.session_key))
    return study.pk, credentials


class Ranker(threading.Thread):
    def __init__(
        self,
        token: str,
        session: str,
        port: int,
        study_id: int,
        stop_at: float,
        barrier: threading.Barrier,
        think: float = 0.0,
    ):
        super().__init__(daemon=True)
        self.think = think
        self.token, self.session, self.port, self.study_id = token, session, port, study_id
        self.stop_at, self.barrier = stop_at, barrier
        self.next_ms: list[float] = []
        self.page_ms: list[float] = []
        self.submit_ms: list[float] = []
        self.errors: list[str] = []
        self.submitted: list[str] = []
        self.rng = random.Random(token)

    def _request(self, conn, method: str, path: str, body: dict | None = None, *, api: bool = True):
        headers = (
            {"Authorization": f"Token {self.token}", "Content-Type": "application/json"}
            if api
            else {"Cookie": f"{_session_cookie()}={self.session}"}
        )
        started = time.perf_counter()
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, data, (time.perf_counter() - started) * 1000

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.barrier.wait()
        if self.think:  # people arrive spread over a few seconds, not in the same millisecond
            time.sleep(self.rng.uniform(0, self.think))
        while time.time() < self.stop_at:
            try:
                status, data, ms = self._request(conn, "POST", f"/api/ranking/studies/{self.study_id}/next/", {})
                self.next_ms.append(ms)
                if status == 204:
                    break
                if status != 200:
                    self.errors.append(f"next {status} {data[:200]!r}")
                    continue
                task = json.loads(data)
                status, page, ms = self._request(conn, "GET", f"/rank/tasks/{task['task']}/", api=False)
                self.page_ms.append(ms)
                if status != 200 or b"ranking-form" not in page:
                    self.errors.append(f"page {status}")
                if self.think:  # a person reads and ranks between loading the page and submitting
                    time.sleep(self.rng.uniform(0.5, 1.5) * self.think)
                slots = [a["slot"] for a in task["answers"]]
                ranks = list(range(1, len(slots) + 1))
                self.rng.shuffle(ranks)
                answers = {
                    s: {"rank": r, "tag": self.rng.choice(["good", "okay", "bad"]), "hallucination": False}
                    for s, r in zip(slots, ranks, strict=True)
                }
                body = {
                    "answers": answers,
                    "idempotency_key": uuid.uuid4().hex,
                    "time_spent_ms": 30_000,
                    "unblinding_guess": "?" if task["ask_unblinding"] else "",
                }
                if task["study"]["ask_nuggets"]:  # every nugget of every answer, now and then a marked sentence
                    body["nugget_labels"] = {
                        a["slot"]: {
                            n["id"]: self.rng.choice(["support", "partial", "not_support"]) for n in task["nuggets"]
                        }
                        for a in task["answers"]
                    }
                    body["sentence_marks"] = {
                        a["slot"]: {"0": "wrong"}
                        for a in task["answers"]
                        if a.get("sentences") and self.rng.random() < 0.3
                    }
                status, data, ms = self._request(conn, "POST", f"/api/ranking/tasks/{task['task']}/submit/", body)
                self.submit_ms.append(ms)
                if status != 200:
                    self.errors.append(f"submit {status} {data[:200]!r}")
                else:
                    self.submitted.append(task["task"])
            except (OSError, http.client.HTTPException) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.close()


def _session_cookie() -> str:
    from django.conf import settings

    return settings.SESSION_COOKIE_NAME


def check_database(study_id: int, submitted: list[str]) -> dict:
    from django.db.models import Count

    from ranking.models import AnswerJudgement, RankingTask, Study

    study = Study.objects.get(pk=study_id)
    done = RankingTask.objects.filter(study=study, status="submitted")
    over = done.values("question_id").annotate(n=Count("pk")).filter(n__gt=study.overlap).count()
    twice = RankingTask.objects.values("question_id", "ranker_id").annotate(n=Count("pk")).filter(n__gt=1).count()
    stored = set(map(str, done.filter(pk__in=submitted).values_list("pk", flat=True)))
    incomplete = done.annotate(n=Count("judgements")).exclude(n=N_SYSTEMS + 1).count()
    if study.ask_nuggets:
        short = done.annotate(n=Count("nugget_judgements")).exclude(n=(N_SYSTEMS + 1) * N_NUGGETS).count()
        incomplete += short
    return {
        "over_overlap": over,
        "same_ranker_twice": twice,
        "lost_submissions": len(set(submitted) - stored),
        "tasks_missing_judgements": incomplete,
        "judgements": AnswerJudgement.objects.count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--rankers", type=int, default=30)
    add_server_arguments(parser)
    parser.add_argument("--think", type=float, default=0.0, help="Mean seconds between page and submit (0: none).")
    parser.add_argument("--nuggets", action="store_true", help="Also the nugget assessment (5 nuggets per item).")
    args = parser.parse_args()
    setup_django("portal_bench_ranking")
    from django.db import connection

    study_id, credentials = prepare(args.questions, args.rankers, nuggets=args.nuggets)
    connection.close()
    clients, elapsed = run_clients(
        args,
        len(credentials),
        lambda i, port, stop_at, barrier: Ranker(*credentials[i], port, study_id, stop_at, barrier, args.think),
    )
    series = {name: [m for c in clients for m in getattr(c, f"{name}_ms")] for name in ("next", "page", "submit")}
    errors = [e for c in clients for e in c.errors]
    submitted = [t for c in clients for t in c.submitted]
    print(
        f"rankers: {len(clients)}  think: {args.think:g} s  gunicorn: {args.workers} workers x {args.threads} threads  "
        f"run: {elapsed:.1f} s  "
        f"cpus: {os.cpu_count()}"
    )
    page_label = "assessment page" if args.nuggets else "ranking page"
    for name, label in (("next", "next task"), ("page", page_label), ("submit", "submit")):
        values = series[name]
        print(f"{label:15s} n={len(values)}  p50={percentile(values, 50):.1f} ms  p95={percentile(values, 95):.1f} ms")
    print(f"rankings/s:   {len(submitted) / elapsed:.1f}")
    print(f"errors:       {len(errors)}" + (f"  first: {errors[0]}" if errors else ""))
    print(f"database:     {check_database(study_id, submitted)}")


if __name__ == "__main__":
    main()
