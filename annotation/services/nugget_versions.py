"""Writing nugget versions and moving them between states: the one place a ``NuggetSet`` row is created or its
status changed (the rules are in ``annotation.nugget_workflow``). Callers hold the item's row lock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from django.db.models import Max
from django.utils import timezone

from annotation.models import Nugget, NuggetSet, QAItem
from annotation.nugget_workflow import (
    IllegalNuggetMove,
    NuggetAction,
    NuggetListError,
    NuggetListProblem,
    nugget_list_clean,
    nugget_next_status,
)
from metrics.nuggets import Nugget as NuggetFact
from portal.audit import audit_record
from portal.errors import Conflict, DomainError
from portal.models import User


class NuggetListInvalid(DomainError):
    """A nugget list that breaks the rules; ``problems`` lists each (pages show them beside the nuggets)."""

    code = "invalid_nuggets"

    def __init__(self, problems: list[NuggetListProblem]):
        self.problems = problems
        super().__init__("The nuggets were not saved: " + "; ".join(str(p) for p in problems) + ".")


def nugget_list_check(entries: Iterable[Mapping[str, object]] | Sequence[NuggetFact]) -> list[NuggetFact]:
    """:func:`annotation.nugget_workflow.nugget_list_clean` with its error as a :class:`DomainError`."""
    as_dicts = [
        {"id": e.id, "text": e.text, "importance": e.importance} if isinstance(e, NuggetFact) else e for e in entries
    ]
    try:
        return nugget_list_clean(as_dicts)
    except NuggetListError as exc:
        raise NuggetListInvalid(exc.problems) from None


def nugget_version_create(
    *,
    item: QAItem,
    nuggets: Sequence[NuggetFact],
    status: str,
    origin: str,
    created_by: User | None,
    based_on: NuggetSet | None = None,
    import_name: str = "",
    note: str = "",
) -> NuggetSet:
    """Write a new version of ``item``'s nuggets (already checked) as the next version number, and audit it."""
    last = NuggetSet.objects.filter(item=item).aggregate(last=Max("version"))["last"] or 0
    now = timezone.now()
    validated = status == NuggetSet.Status.VALIDATED
    nugget_set = NuggetSet.objects.create(
        item=item,
        version=last + 1,
        status=status,
        origin=origin,
        based_on=based_on,
        created_by=created_by,
        import_name=import_name,
        note=note,
        validated_by=created_by if validated else None,
        validated_at=now if validated else None,
    )
    Nugget.objects.bulk_create(
        Nugget(nugget_set=nugget_set, position=position, key=n.id, text=n.text, importance=n.importance)
        for position, n in enumerate(nuggets, start=1)
    )
    audit_record(
        actor=created_by,
        obj=nugget_set,
        action="nugget_version_created",
        after={
            "item": item.uid,
            "version": nugget_set.version,
            "status": status,
            "origin": origin,
            "based_on": based_on.version if based_on else None,
            "nuggets": [{"id": n.id, "text": n.text, "importance": n.importance} for n in nuggets],
            "note": note,
        },
    )
    return nugget_set


def nugget_version_move(
    *, nugget_set: NuggetSet, action: str, actor: User | None, note: str = "", item_uid: str = ""
) -> NuggetSet:
    """Move one version by ``action`` (see ``NUGGET_TRANSITIONS``) and audit it; a validated version first
    supersedes the item's previous one (at most one validated version per item)."""
    try:
        target = nugget_next_status(nugget_set.status, action)
    except IllegalNuggetMove:
        raise Conflict(
            f"version {nugget_set.version} of these nuggets is {nugget_set.get_status_display().lower()}: "
            "someone else has already acted on it",
            code="nuggets_moved_on",
        ) from None
    if target == NuggetSet.Status.VALIDATED:
        for previous in NuggetSet.objects.filter(item_id=nugget_set.item_id, status=NuggetSet.Status.VALIDATED):
            nugget_version_move(nugget_set=previous, action=NuggetAction.SUPERSEDE, actor=actor, item_uid=item_uid)
    before = nugget_set.status
    nugget_set.status = target
    fields = ["status"]
    if target == NuggetSet.Status.VALIDATED:
        nugget_set.validated_by, nugget_set.validated_at = actor, timezone.now()
        fields += ["validated_by", "validated_at"]
    nugget_set.save(update_fields=fields)
    audit_record(
        actor=actor,
        obj=nugget_set,
        action=f"nugget_version_{action}",
        before={"status": before},
        after={"status": target, "item": item_uid or nugget_set.item_id, "version": nugget_set.version},
        note=note,
    )
    return nugget_set


def nugget_version_facts(nugget_set: NuggetSet) -> list[NuggetFact]:
    return [NuggetFact(n.key, n.text, n.importance) for n in nugget_set.nuggets.order_by("position")]
