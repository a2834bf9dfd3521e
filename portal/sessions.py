"""Sessions on shared computers: the one home of the idle timeout and of "Sign out everywhere".

- **Idle timeout.** A signed-in session that has made no request for ``PORTAL_SESSION_IDLE_MINUTES`` (8 hours by
  default: a working day or a shift, so a person is never signed out in the middle of their day, yet a session left
  open on a ward or library computer ends before the next day's users sit down) is signed out at its next request,
  and the login page says why. The time of the last request is kept in the session, written at most once a minute
  (a session write per request would cost the review loop a database write per item). Requests a page makes by
  itself (htmx polling of the progress bars and the vetting dashboard) are not activity: a page left open does not
  keep its person signed in. API calls with a token have no session and no idle timeout (tokens expire by their own
  rule, ``portal.api_tokens``).
- **Sign out everywhere** raises the person's session epoch (``User.session_epoch``): every session of theirs, on
  every device, stops working at its next request (Django checks the session's hash on each). API tokens, TOTP and
  the password are left as they are.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import logout
from django.db import transaction
from django.db.models import F
from django.http import HttpRequest
from django.utils import timezone

from portal.audit import audit_record
from portal.models import User

_LAST_SEEN = "portal_last_seen"  # seconds since the epoch, in the session
_WRITE_EVERY_SECONDS = 60


def session_idle_timed_out(request: HttpRequest) -> bool:
    """Record the signed-in session's activity; sign it out and answer True when it was idle longer than
    ``PORTAL_SESSION_IDLE_MINUTES`` (the caller then tells the person)."""
    now = int(timezone.now().timestamp())
    last_seen = request.session.get(_LAST_SEEN)
    if isinstance(last_seen, int) and now - last_seen > settings.PORTAL_SESSION_IDLE_MINUTES * 60:
        logout(request)
        return True
    polled = request.method == "GET" and request.headers.get("HX-Request") == "true"
    if not isinstance(last_seen, int) or (not polled and now - last_seen >= _WRITE_EVERY_SECONDS):
        request.session[_LAST_SEEN] = now
    return False


def session_idle_message() -> str:
    return (
        f"You were signed out after {session_idle_limit_words()} without activity, so that the next person at this "
        "computer cannot use your account. Sign in again to go on."
    )


def session_idle_limit_words() -> str:
    """``PORTAL_SESSION_IDLE_MINUTES`` in words: "8 hours", "1 hour 30 minutes"."""
    hours, minutes = divmod(settings.PORTAL_SESSION_IDLE_MINUTES, 60)
    parts = [f"{hours} hour{'s' if hours != 1 else ''}"] if hours else []
    if minutes or not hours:
        parts.append(f"{minutes} minute{'s' if minutes != 1 else ''}")
    return " ".join(parts)


def sessions_end_everywhere(*, user: User) -> None:
    """End every session of ``user`` on every device (the person's own "Sign out everywhere"); audited. Their API
    tokens, authenticator app and password stay as they are."""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(session_epoch=F("session_epoch") + 1)
        audit_record(actor=user, obj=user, action="sessions_ended")
    user.refresh_from_db(fields=["session_epoch"])
