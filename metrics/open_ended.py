"""What is compared for each open-ended type (docs/metric.md §5.1, §5.6).

* short: ``answer.strip()`` against the whole response, stripped and lower-cased;
* short_inverse: ``incorrect_explanation.strip()`` against the lower-cased response less a leading
  ``incorrect explanation:``;
* multi_hop: ``answer.strip()`` (the final answer only) against the whole lower-cased response (answer and
  reasoning);
* multi_hop_inverse: the first gold line containing "Explanation", after its first ":", against the text after
  the first "incorrect reasoning explanation" or "explanation" of the response (not lower-cased).

short, short_inverse and multi_hop score 0 (and BLEU/ROUGE/METEOR 0) when the lower-cased response equals the
lower-cased question. "Final Answer:" / "Reasoning:" are *not* removed (quirk §7.5); multi-hop compares the
whole response with the final answer only (§7.6).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .closed import paragraph_id
from .gold import explanation_line_text, gold_text, reasoning_lines
from .normalise import to_text
from .semantic import MAX_STEP_DISTANCE, step_penalty

OPEN_TYPES = ("short", "short_inverse", "multi_hop", "multi_hop_inverse")

_GOLD_STEP_LINE_RE = re.compile(r"\bStep\b.*?(\d+)", flags=re.IGNORECASE)
_STEP_NUMBER_RE = re.compile(r"step\s*([0-9]+)", flags=re.IGNORECASE)
_PRED_STEP_RE = re.compile(r"(?:incorrect reasoning step\s*[:\-]?\s*|step\s*[:\-]?\s*)(\d+)", flags=re.IGNORECASE)
_PRED_EXPL_SPLIT_RE = re.compile(r"(?:incorrect reasoning explanation|explanation)\s*[:\-]?", flags=re.IGNORECASE)
_SHORT_INVERSE_HEADER_RE = re.compile(r"^incorrect explanation:\s*", flags=re.IGNORECASE)

#: CPython's default cap on the digits ``int()`` converts (``sys.int_info.default_max_str_digits``): the public
#: scorer's ``int()`` of a longer step number raises ValueError and the item is dropped. Checked here, not left
#: to ``int()``, so the work stays bounded whatever cap this process runs with.
MAX_STEP_DIGITS = 4300


@dataclass
class OpenItem:
    """One open-ended item ready for scoring; ``question_echo`` items score 0 without being compared."""

    index: int
    paragraph_id: str
    expected: str
    prediction: str
    question_echo: bool = False
    expected_step: int | None = None
    predicted_step: int | None = None
    #: multi-hop inverse: the step penalty (§5.6) the semantic score is multiplied by.
    penalty: float = 1.0
    #: Why the public scorer would drop this item (its per-item ``except`` fired); such an item is not compared.
    error: str | None = None

    @property
    def step_distance(self) -> int | None:
        if self.expected_step is None or self.predicted_step is None:
            return None
        return abs(self.expected_step - self.predicted_step)

    @property
    def step_correct(self) -> bool:
        """True when the steps agree, also when both are unparseable (as in the public scorer)."""
        return self.expected_step == self.predicted_step


def gold_step_and_explanation(incorrect_reasoning_step: Any) -> tuple[int | None, str]:
    """§5.6 gold: step = first integer after "step" in the first line matching ``\\bStep\\b.*?(\\d+)``;
    explanation = text after the first ":" of the first line containing "Explanation"."""
    lines = reasoning_lines(incorrect_reasoning_step)
    step_line = next((line for line in lines if _GOLD_STEP_LINE_RE.search(line)), "")
    match = _STEP_NUMBER_RE.search(step_line)
    return (_step_number(match.group(1)) if match else None), explanation_line_text(lines)


def predicted_step(response: str) -> int | None:
    """§5.6: first ``incorrect reasoning step[:-] N`` or ``step[:-] N`` anywhere in the response (quirk §7.7)."""
    match = _PRED_STEP_RE.search(response)
    return _step_number(match.group(1)) if match else None


def _step_number(digits: str) -> int:
    if len(digits) > MAX_STEP_DIGITS:
        raise ValueError(f"a step number of {len(digits)} digits (more than {MAX_STEP_DIGITS})")
    return int(digits)


def multi_hop_inverse_item(index: int, gold: dict, response: str) -> OpenItem:
    """§5.6 for one item. The public scorer wraps each item in ``try``/``except`` and drops one whose step
    parsing or penalty raises (a step number ``int()`` refuses, or a distance whose factor overflows): the item
    leaves the type's mean, its step rate and its BLEU/ROUGE/METEOR averages. Such an item gets ``error`` (the
    item counted from 1, the field, the number) and no steps, and is never compared."""
    raw = to_text(response).strip()
    item = OpenItem(index, paragraph_id(gold), "", predicted_explanation(raw))
    try:
        item.expected_step, item.expected = gold_step_and_explanation(gold.get("incorrect_reasoning_step", ""))
    except ValueError as exc:
        return _dropped(item, f"incorrect_reasoning_step has {exc}")
    try:
        item.predicted_step = predicted_step(raw)
    except ValueError as exc:
        return _dropped(item, f"the response has {exc}")
    try:
        item.penalty = step_penalty(item.step_distance)
    except OverflowError:
        return _dropped(
            item,
            f"the response names step {item.predicted_step}, {item.step_distance} steps from the gold step "
            f"{item.expected_step} (the penalty is defined up to {MAX_STEP_DISTANCE})",
        )
    return item


def _dropped(item: OpenItem, why: str) -> OpenItem:
    item.expected_step = item.predicted_step = None
    item.error = f"item {item.index + 1} dropped from the type's scores, as the public scorer drops it: {why}"
    return item


def predicted_explanation(response: str) -> str:
    """§5.6: text after the first "incorrect reasoning explanation" or "explanation" (any case, optional
    ":"/"-"), else the whole response; the split also fires on "explanation" inside the model's own text."""
    parts = _PRED_EXPL_SPLIT_RE.split(response, maxsplit=1)
    return parts[1].strip() if len(parts) == 2 else response


def prepare_items(qa_type: str, inputs: Sequence[dict], responses: Sequence[str]) -> list[OpenItem]:
    """Build the compared strings of every item of ``qa_type`` (responses already cleaned, §3)."""
    items = []
    for index, (gold, response) in enumerate(zip(inputs, responses, strict=True)):
        if qa_type == "multi_hop_inverse":
            items.append(multi_hop_inverse_item(index, gold, response))
            continue
        pid = paragraph_id(gold)
        predicted = to_text(response).strip().lower()
        question = str(gold.get("question", "")).strip().lower()
        expected = gold_text(qa_type, gold)
        echo = predicted == question
        if qa_type == "short_inverse" and not echo:
            predicted = _SHORT_INVERSE_HEADER_RE.sub("", predicted)
        items.append(OpenItem(index, pid, expected, predicted, echo))
    return items
