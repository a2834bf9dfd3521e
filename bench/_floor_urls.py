"""The stack's floor, for ``bench_capacity.py --floor``: two endpoints served by the same gunicorn, middleware and
settings as the portal, doing none of a review's work.

* ``/bench/floor/django/``: a plain Django view returning a small JSON body (gunicorn + Django's middleware).
* ``/bench/floor/api/``: a DRF view with the portal's own token authentication and role check that parses the
  JSON body and returns a small JSON body, as "next" and "submit" do, but touches no table besides the token's.

A review is two API requests, so twice the second floor is what any review costs on this stack before the
queue, the state machine and the audit do anything. Served only by the bench (``DJANGO_SETTINGS_MODULE=
_floor_settings``): the portal's own URL conf has no such endpoint.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from rest_framework.response import Response
from rest_framework.views import APIView

from portal.roles import Role


@csrf_exempt
def plain(request):
    return JsonResponse({"id": 1, "ok": True})


class FloorApi(APIView):
    required_roles = (Role.REVIEWER,)

    def post(self, request):
        return Response({"id": 1, "idempotency_key": "floor", "received": len(request.data)})


urlpatterns = [
    path("bench/floor/django/", plain),
    path("bench/floor/api/", FloorApi.as_view()),
    path("", include("config.urls")),
]
