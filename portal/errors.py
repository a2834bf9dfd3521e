"""One domain error type, translated to HTTP in one place."""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class DomainError(Exception):
    """A business rule refused an action. ``code`` is machine-readable; the message is for people."""

    http_status = 400
    code = "invalid"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        if code:
            self.code = code


class NotAllowed(DomainError):
    http_status = 403
    code = "not_allowed"


class NotFound(DomainError):
    http_status = 404
    code = "not_found"


class Conflict(DomainError):
    http_status = 409
    code = "conflict"


def api_exception_handler(exc, context):
    from django.db import DataError

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
