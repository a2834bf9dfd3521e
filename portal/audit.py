"""Writing and reading the audit history (append-only; see portal.models.AuditEntry)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.db.models import Model, QuerySet

from portal.actors import acting_user
from portal.models import AuditEntry, User


def audit_record(
    *,
    actor: User | AnonymousUser | None,
    obj: Model | tuple[str, str],
    action: str,
    before: object = None,
    after: object = None,
    note: str = "",
) -> AuditEntry:
    """Append one audit entry for ``obj`` (a model instance or an (object_type, object_id) pair)."""
    if isinstance(obj, tuple):
        object_type, object_id = obj
    else:
        object_type, object_id = obj._meta.label_lower, str(obj.pk)
    return AuditEntry.objects.create(
        actor=acting_user(actor),
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        before=before,
        after=after,
        note=note,
    )


def audit_export(
    *, actor: User | AnonymousUser | None, obj: Model | tuple[str, str], action: str, fmt: str, identities: bool
) -> AuditEntry:
    """Record an export of people's judgements: every one, saying whether it carried identities (e-mail addresses
    instead of pseudonyms), so who took which names out is on record. ``actor`` None: the command line."""
    return audit_record(actor=actor, obj=obj, action=action, after={"format": fmt, "identities": identities})


def audit_history(obj: Model) -> QuerySet[AuditEntry]:
    return AuditEntry.objects.filter(object_type=obj._meta.label_lower, object_id=str(obj.pk)).select_related("actor")
