"""Unfinished rankings kept on the server, so a physician can go on from another device.

A draft belongs to one task, and a task to one ranker: only that ranker reads or writes it (callers pass the task
found by ``selectors.task_for_ranker``). It holds slot letters and the ranker's own choices, nothing that names a
system; it is deleted when the ranking is submitted (``submissions.task_submit``). Nugget studies keep the nugget
labels (``nug_<slot>_<position>``) and sentence marks (``mark_<slot>_<index>``) in the same draft; span studies
the marked spans (``spans``, checked as a submission's are, :mod:`ranking.rules.spans`) and the "no hallucination in
this answer" confirmations (``clean_<slot>``).
"""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from metrics.nuggets import LABELS
from portal.errors import Conflict, DomainError
from ranking.models import RankingDraft, RankingTask
from ranking.rules.nuggets import SENTENCE_KINDS
from ranking.rules.spans import spans_check
from ranking.services.submissions import task_slots, task_texts

MAX_TEXT = 5000
# The ranking page's own field names (see ranking/forms.py answers_from_post), and nothing else.
_FIELD = re.compile(
    r"^(?:(?:tag|hall|hallkind|harm|tie|clean)_[A-Z]{1,2}|unblinding_guess|comment|nug_[A-Z]{1,2}_\d{1,4}|mark_[A-Z]{1,2}_\d{1,5})$"
)
# Nugget labels and sentence marks keep only the values the assessment accepts.
_CHOICES = {"nug_": LABELS, "mark_": SENTENCE_KINDS}


class BadDraft(DomainError):
    code = "bad_draft"


def draft_clean(*, task: RankingTask, data: object) -> dict:
    """The draft as stored: known keys only, slots of this task only; anything else is refused with the reason."""
    if not isinstance(data, dict):
        raise BadDraft("the draft must be an object")
    slots = task_slots(task)
    order = data.get("order", [])
    if not isinstance(order, list) or not all(isinstance(s, str) and s in slots for s in order):
        raise BadDraft("order: only this question's answer letters")
    if len(set(order)) != len(order):
        raise BadDraft("order: each answer once")
    fields = data.get("fields", {})
    if not isinstance(fields, dict):
        raise BadDraft("fields must be an object")
    clean_fields = {}
    for name, value in fields.items():
        if not isinstance(name, str) or not _FIELD.match(name):
            raise BadDraft(f"fields: unknown field {str(name)[:40]!r}")
        if not isinstance(value, (str, bool)):
            raise BadDraft(f"fields: {name} must be text or yes/no")
        choices = next((c for prefix, c in _CHOICES.items() if name.startswith(prefix)), None)
        if choices is not None and value not in choices:
            raise BadDraft(f"fields: {name} must be one of {', '.join(choices)}")
        clean_fields[name] = value[:MAX_TEXT] if isinstance(value, str) else value
    elapsed = data.get("elapsed", 0)
    if not isinstance(elapsed, (int, float)) or elapsed < 0:
        raise BadDraft("elapsed must be a number of milliseconds")
    cleaned = {
        "order": order,
        "ordered": bool(data.get("ordered", False)),
        "fields": clean_fields,
        "elapsed": int(min(elapsed, 24 * 3600 * 1000)),
    }
    if data.get("spans"):
        lengths = {slot: len(text) for slot, text in task_texts(task).items()}
        spans, problems = spans_check(slots=slots, text_lengths=lengths, spans=data["spans"], every_answer=False)
        if problems:
            raise BadDraft("spans: " + "; ".join(problems))
        cleaned["spans"] = {slot: [span.as_dict() for span in marks] for slot, marks in spans.items() if marks}
    return cleaned


def draft_save(*, task: RankingTask, data: object) -> RankingDraft:
    """Store (replace) the draft of a task the ranker still holds."""
    if task.status != RankingTask.Status.LEASED:
        raise Conflict("This question is no longer open for you.", code="not_leased")
    data = draft_clean(task=task, data=data)
    try:
        with transaction.atomic():
            draft, _ = RankingDraft.objects.update_or_create(task=task, defaults={"data": data})
    except IntegrityError as exc:  # the task went away meanwhile
        raise Conflict("This question is no longer open for you.", code="not_leased") from exc
    return draft


def draft_get(*, task: RankingTask) -> RankingDraft | None:
    return RankingDraft.objects.filter(task=task).first()
