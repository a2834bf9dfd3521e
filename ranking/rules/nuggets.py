"""What makes a submitted nugget assessment complete and consistent (pure, no Django).

For every answer of a task the ranker labels every nugget of the item (support, partial or not_support) and may
mark any of the answer's sentences wrong or unsupported. The page's script says what is missing before sending;
only this module decides (a request that bypasses the page is checked here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from metrics.nuggets import LABELS

SENTENCE_KINDS = ("wrong", "unsupported")


@dataclass(frozen=True)
class Assessment:
    """Checked input: ``labels`` {slot: {nugget key: label}}, ``marks`` {slot: {sentence index: kind}}."""

    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    marks: dict[str, dict[int, str]] = field(default_factory=dict)


def _by_slot(value, what: str, slots: Sequence[str], problems: list[str]) -> dict:
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        problems.append(f"{what} must be an object keyed by answer letter")
        return {}
    unknown = sorted(str(s) for s in set(value) - set(slots))
    if unknown:
        problems.append(f"{what}: unknown answer(s) {', '.join(unknown)}")
    return value


def assessment_check(
    *,
    slots: Sequence[str],
    nugget_keys: Sequence[str],
    n_sentences: dict[str, int],
    labels: object,
    marks: object,
) -> tuple[Assessment, list[str]]:
    """Validate a task's nugget labels and sentence marks; returns the parsed assessment and every problem.

    ``nugget_keys`` are the question's nuggets in their order (a missing label is named by its 1-based position,
    the way the page numbers them); ``n_sentences`` the number of sentences of each slot's answer (indices run
    from 0). An empty mark means "not marked".
    """
    problems: list[str] = []
    label_input = _by_slot(labels, "nugget labels", slots, problems)
    mark_input = _by_slot(marks, "sentence marks", slots, problems)
    parsed = Assessment()
    for slot in slots:
        given = label_input.get(slot) or {}
        if not isinstance(given, dict):
            problems.append(f"answer {slot}: nugget labels must be an object keyed by nugget id")
            given = {}
        unknown = sorted(str(k) for k in set(given) - set(nugget_keys))
        if unknown:
            problems.append(f"answer {slot}: unknown nugget(s) {', '.join(unknown)}")
        missing = [str(i) for i, key in enumerate(nugget_keys, start=1) if given.get(key) in (None, "")]
        if missing:
            problems.append(f"answer {slot}: no label yet for nugget {', '.join(missing)} (of {len(nugget_keys)})")
        slot_labels = {}
        for key in nugget_keys:
            label = given.get(key)
            if label in (None, ""):
                continue
            if label not in LABELS:
                problems.append(
                    f"answer {slot}, nugget {key}: label {str(label)[:30]!r} is not one of {', '.join(LABELS)}"
                )
                continue
            slot_labels[key] = label
        parsed.labels[slot] = slot_labels
        parsed.marks[slot] = _marks_check(slot, mark_input.get(slot), n_sentences.get(slot, 0), problems)
    return parsed, problems


def _marks_check(slot: str, given: object, n: int, problems: list[str]) -> dict[int, str]:
    if given in (None, ""):
        return {}
    if not isinstance(given, dict):
        problems.append(f"answer {slot}: sentence marks must be an object keyed by sentence number")
        return {}
    marks: dict[int, str] = {}
    for raw_index, kind in given.items():
        if kind in (None, ""):
            continue
        try:
            index = int(raw_index)
        except (TypeError, ValueError):
            problems.append(f"answer {slot}: sentence number {str(raw_index)[:20]!r} is not a whole number")
            continue
        if not 0 <= index < n:
            span = f"numbered 0–{n - 1}" if n else "none"
            problems.append(f"answer {slot}: there is no sentence {index} (its sentences: {span})")
            continue
        if kind not in SENTENCE_KINDS:
            problems.append(
                f"answer {slot}, sentence {index}: mark {str(kind)[:30]!r} is not one of {', '.join(SENTENCE_KINDS)}"
            )
            continue
        marks[index] = kind
    return marks
