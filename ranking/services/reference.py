"""The reference pseudo-system: the items' gold answers as one more "system" whose outputs a study can show beside
the models' (blinded like any other answer), picked from each item as the scorer picks its gold answer."""

from __future__ import annotations

from annotation.models import QAItem
from annotation.qa_types import QAType
from metrics.gold import gold_text
from ranking.models import System, SystemOutput

_CHUNK = 2000  # outputs written per statement


def reference_text(item: QAItem) -> str:
    """The gold answer of ``item`` as text, picked as the scorer picks it (:func:`metrics.gold.gold_text`)."""
    return gold_text(item.qa_type, gold_record(item))


def gold_record(item: QAItem) -> dict:
    """The item's gold fields as a dataset record (the list type keeps its correct options under ``answer``)."""
    return {
        "answer": item.answer_list if item.qa_type == QAType.LIST else item.answer,
        "options": item.options,
        "correct_answer": item.correct_answer,
        "incorrect_explanation": item.incorrect_explanation,
        "incorrect_reasoning_step": item.incorrect_reasoning_step,
    }


def reference_system() -> System:
    """The reference pseudo-system (created on first use)."""
    system, _ = System.objects.get_or_create(
        name=System.REFERENCE_NAME, defaults={"is_reference": True, "notes": "Gold answers derived from the items."}
    )
    return system


def reference_outputs_ensure(*, item_ids: list[int]) -> int:
    """Create or refresh the reference system's outputs for ``item_ids``; returns how many were written."""
    system = reference_system()
    existing = dict(SystemOutput.objects.filter(system=system, item_id__in=item_ids).values_list("item_id", "response"))
    writes = []
    for item in QAItem.objects.filter(id__in=item_ids).only(
        "id",
        "qa_type",
        "answer",
        "answer_list",
        "options",
        "correct_answer",
        "incorrect_explanation",
        "incorrect_reasoning_step",
    ):
        text = reference_text(item)
        if existing.get(item.id) != text:
            writes.append(SystemOutput(system=system, item_id=item.id, response=text, raw=None))
    for start in range(0, len(writes), _CHUNK):
        SystemOutput.objects.bulk_create(
            writes[start : start + _CHUNK],
            update_conflicts=True,
            unique_fields=["system", "item"],
            update_fields=["response", "imported_at"],
        )
    return len(writes)
