"""One domain error type; :mod:`portal.api_errors` translates it to HTTP for the API, ``portal.views`` for pages."""

from __future__ import annotations


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
