"""30 concurrent simulated physicians assessing nuggets against a running portal (gunicorn on 127.0.0.1).

Set-up: 1,000 items, each with a validated list of 5 nuggets (2 vital, 2 okay, 1 avoid; rows written directly:
this measures the assessment, not the authoring), 2 systems answering every item in 3 to 8 sentences, a study
that asks for nugget labels and sentence marks (``--with-ranking``: a ranking too) with the reference answer
(3 answers per question) and 3 physicians per question. Each simulated physician loops over real HTTP
(keep-alive HTTP/1.1): POST /api/ranking/studies/<id>/next/ (token) → GET /rank/tasks/<uuid>/ (the HTML page
with the nugget panel, session cookie) → POST /api/ranking/tasks/<uuid>/submit/ with a label for every nugget of
every answer and a few sentence marks. Reports p50 / p95 of each and checks the database afterwards: every
submitted task holds 15 nugget labels, no question beyond its overlap, no lost submission.

Run: .venv/bin/python bench/bench_nugget_assessment.py [--questions 1000] [--physicians 30] [--seconds 30]
     [--workers 4] [--think 0] [--with-ranking]
Reuses the harness of bench/bench_ranking.py (gunicorn, sessions, tokens, client threads).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import uuid
from pathlib import Path

from _django import ROOT, setup_django

sys.path.insert(0, str(ROOT / "bench"))
from _server import add_server_arguments, percentile, run_clients  # noqa: E402
from bench_ranking import Ranker  # noqa: E402

N_SYSTEMS = 2
NUGGETS = [
    ("vital", "first-line"),
    ("vital", "dose"),
    ("okay", "monitoring"),
    ("okay", "duration"),
    ("avoid", "unsafe"),
]
WORDS = ["the", "patient", "dose", "risk", "acute", "renal", "daily", "monitor", "weeks", "first-line"]


def prepare(n_questions: int, n_physicians: int, with_ranking: bool) -> tuple[int, list[tuple[str, str]]]:
    """Items with validated nuggets, outputs, the study and the physicians; returns the study id and
    (token, session cookie) per physician."""
    from bench_import import make_dataset
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    from annotation.models import Nugget, NuggetSet, QAItem
    from annotation.services.imports import items_import
    from portal.api_tokens import api_token_create
    from portal.services import person_admit
    from ranking.services.outputs import outputs_import
    from ranking.services.studies import study_create

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        # Nuggets are for open answers: three of the seven ClinIQLink types, so about 7/3 as many items are made.
        make_dataset(Path(tmp), n_questions * 7 // 3 + 7)
        items_import(paths=[Path(tmp)])
        open_types = ["short_answer", "multi_hop", "short_inverse"]
        items = list(QAItem.objects.filter(qa_type__in=open_types).order_by("pk")[:n_questions])
        uids = [item.uid for item in items]
        sets = NuggetSet.objects.bulk_create(
            [NuggetSet(item=item, version=1, status="validated", origin="imported") for item in items]
        )
        Nugget.objects.bulk_create(
            [
                Nugget(
                    nugget_set=s, position=p, key=f"n{p}", text=f"The {topic} fact of item {s.item_id}.", importance=imp
                )
                for s in sets
                for p, (imp, topic) in enumerate(NUGGETS, start=1)
            ]
        )
        names = [f"bench-system-{k}" for k in range(N_SYSTEMS)]
        for name in names:
            path = Path(tmp) / f"{name}.jsonl"
            with path.open("w") as out:
                for uid in uids:
                    sentences = [
                        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))).capitalize() + "."
                        for _ in range(rng.randint(3, 8))
                    ]
                    out.write(json.dumps({"item_uid": uid, "response": " ".join(sentences)}) + "\n")
            outputs_import(system_name=name, paths=[path])
    study = study_create(
        name="bench nugget study", systems=names, overlap=3, ask_ranking=with_ranking, ask_nuggets=True
    ).study
    print(f"study {study.pk}: {study.questions.count()} questions × {N_SYSTEMS + 1} answers × {len(NUGGETS)} nuggets")
    credentials = []
    for i in range(n_physicians):
        user = person_admit(email=f"bench-physician-{i}@bench.portal", institution=None, roles=["ranker"])
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.save()
        credentials.append((api_token_create(user=user, name="bench", mfa_verified=True)[1], session.session_key))
    return study.pk, credentials


class Physician(Ranker):
    """The ranking benchmark's client with the nugget assessment's page check and submission."""

    page_marker = b"nugget-assessment"

    def submission(self, task: dict) -> dict:
        slots = [a["slot"] for a in task["answers"]]
        labels = {
            a["slot"]: {n["id"]: self.rng.choice(["support", "partial", "not_support"]) for n in task["nuggets"]}
            for a in task["answers"]
        }
        marks = {}
        for a in task["answers"]:
            n = len(a.get("sentences") or [])
            chosen = self.rng.sample(range(n), k=min(n, self.rng.choice([0, 0, 1, 2])))
            marks[a["slot"]] = {str(i): self.rng.choice(["wrong", "unsupported"]) for i in chosen}
        body = {
            "nugget_labels": labels,
            "sentence_marks": marks,
            "idempotency_key": uuid.uuid4().hex,
            "time_spent_ms": 60_000,
            "unblinding_guess": "?" if task.get("ask_unblinding") else "",
        }
        if task.get("ask_ranking"):
            ranks = list(range(1, len(slots) + 1))
            self.rng.shuffle(ranks)
            body["answers"] = {s: {"rank": r, "tag": "good"} for s, r in zip(slots, ranks, strict=True)}
        return body


def check_database(study_id: int, submitted: list[str]) -> dict:
    from django.db.models import Count

    from ranking.models import NuggetJudgement, RankingTask, Study

    study = Study.objects.get(pk=study_id)
    done = RankingTask.objects.filter(study=study, status="submitted")
    over = done.values("question_id").annotate(n=Count("pk")).filter(n__gt=study.overlap).count()
    stored = set(map(str, done.filter(pk__in=submitted).values_list("pk", flat=True)))
    expected = (N_SYSTEMS + 1) * len(NUGGETS)
    incomplete = done.annotate(n=Count("nugget_judgements")).exclude(n=expected).count()
    return {
        "over_overlap": over,
        "lost_submissions": len(set(submitted) - stored),
        "tasks_missing_labels": incomplete,
        "nugget_labels": NuggetJudgement.objects.count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--physicians", type=int, default=30)
    parser.add_argument("--with-ranking", action="store_true", help="the study asks for a ranking as well")
    add_server_arguments(parser)
    parser.add_argument("--think", type=float, default=0.0, help="Mean seconds between page and submit (0: none).")
    args = parser.parse_args()
    setup_django("portal_bench_nugget_assessment")
    from django.db import connection

    study_id, credentials = prepare(args.questions, args.physicians, args.with_ranking)
    connection.close()
    clients, elapsed = run_clients(
        args,
        len(credentials),
        lambda i, port, stop_at, barrier: Physician(*credentials[i], port, study_id, stop_at, barrier, args.think),
    )
    series = {name: [m for c in clients for m in getattr(c, f"{name}_ms")] for name in ("next", "page", "submit")}
    errors = [e for c in clients for e in c.errors]
    submitted = [t for c in clients for t in c.submitted]
    print(
        f"physicians: {len(clients)}  think: {args.think:g} s  gunicorn: {args.workers} workers x {args.threads} "
        f"threads  run: {elapsed:.1f} s  cpus: {os.cpu_count()}  ranking too: {args.with_ranking}"
    )
    for name, label in (("next", "next task"), ("page", "assessment page"), ("submit", "submit")):
        values = series[name]
        print(f"{label:16s} n={len(values)}  p50={percentile(values, 50):.1f} ms  p95={percentile(values, 95):.1f} ms")
    print(f"assessments/s:   {len(submitted) / elapsed:.1f}")
    print(f"errors:          {len(errors)}" + (f"  first: {errors[0]}" if errors else ""))
    print(f"database:        {check_database(study_id, submitted)}")


if __name__ == "__main__":
    main()
