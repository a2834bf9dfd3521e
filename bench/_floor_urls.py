"""The stack's floor, for ``bench_capacity.py --floor``: two endpoints served by the same gunicorn, middleware and
settings as the portal, doing none of a review's work.

* ``/bench/floor/django/``: a plain Django view returning a small JSON body (gunicorn + Django's middleware).
* ``/bench/floor/api/``: a DRF view with the portal's own token authentication and role check that parses the
  JSON body and returns a small JSON body, as "next" and "submit" do, but touches no table besides the token's.
* ``/bench/floor/sql/``: the same view writing the rows a primary review writes, each request as one statement
  written by hand (no ORM, no serializer): "next" leases the first free item from the reviewer's point in the
  queue (the same partial queue index, ``SKIP LOCKED``), moves the item, records the lease with its guideline and
  an audit entry, and returns the item's texts and the guideline's; "submit" ends the reviewer's newest lease,
  drops its draft, stores the review, settles the item and writes the three audit entries. It checks less than
  the portal does (no own-lease look-up, no gold, no second review, no idempotency): a lower bound on what a
  rewrite of the lease and the submit as hand-written statements could cost, not a second implementation.

A review is two API requests, so twice the second floor is what any review costs on this stack before the
queue, the state machine and the audit do anything; the third says what the rows themselves cost. Served only by
the bench (``DJANGO_SETTINGS_MODULE=_floor_settings``): the portal's own URL conf has no such endpoint.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.http import JsonResponse
from django.urls import include, path
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.services.queue import lease_seconds
from annotation.workflow import queue_start
from portal.roles import Role


@csrf_exempt
def plain(request):
    return JsonResponse({"id": 1, "ok": True})


class FloorApi(APIView):
    required_roles = (Role.REVIEWER,)

    def post(self, request):
        return Response({"id": 1, "idempotency_key": "floor", "received": len(request.data)})


# One statement per request. The lease takes the first free item at or after the reviewer's start in the queue, or
# below it when none is left above (as the portal's queue does; under the outer LIMIT the second branch runs only
# when the first finds nothing).
_FREE_FROM = """SELECT id FROM (
    SELECT i.id FROM annotation_qaitem i
    WHERE i.status IN ('imported', 'in_review') AND i.queue_key {side} %(start)s
      AND NOT EXISTS (SELECT 1 FROM annotation_golditem g WHERE g.item_id = i.id)
      AND NOT EXISTS (SELECT 1 FROM annotation_assignment m WHERE m.item_id = i.id AND m.reviewer_id = %(reviewer)s)
      AND (i.status = 'imported' OR NOT EXISTS (
          SELECT 1 FROM annotation_assignment l WHERE l.item_id = i.id AND l.stage = 'primary'
          AND l.status = 'active' AND l.expires_at > %(now)s))
    ORDER BY i.queue_key, i.id LIMIT 1
    FOR UPDATE OF i SKIP LOCKED) AS {name}"""

LEASE = (
    "WITH candidate AS (SELECT id FROM ("
    + _FREE_FROM.format(side=">=", name="from_start")
    + " UNION ALL "
    + _FREE_FROM.format(side="<", name="wrapped")
    + """) AS free LIMIT 1
), moved AS (
    UPDATE annotation_qaitem q SET status = 'in_review' FROM candidate c WHERE q.id = c.id
    RETURNING q.id, q.uid, q.qa_type, q.benchmark, q.question, q.answer, q.passage_id
), leased AS (
    INSERT INTO annotation_assignment
        (item_id, reviewer_id, stage, status, idempotency_key, created_at, expires_at, guideline_id)
    SELECT m.id, %(reviewer)s, 'primary', 'active', gen_random_uuid(), %(now)s, %(expires)s,
           (SELECT g.id FROM annotation_guidelineversion g WHERE g.benchmark = m.benchmark AND g.qa_type = m.qa_type
            AND g.created_at <= %(now)s ORDER BY g.number DESC LIMIT 1)
    FROM moved m
    RETURNING id, item_id, idempotency_key, expires_at, guideline_id
), audited AS (
    INSERT INTO portal_auditentry (at, actor_id, action, object_type, object_id, before, after, note)
    SELECT %(now)s, %(reviewer)s, 'item_assign', 'annotation.qaitem', l.item_id::text,
           '{"status": "imported"}', '{"status": "in_review"}', 'assignment ' || l.id
    FROM leased l
)
SELECT l.id, l.idempotency_key::text, l.expires_at, m.uid, m.qa_type, m.question, m.answer,
       (SELECT p.text FROM annotation_sourcepassage p WHERE p.id = m.passage_id),
       (SELECT g.number FROM annotation_guidelineversion g WHERE g.id = l.guideline_id),
       (SELECT g.text FROM annotation_guidelineversion g WHERE g.id = l.guideline_id)
