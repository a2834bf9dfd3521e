"""Nugget work: leases for writing and validating, submitting a draft, validating it, settling a disagreement.

Leases (``NuggetTask``) work like review leases (``annotation.services.queue``): a person holds at most one live
lease and gets it back on "next"; a lease runs out after ``NUGGET_LEASE_SECONDS`` (default one hour) and the item
returns to the queue for others; each person is offered an item at each stage once (per version, for validation).
Validation comes before writing, so started items finish. Adjudication needs no lease: the adjudicator picks a
disagreement from the list, and the item's row lock at submit time makes the first decision win.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from annotation.models import NuggetSet, NuggetTask, QAItem
from annotation.nugget_workflow import (
    NOT_AN_ADJUDICATOR,
    NOT_AN_EXPERT,
    NUGGET_CONFLICT_OF_INTEREST,
    OPEN_STATES,
    OWN_VERSION,
    NuggetAction,
    may_adjudicate_nuggets,
    may_import_nuggets,
    may_validate_nuggets,
    may_write_nuggets,
    nugget_conflict_of_interest,
    nugget_lists_equal,
)
from annotation.selectors.nuggets import items_needing_nuggets
from annotation.services.nugget_versions import (
    nugget_list_check,
    nugget_version_create,
    nugget_version_facts,
    nugget_version_move,
)
from portal.audit import audit_record
from portal.errors import Conflict, DomainError, NotAllowed, NotFound
from portal.models import User
from portal.roles import Role, user_roles

Stage, TaskStatus = NuggetTask.Stage, NuggetTask.Status


def _lease_seconds() -> int:
    return getattr(settings, "NUGGET_LEASE_SECONDS", 3600)


def _live(now: datetime) -> Q:
    return Q(status=TaskStatus.ACTIVE, expires_at__gt=now)


def nugget_task_current(*, person: User, now: datetime | None = None) -> NuggetTask | None:
    """The person's unexpired nugget lease, if any."""
    now = now or timezone.now()
    return (
        NuggetTask.objects.filter(person=person)
        .filter(_live(now))
        .select_related("item", "item__passage", "nugget_set")
        .first()
    )


def nugget_next(*, person: User, stage: str = "", now: datetime | None = None) -> NuggetTask | None:
    """Give ``person`` an item whose draft to validate or, when none waits, one to write nuggets for (or their
    current lease back); ``None`` when nothing is left for them. ``stage`` ``"write"`` or ``"validate"``: only that
    kind of work; a current lease of the other kind is put back once such work is found, and kept when none is."""
    if stage and stage not in (Stage.WRITE, Stage.VALIDATE):
        raise DomainError("stage must be write or validate", code="invalid_stage")
    if not may_write_nuggets(user_roles(person)):
        raise NotAllowed(NOT_AN_EXPERT)
    now = now or timezone.now()
    with transaction.atomic():
        # Race: one person's double click or two tabs. Locking the person's row serialises their requests, so the
        # second sees the lease the first just took instead of taking a second item.
        User.objects.select_for_update().filter(pk=person.pk).first()
        own = list(NuggetTask.objects.select_for_update().filter(person=person, status=TaskStatus.ACTIVE))
        live = [task for task in own if task.expires_at > now]
        if live and (not stage or all(task.stage == stage for task in live)):
            return nugget_task_current(person=person, now=now)
        for task in own:
            if task not in live:
                _task_end(task, TaskStatus.RELEASED, now)
        stages = [stage] if stage else [Stage.VALIDATE, Stage.WRITE]
        for wanted in stages:
            taken = _take(person=person, stage=wanted, now=now)
            if taken is not None:
                # Asked for the other kind of work while holding a lease (``w`` with a validation open): that lease
                # is put back, as its "Put back" button does, rather than reopened, so what the person types next
                # lands in the work they asked for. Only once new work was found: with none, they keep the lease.
                for task in live:
                    _task_put_back(task, person=person, now=now)
                return taken
    return None


