"""Writing and reading the audit history (append-only; see portal.models.AuditEntry)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from portal.actors import acting_user
from portal.bulk import insert_rows
from portal.clientip import client_ip
from portal.models import AuditEntry, User

_pending = threading.local()


@contextmanager
def audit_batch() -> Iterator[None]:
    """Write the entries recorded inside the block in one INSERT when it ends (the review hot path records three),
    which joins the round trip of an enclosing :func:`portal.bulk.writes_deferred` block.

    Use it inside the transaction that makes the changes, so the entries commit or roll back with them: if the block
    raises, nothing recorded in it is written. Entries keep the order they were recorded in (ids and ``at`` rise);
    the entry objects get no id."""
    if getattr(_pending, "entries", None) is not None:
        yield  # already inside a batch: its end writes these entries too
        return
    if not connection.in_atomic_block:
        raise RuntimeError("audit_batch() must run inside the transaction that makes the audited changes")
    _pending.entries = []
    try:
        yield
        entries, _pending.entries = _pending.entries, None
        insert_rows(entries, returning=False)
    finally:
        _pending.entries = None


def audit_record(
    *,
    actor: User | AnonymousUser | None,
    obj: Model | tuple[str, str],
    action: str,
    before: object = None,
    after: object = None,
    note: str = "",
) -> AuditEntry:
    """Append one audit entry for ``obj`` (a model instance or an (object_type, object_id) pair).

    Inside :func:`audit_batch` the entry is written when the batch ends (and gets no id)."""
    if isinstance(obj, tuple):
        object_type, object_id = obj
    else:
        object_type, object_id = obj._meta.label_lower, str(obj.pk)
    entry = AuditEntry(
        actor=acting_user(actor),
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        before=before,
        after=after,
        note=note,
    )
    pending = getattr(_pending, "entries", None)
    if pending is not None:
        pending.append(entry)
    else:
        insert_rows([entry])
    return entry


def audit_export(
    *, actor: User | AnonymousUser | None, obj: Model | tuple[str, str], action: str, fmt: str, identities: bool
) -> AuditEntry:
    """Record an export of people's judgements: every one, saying whether it carried identities (e-mail addresses
    instead of pseudonyms), so who took which names out is on record. ``actor`` None: the command line."""
    return audit_record(actor=actor, obj=obj, action=action, after={"format": fmt, "identities": identities})


def audit_access(
    *,
    action: str,
    actor: User | AnonymousUser | None,
    obj: Model | tuple[str, str],
    detail: str = "",
    request: HttpRequest | None = None,
    extra: dict | None = None,
) -> AuditEntry:
    """Record an access: a sign-in or a refused one, a download, a token, a page that shows identities.

    ``detail`` is the sentence the audit page and ``manage.py audit_log`` show (e.g. ``sso`` or ``password`` for a
    sign-in, the format of a download); the client's address (``portal.clientip``) goes with it when ``request``
    is given, so "from where" is on record. Access entries share the table of change entries: one trail to read."""
    after = dict(extra or {})
    if request is not None:
        after["ip"] = client_ip(request)
    if connection.in_atomic_block:
        return audit_record(actor=actor, obj=obj, action=action, after=after or None, note=detail)
    # On its own (a sign-in, a download), the entry would wait for its own flush to disk: most of what it costs the
    # request. Committed without waiting, it is written all the same; only a crash of the database server itself
    # within a fraction of a second of it could lose it (docs/security.md says so).
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        return audit_record(actor=actor, obj=obj, action=action, after=after or None, note=detail)


def audit_history(obj: Model) -> QuerySet[AuditEntry]:
    return AuditEntry.objects.filter(object_type=obj._meta.label_lower, object_id=str(obj.pk)).select_related("actor")
