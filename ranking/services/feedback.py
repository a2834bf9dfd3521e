"""Feedback from the preference study to vetting: reference answers the physicians judged poorly.

Which questions are flagged is :func:`ranking.rules.rankings.reference_judged_poorly` (the study report counts with the same
rule): a majority of the rankers put the reference in the bottom half, or any gave it the worst tag. Organizers send a
flag to vetting as a dispute with one click (:func:`reference_flag_send`).
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotation.services.disputes import dispute_file
from portal.audit import audit_record
from portal.models import User
from ranking.models import AnswerJudgement, RankingTask, ReferenceFlag, Study, StudyAnswer
from ranking.rules.rankings import reference_judged_poorly

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
        if reasons := reference_judged_poorly(judgements, n_answers=n_answers[question_id], worst_tag=worst):
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

    Records an audit entry and marks the flag sent, in one transaction with filing the vetting dispute
    (:func:`annotation.services.disputes.dispute_file`), which the flag then points to. A refused dispute (a
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
        flag.dispute = dispute_file(raised_by=user, category=DISPUTE_CATEGORY, text=reason, item=item)
        flag.sent_at, flag.sent_by = timezone.now(), user
        flag.save(update_fields=["sent_at", "sent_by", "dispute"])
        audit_record(
            actor=user,
            obj=item,
            action="reference_sent_to_vetting",
            after={"reasons": flag.reasons, "study": flag.question.study_id, "dispute": flag.dispute_id},
            note=reason,
        )
    return flag