def _candidates(*, person: User, stage: str, now: datetime) -> QuerySet[QAItem]:
    live_elsewhere = NuggetTask.objects.filter(item=OuterRef("pk"), stage=stage).filter(_live(now))
    if stage == Stage.VALIDATE:
        # Each draft once per person: a lease they let run out or put back is not offered again.
        seen = NuggetTask.objects.filter(
            item=OuterRef("item_id"), person=person, stage=stage, nugget_set=OuterRef("pk")
        )
        busy = NuggetTask.objects.filter(item=OuterRef("item_id"), stage=stage).filter(_live(now))
        drafts = (
            NuggetSet.objects.filter(status=NuggetSet.Status.DRAFT)
            .exclude(created_by=person)
            .exclude(Exists(seen))
            .exclude(Exists(busy))
        )
        return QAItem.objects.filter(pk__in=drafts.values("item_id")).exclude(Exists(live_elsewhere))
    mine = NuggetTask.objects.filter(item=OuterRef("pk"), person=person, stage=stage)
    return items_needing_nuggets().exclude(Exists(live_elsewhere)).exclude(Exists(mine))


def _take(*, person: User, stage: str, now: datetime) -> NuggetTask | None:
    tried: list[int] = []
    for _ in range(20):
        # Race: several experts asking at once. SKIP LOCKED makes each lock a different item instead of all
        # queueing on (and then fighting over) the first one; the slot is checked again under the lock.
        item = (
            _candidates(person=person, stage=stage, now=now)
            .exclude(pk__in=tried)
            .order_by("queue_key", "pk")
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if item is None:
            return None
        free, nugget_set = _slot_claim(item=item, person=person, stage=stage, now=now)
        if not free:
            tried.append(item.pk)
            continue
        task, _ = NuggetTask.objects.update_or_create(
            item=item,
            person=person,
            stage=stage,
            defaults={
                "status": TaskStatus.ACTIVE,
                "nugget_set": nugget_set,
                "expires_at": now + timedelta(seconds=_lease_seconds()),
                "finished_at": None,
            },
        )
        audit_record(
            actor=person,
            obj=item,
            action="nugget_task_taken",
            after={"stage": stage, "task": task.pk, "version": nugget_set.version if nugget_set else None},
        )
        return NuggetTask.objects.select_related("item", "item__passage", "nugget_set").get(pk=task.pk)
    return None


def _slot_claim(*, item: QAItem, person: User, stage: str, now: datetime) -> tuple[bool, NuggetSet | None]:
    """Under the item's row lock: whether the slot is free, and the version to validate (None for writing).
    Leases on the slot that ran out are ended on the way."""
    for stale in NuggetTask.objects.filter(item=item, stage=stage, status=TaskStatus.ACTIVE, expires_at__lte=now):
        _task_end(stale, TaskStatus.RELEASED, now)
    if NuggetTask.objects.filter(item=item, stage=stage).filter(_live(now)).exists():
        return False, None
    versions = NuggetSet.objects.filter(item=item)
    if stage == Stage.WRITE:
        return not versions.exists(), None
    draft = versions.filter(status=NuggetSet.Status.DRAFT).exclude(created_by=person).first()
    return draft is not None, draft


def _task_end(task: NuggetTask, status: str, now: datetime) -> None:
    task.status, task.finished_at = status, now
    task.save(update_fields=["status", "finished_at"])


def _task_lock_own(*, task_id: int, person: User, stage: str) -> NuggetTask:
    task = NuggetTask.objects.select_for_update().filter(pk=task_id).first()
    if task is None or task.person_id != person.pk:
        raise NotFound("This is not your nugget task.")
    if task.stage != stage:
        raise Conflict(f"This task is for {task.get_stage_display().lower()}.", code="wrong_stage")
    if task.status == TaskStatus.SUBMITTED:
        raise Conflict("You have already sent this.", code="already_submitted")
    return task


def _slot_still_mine(task: NuggetTask, now: datetime) -> None:
    """A lease that ran out still counts while nobody else took the item (like a late review)."""
    if (
        NuggetTask.objects.filter(item_id=task.item_id, stage=task.stage)
        .exclude(pk=task.pk)
        .filter(_live(now))
        .exists()
    ):
        raise Conflict(
            "Your time on this item ran out and another expert has taken it; your text is kept below to copy.",
            code="lease_taken",
        )


def nugget_submit_draft(*, task_id: int, person: User, nuggets: Iterable[Mapping[str, object]]) -> NuggetSet:
    """Store the nuggets ``person`` wrote on their writing lease as a draft (version 1, origin ``authored``)."""
    facts = nugget_list_check(nuggets)
    now = timezone.now()
    with transaction.atomic():
        task = _task_lock_own(task_id=task_id, person=person, stage=Stage.WRITE)
        item = QAItem.objects.select_for_update().get(pk=task.item_id)
        if not may_write_nuggets(user_roles(person)):
            raise NotAllowed(NOT_AN_EXPERT)
        _slot_still_mine(task, now)
        if NuggetSet.objects.filter(item=item).exists():
            raise Conflict(
                f"Item {item.uid} received nuggets meanwhile (an import); your text is kept below to copy.",
                code="nuggets_exist",
            )
        nugget_set = nugget_version_create(
            item=item, nuggets=facts, status=NuggetSet.Status.DRAFT, origin=NuggetSet.Origin.AUTHORED, created_by=person
        )
        task.nugget_set = nugget_set
        _task_end(task, TaskStatus.SUBMITTED, now)
    return nugget_set


def nugget_validate(
    *, task_id: int, person: User, nuggets: Iterable[Mapping[str, object]] | None = None, note: str = ""
) -> NuggetSet:
    """The validator's decision on the draft of their lease. ``nuggets`` None (or the same list): accepted, the
    draft becomes the validated version. A changed list (edited, merged, split, dropped, added, re-rated) becomes
    a new version (origin ``validation``) and both versions go to an adjudicator. Returns the validated or the new
    disputed version."""
    facts = None if nuggets is None else nugget_list_check(nuggets)
    now = timezone.now()
    with transaction.atomic():
        task = _task_lock_own(task_id=task_id, person=person, stage=Stage.VALIDATE)
        item = QAItem.objects.select_for_update().get(pk=task.item_id)
        if task.nugget_set_id is None:  # a validation lease always names its draft; a guard for the type checker
            raise Conflict("This task has no nuggets to validate.", code="wrong_stage")
        draft = NuggetSet.objects.select_for_update().get(pk=task.nugget_set_id)
        if not may_validate_nuggets(user_roles(person), person_id=person.pk, author_id=draft.created_by_id):
            raise NotAllowed(OWN_VERSION if draft.created_by_id == person.pk else NOT_AN_EXPERT)
        _slot_still_mine(task, now)
        note = (note or "").strip()
        if facts is None or nugget_lists_equal(facts, nugget_version_facts(draft)):
            result = nugget_version_move(
                nugget_set=draft, action=NuggetAction.ACCEPT, actor=person, note=note, item_uid=item.uid
            )
        else:
            nugget_version_move(
                nugget_set=draft, action=NuggetAction.CHANGE, actor=person, note=note, item_uid=item.uid
            )
            result = nugget_version_create(
                item=item,
                nuggets=facts,
                status=NuggetSet.Status.DISPUTED,
                origin=NuggetSet.Origin.VALIDATION,
                created_by=person,
                based_on=draft,
                note=note,
            )
        _task_end(task, TaskStatus.SUBMITTED, now)
    return result


def nugget_dispute_participants(versions: Iterable[NuggetSet]) -> set[int]:
    """Who took part in a disagreement: the authors (or importers) of both versions; the validator is the author
    of the changed one."""
    return {v.created_by_id for v in versions if v.created_by_id is not None}


def nugget_adjudicate_check(user: User, item: QAItem, versions: Iterable[NuggetSet]) -> None:
    """Who may settle the disagreement on ``item``; raises :class:`NotAllowed` with the reason.

    Nobody who took part in it (wrote, imported or validated a version), whatever their roles; adjudicators; and,
    so that nothing is ever stuck (docs/design.md §6), organizers, but only when no adjudicator may settle it
    (each took part, or there is none)."""
    participants = nugget_dispute_participants(versions)
    if nugget_conflict_of_interest(person_id=user.pk, participant_ids=participants):
        raise NotAllowed(NUGGET_CONFLICT_OF_INTEREST.format(uid=item.uid), code="conflict_of_interest")
    roles = user_roles(user)
    if may_adjudicate_nuggets(roles):
        return
    if may_import_nuggets(roles):  # the organizers
        free = User.objects.filter(groups__name=Role.ADJUDICATOR, is_active=True).exclude(pk__in=participants)
        if not free.exists():
            return
        raise NotAllowed(
            f"An adjudicator who took no part in item {item.uid}'s nuggets can settle them; organizers settle only "
            "disagreements no adjudicator may settle.",
            code="adjudicator_available",
        )
    raise NotAllowed(NOT_AN_ADJUDICATOR)


def nugget_adjudication_blocked(item: QAItem) -> bool:
    """Whether no adjudicator may settle the item's nugget disagreement (each took part, or there is none)."""
    participants = nugget_dispute_participants(NuggetSet.objects.filter(item=item, status=NuggetSet.Status.DISPUTED))
    return not User.objects.filter(groups__name=Role.ADJUDICATOR, is_active=True).exclude(pk__in=participants).exists()


def nugget_adjudicate(
    *,
    item: QAItem,
    adjudicator: User,
    pick_version: int,
    note: str,
    nuggets: Iterable[Mapping[str, object]] | None = None,
) -> NuggetSet:
    """Settle a disagreement: the picked version (``pick_version``, one of the two disputed) becomes the validated
    one; with ``nuggets``, the adjudicator's own final list (based on the picked version) does instead. The other
    version(s) are superseded. ``note`` (why) is required."""
    note = (note or "").strip()
    if not note:
        raise DomainError("say why you decided so", code="empty_note")
    facts = None if nuggets is None else nugget_list_check(nuggets)
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        disputed = list(
            NuggetSet.objects.select_for_update()
            .filter(item=locked, status=NuggetSet.Status.DISPUTED)
            .order_by("version")
        )
        if not disputed:
            raise Conflict(f"Item {locked.uid}'s nuggets are not waiting for an adjudicator.", code="not_disputed")
        nugget_adjudicate_check(adjudicator, locked, disputed)
        picked = next((v for v in disputed if v.version == pick_version), None)
        if picked is None:
            raise DomainError(f"pick version {' or '.join(str(v.version) for v in disputed)}", code="invalid_version")
        if facts is not None and not nugget_lists_equal(facts, nugget_version_facts(picked)):
            for version in disputed:
                nugget_version_move(
                    nugget_set=version, action=NuggetAction.SET_ASIDE, actor=adjudicator, note=note, item_uid=locked.uid
                )
            return nugget_version_create(
                item=locked,
                nuggets=facts,
                status=NuggetSet.Status.VALIDATED,
                origin=NuggetSet.Origin.ADJUDICATION,
                created_by=adjudicator,
                based_on=picked,
                note=note,
            )
        for version in disputed:
            if version.pk != picked.pk:
                nugget_version_move(
                    nugget_set=version, action=NuggetAction.SET_ASIDE, actor=adjudicator, note=note, item_uid=locked.uid
                )
        return nugget_version_move(
            nugget_set=picked, action=NuggetAction.PICK, actor=adjudicator, note=note, item_uid=locked.uid
        )


def nugget_task_release(*, task_id: int, person: User) -> None:
    """The holder puts the item back (skip); it is not offered to them again."""
    with transaction.atomic():
        task = NuggetTask.objects.select_for_update().filter(pk=task_id, person=person).first()
        if task is None or task.status != TaskStatus.ACTIVE:
            return
        _task_put_back(task, person=person, now=timezone.now())


def _task_put_back(task: NuggetTask, *, person: User, now: datetime) -> None:
    _task_end(task, TaskStatus.RELEASED, now)
    audit_record(actor=person, obj=task.item, action="nugget_task_released", after={"stage": task.stage})


def nugget_tasks_expire(*, now: datetime | None = None) -> int:
    """Sweep: end nugget leases that ran out. Safe to run any time (the queue also treats them as free)."""
    now = now or timezone.now()
    return NuggetTask.objects.filter(status=TaskStatus.ACTIVE, expires_at__lte=now).update(
        status=TaskStatus.RELEASED, finished_at=now
    )


def nugget_round_open(item: QAItem) -> bool:
    return NuggetSet.objects.filter(item=item, status__in=OPEN_STATES).exists()
