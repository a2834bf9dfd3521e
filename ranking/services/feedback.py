"""Feedback from the preference study to vetting: reference answers the physicians judged poorly.

A question is flagged when a majority of the rankers who submitted put the reference answer in the bottom half
(:func:`ranking.rules.bottom_half`), or when any of them gave it the worst tag of the scale. Organizers send a
flag to vetting as a dispute with one click (:func:`reference_flag_send`).
"""

from __future__ import annotations

import importlib
import logging
from collections import defaultdict
from collections.abc import Callable

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from portal.audit import audit_record
from portal.models import User
from ranking.models import AnswerJudgement, RankingTask, ReferenceFlag, Study, StudyAnswer
from ranking.rules import bottom_half

logger = logging.getLogger(__name__)
DISPUTES_MODULE = "annotation.services.disputes"
DISPUTE_CATEGORY = "other"  # the text says what the physicians found; an adjudicator re-categorises


def reference_flags_detect(*, study: Study) -> list[ReferenceFlag]:
    """Create, refresh or drop (when unsent and no longer deserved) the study's reference flags; return them."""
    if not study.include_reference:
        return []
    worst = study.tag_scale[-1]
    n_answers = dict(
        StudyAnswer.objects.filter(question__study=study)
        .values("question_id")
        .annotate(n=Count("id"))
        .values_list("question_id", "n")
    )
    per_question: dict[int, list[tuple[int, str]]] = defaultdict(list)
    rows = AnswerJudgement.objects.filter(
        task__study=study, task__status=RankingTask.Status.SUBMITTED, answer__system__is_reference=True
    ).values_list("answer__question_id", "rank", "tag")
    for question_id, rank, tag in rows:
        per_question[question_id].append((rank, tag))
    wanted: dict[int, list[str]] = {}
    for question_id, judgements in per_question.items():
        n = n_answers[question_id]
        low = sum(bottom_half(rank, n) for rank, _ in judgements)
        bad = sum(tag == worst for _, tag in judgements)
        reasons = []
        if low * 2 > len(judgements):
            reasons.append(f"ranked in the bottom half by {low} of {len(judgements)} rankers")
        if bad:
            reasons.append(f"tagged {worst!r} by {bad} of {len(judgements)} rankers")
        if reasons:
            wanted[question_id] = reasons
    with transaction.atomic():
        existing = {f.question_id: f for f in ReferenceFlag.objects.select_for_update().filter(question__study=study)}
        for question_id, stored in existing.items():
            if question_id not in wanted and stored.sent_at is None:
                stored.delete()
        for question_id, reasons in wanted.items():
            flag = existing.get(question_id)
            if flag is None:
                ReferenceFlag.objects.create(question_id=question_id, reasons=reasons)
            elif flag.reasons != reasons:
                ReferenceFlag.objects.filter(pk=flag.pk).update(reasons=reasons)
    return list(
        ReferenceFlag.objects.filter(question__study=study)
        .select_related("question__item")
        .order_by("question__position")
    )


def reference_flag_send(*, flag: ReferenceFlag, user: User) -> ReferenceFlag:
    """Send a flagged question to vetting as a dispute (once; a second call changes nothing).

    Records an audit entry and marks the flag sent, in one transaction with filing the vetting dispute through
    ``annotation.services.disputes.dispute_file`` (looked up at run time, so the ranking app still works where
    vetting disputes are absent); the dispute's pk is kept in ``dispute_ref``. A refused dispute (a
    :class:`DomainError`) leaves the flag unsent.
    """
    with transaction.atomic():
        flag = (
            ReferenceFlag.objects.select_for_update()
            .select_related("question__item", "question__study")
            .get(pk=flag.pk)
        )
        if flag.sent_at is not None:
            return flag
        item = flag.question.item
        reason = f"Preference study {flag.question.study.name!r}: the reference answer was " + "; ".join(flag.reasons)
        dispute_file = _dispute_filer()
        if dispute_file is not None:
            dispute = dispute_file(raised_by=user, category=DISPUTE_CATEGORY, text=reason, item=item)
            flag.dispute_ref = str(getattr(dispute, "pk", dispute) or "")
        flag.sent_at, flag.sent_by = timezone.now(), user
        flag.save(update_fields=["sent_at", "sent_by", "dispute_ref"])
        audit_record(
            actor=user,
            obj=item,
            action="reference_sent_to_vetting",
            after={"reasons": flag.reasons, "study": flag.question.study_id, "dispute": flag.dispute_ref or None},
            note=reason,
        )
    return flag


def _dispute_filer() -> Callable[..., object] | None:
    try:
        module = importlib.import_module(DISPUTES_MODULE)
    except ModuleNotFoundError:
        logger.info("%s is not available; the flag is recorded without a vetting dispute", DISPUTES_MODULE)
        return None
    return getattr(module, "dispute_file", None)
