"""Nugget files: import (JSONL, one line per item, entering as drafts) and export (JSONL, the same format).

Format (docs/nuggets.md "Formats"): ``{"item_uid": "...", "nuggets": [{"id": "n1", "text": "...",
"importance": "vital"}]}``; the export adds ``version`` and ``status``, which the importer ignores.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from annotation.models import Nugget, NuggetSet, NuggetTask, QAItem
from annotation.nugget_workflow import (
    NuggetAction,
    NuggetListError,
    may_import_nuggets,
    nugget_list_clean,
    nugget_lists_equal,
)
from annotation.services.nugget_versions import nugget_version_create, nugget_version_facts, nugget_version_move
from metrics.nugget_io import NuggetInputError, Source, read_nuggets_jsonl
from portal.audit import audit_record
from portal.errors import DomainError, NotAllowed
from portal.models import User
from portal.roles import user_roles

MAX_ERRORS_SHOWN = 50


class NuggetImportRefused(DomainError):
    """The file was refused and nothing imported; ``errors`` names each problem (file, line, field)."""

    code = "invalid_nugget_file"

    def __init__(self, errors: list[NuggetInputError]):
        self.errors = errors
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"Nothing was imported: {errors[0]}{more}")


def nuggets_import(*, source: Source, name: str, actor: User | None) -> dict[str, int]:
    """Import nugget lists as drafts (origin ``imported``) that experts then validate; all or nothing.

    Every line is checked first (the format, then the list rules of ``annotation.nugget_workflow``, then the item
    uid), and every problem is reported naming the file, the line and the field. An item whose validated version
    exists keeps it until the imported draft is validated; a waiting draft is replaced by the imported one unless
    someone is validating it now; an item whose nuggets wait for an adjudicator is refused. A list identical to
    the item's current draft or validated version is left as it is (so importing an export again changes nothing).
    ``actor`` None: the command line. Returns the counts ``created``, ``unchanged`` and ``replaced_drafts``.
    """
    if actor is not None and not may_import_nuggets(user_roles(actor)):
        raise NotAllowed("Only organizers import nuggets.")
    lines: dict[str, int] = {}
    try:
        parsed = read_nuggets_jsonl(source, name=name, line_numbers=lines)
    except NuggetInputError as exc:
        raise NuggetImportRefused([exc]) from None
    errors: list[NuggetInputError] = []
    checked = {}
    for uid, nuggets in parsed.items():
        try:
            checked[uid] = nugget_list_clean({"id": n.id, "text": n.text, "importance": n.importance} for n in nuggets)
        except NuggetListError as exc:
            for problem in exc.problems:
                field = "nuggets" if problem.entry is None else f"nuggets (entry {problem.entry}).{problem.field}"
                errors.append(NuggetInputError(name, problem.detail, line=lines[uid], field=field))
    now = timezone.now()
    counts = {"created": 0, "unchanged": 0, "replaced_drafts": 0}
    with transaction.atomic():
        # Locked in id order, so two imports touching the same items never deadlock.
        items = {
            item.uid: item for item in QAItem.objects.select_for_update().filter(uid__in=list(parsed)).order_by("pk")
        }
        for uid in parsed:
            if uid not in items:
                errors.append(NuggetInputError(name, f"no item has the uid {uid!r}", line=lines[uid], field="item_uid"))
        open_sets = _open_and_validated(items.values())
        # A list identical to one the item has now changes nothing, whatever state that version is in (so an
        # export of every item's latest version, disagreements included, imports again as it is).
        unchanged = {
            uid
            for uid, facts in checked.items()
            if uid in items
            and any(nugget_lists_equal(facts, nugget_version_facts(v)) for v in open_sets.get(items[uid].pk, []))
        }
        for uid, item in items.items():
            if uid in unchanged:
                continue
            for version in open_sets.get(item.pk, []):
                blocked = _import_blocked(version, now)
                if blocked:
                    errors.append(NuggetInputError(name, blocked, line=lines[uid], field="item_uid"))
        if errors:
            errors.sort(key=lambda e: e.line or 0)
            raise NuggetImportRefused(errors[:MAX_ERRORS_SHOWN])
        for uid, facts in checked.items():
            item = items[uid]
            current = open_sets.get(item.pk, [])
            if uid in unchanged:
                counts["unchanged"] += 1
                continue
            for draft in (v for v in current if v.status == NuggetSet.Status.DRAFT):
                nugget_version_move(
                    nugget_set=draft,
                    action=NuggetAction.SUPERSEDE,
                    actor=actor,
                    note=f"replaced by {name}",
                    item_uid=uid,
                )
                counts["replaced_drafts"] += 1
            nugget_version_create(
                item=item,
                nuggets=facts,
                status=NuggetSet.Status.DRAFT,
                origin=NuggetSet.Origin.IMPORTED,
                created_by=actor,
                import_name=name[:200],
            )
            counts["created"] += 1
        audit_record(actor=actor, obj=("annotation.nuggetimport", name[:100]), action="nuggets_imported", after=counts)
    return counts


def _open_and_validated(items: Iterable[QAItem]) -> dict[int, list[NuggetSet]]:
    sets: dict[int, list[NuggetSet]] = {}
    rows = (
        NuggetSet.objects.select_for_update()
        .filter(item__in=list(items))
        .exclude(status=NuggetSet.Status.SUPERSEDED)
        .order_by("item_id", "version")
    )
    for nugget_set in rows:
        sets.setdefault(nugget_set.item_id, []).append(nugget_set)
    return sets


def _import_blocked(version: NuggetSet, now: datetime) -> str:
    if version.status == NuggetSet.Status.DISPUTED:
        return "the item's nuggets wait for an adjudicator; import it again once the disagreement is settled"
    if version.status == NuggetSet.Status.DRAFT:
        live = NuggetTask.objects.filter(
            nugget_set=version, status=NuggetTask.Status.ACTIVE, expires_at__gt=now, stage=NuggetTask.Stage.VALIDATE
        )
        if live.exists():
            return "an expert is validating the item's draft right now; import it again once they are done"
    return ""


EXPORT_STATUSES = ("validated", "all")


def nuggets_export(*, status: str = "validated", actor: User | None = None) -> Iterator[str]:
    """The nugget lists as JSONL lines (each ending in a newline), one per item in uid order.

    ``validated``: the validated version of each item that has one. ``all``: each item's newest version that is
    not superseded, whatever its state (a draft, the validator's side of a disagreement, or the validated one).
    Each line: ``item_uid``, ``nuggets`` [{id, text, importance}], ``version``, ``status``.
    """
    if status not in EXPORT_STATUSES:
        raise DomainError(f"status must be one of {', '.join(EXPORT_STATUSES)}", code="invalid_status")
    sets = NuggetSet.objects.exclude(status=NuggetSet.Status.SUPERSEDED)
    if status == "validated":
        sets = sets.filter(status=NuggetSet.Status.VALIDATED)
    sets = (
        sets.select_related("item")
        .prefetch_related(Prefetch("nuggets", queryset=Nugget.objects.order_by("position")))
        .order_by("item__uid", "-version")
    )
    if actor is not None:
        audit_record(actor=actor, obj=("annotation.nuggetexport", status), action="nuggets_exported")
    last_uid = None
    for nugget_set in sets.iterator(chunk_size=500):
        if nugget_set.item.uid == last_uid:
            continue  # an older open version of an item already written
        last_uid = nugget_set.item.uid
        yield nugget_set_line(nugget_set)


def nugget_set_line(nugget_set: NuggetSet) -> str:
    record = {
        "item_uid": nugget_set.item.uid,
        "nuggets": [{"id": n.key, "text": n.text, "importance": n.importance} for n in nugget_set.nuggets.all()],
        "version": nugget_set.version,
        "status": nugget_set.status,
    }
    return json.dumps(record, ensure_ascii=False) + "\n"
