"""The API's exception handler (DRF's ``EXCEPTION_HANDLER``): domain errors and values PostgreSQL refuses become
JSON with a ``detail`` for people and a ``code`` for programs, never a 500."""

from __future__ import annotations

from django.db import DataError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from portal.errors import DomainError


def api_exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response({"detail": str(exc), "code": exc.code}, status=exc.http_status)
    if isinstance(exc, DataError):
        # A value PostgreSQL cannot store (out of range, NUL byte): the statement failed, nothing was written.
        first_line = str(exc).splitlines()[0] if str(exc) else "invalid value"
        return Response({"detail": f"Invalid value: {first_line}", "code": "invalid_value"}, status=400)
    response = exception_handler(exc, context)
    if response is None:
        return None
    if response.status_code == status.HTTP_429_TOO_MANY_REQUESTS:
        response.data = {"detail": "Too many requests; try again shortly.", "code": "throttled"}
    return response