FROM leased l JOIN moved m ON m.id = l.item_id
"""
)

SUBMIT = """
WITH done AS (
    UPDATE annotation_assignment a SET status = 'submitted', finished_at = %(now)s
    WHERE a.id = (SELECT n.id FROM annotation_assignment n WHERE n.reviewer_id = %(reviewer)s
                  AND n.status = 'active' ORDER BY n.created_at DESC LIMIT 1)
    RETURNING a.id, a.item_id, a.stage, a.guideline_id, a.created_at
), undrafted AS (
    DELETE FROM annotation_reviewdraft d USING done WHERE d.item_id = done.item_id AND d.reviewer_id = %(reviewer)s
), stored AS (
    INSERT INTO annotation_review (assignment_id, item_id, reviewer_id, stage, verdict, cannot_tell_reason, relevance,
                                   comment, server_seconds, active_seconds, guideline_id, created_at)
    SELECT d.id, d.item_id, %(reviewer)s, d.stage, %(verdict)s, '', %(relevance)s, %(comment)s,
           extract(epoch FROM %(now)s - d.created_at), %(active)s, d.guideline_id, %(now)s
    FROM done d
    RETURNING id, item_id, created_at
), settled AS (
    UPDATE annotation_qaitem q SET status = 'verified', second_review = false, final_verdict = %(verdict)s,
        final_relevance = %(relevance)s, final_source = 'primary', finalized_at = %(now)s
    FROM stored s WHERE q.id = s.item_id
), audited AS (
    INSERT INTO portal_auditentry (at, actor_id, action, object_type, object_id, before, after, note)
    SELECT %(now)s, %(reviewer)s, x.action, x.object_type, x.object_id, NULL, NULL, ''
    FROM stored s CROSS JOIN LATERAL (VALUES ('review_created', 'annotation.review', s.id::text),
        ('item_submit_primary', 'annotation.qaitem', s.item_id::text),
        ('item_route_verify', 'annotation.qaitem', s.item_id::text)) AS x(action, object_type, object_id)
)
SELECT s.id, s.created_at FROM stored s
"""


def lease_parameters(reviewer: int, *, start: int | None = None) -> dict:
    """The lease statement's parameters; the hold's length is the portal's own (``REVIEW_LEASE_SECONDS``)."""
    now = timezone.now()
    return {
        "reviewer": reviewer,
        "start": queue_start(seed="bench", reviewer_id=reviewer) if start is None else start,
        "now": now,
        "expires": now + timedelta(seconds=lease_seconds()),
    }


class FloorSqlApi(APIView):
    required_roles = (Role.REVIEWER,)

    def post(self, request):
        data = request.data
        reviewer = request.user.pk
        with connection.cursor() as cursor:
            if "verdict" not in data:
                cursor.execute(LEASE, lease_parameters(reviewer))
                row = cursor.fetchone()
                if row is None:
                    return Response(status=204)
                keys = ("id", "idempotency_key", "expires_at", "uid", "qa_type", "question", "answer", "passage")
                lease = dict(zip(keys, row[:8], strict=True))
                lease["guideline"] = {"number": row[8], "text": row[9]} if row[8] is not None else None
                return Response(lease)
            cursor.execute(
                SUBMIT,
                {
                    "reviewer": reviewer,
                    "now": timezone.now(),
                    "verdict": str(data["verdict"]),
                    "relevance": int(data["relevance"]),
                    "comment": str(data.get("comment", "")),
                    "active": float(data.get("active_seconds") or 0),
                },
            )
            row = cursor.fetchone()
        if row is None:
            return Response({"detail": "no active lease"}, status=409)
        return Response(
            {"id": row[0], "verdict": data["verdict"], "relevance": data["relevance"], "created_at": row[1]}
        )


urlpatterns = [
    path("bench/floor/django/", plain),
    path("bench/floor/api/", FloorApi.as_view()),
    path("bench/floor/sql/", FloorSqlApi.as_view()),
    path("", include("config.urls")),
]
