"""The gold answer of one dataset record as text, read the way the scorer reads it (docs/metric.md §4, §5.1).

The one home of "which text is the right answer" per QA type: the scorer compares responses with it, and the
ranking app shows it to physicians as the reference answer (and scores it as the reference pseudo-system), so both
must pick the same text. Letter case is kept; the scorer lower-cases or normalises when it compares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .normalise import option_label, strip_option_prefixes

# The first gold line naming the explanation, in any case, as the public scorer matches it (§5.6).
_EXPLANATION_LINE_RE = re.compile(r"Explanation", flags=re.IGNORECASE)

# The portal's name of the short-answer type; the metric calls it "short" (the harness's file stem).
_TYPE_ALIASES = {"short_answer": "short"}


def gold_options(record: Mapping[str, Any]) -> dict[str, str]:
    """{letter: option text} of a multiple-choice record, labelled as the scorer labels them (§2.2)."""
    return {option_label(i): str(o) for i, o in enumerate(record.get("options") or [])}


def multiple_choice_gold(record: Mapping[str, Any]) -> str:
    """``correct_answer``, or the option it names when it is a letter (any case), as the scorer reads it (§4.2)."""
    raw = str(record.get("correct_answer", "")).strip()
    return gold_options(record).get(raw.upper(), raw)


def list_gold(record: Mapping[str, Any]) -> list[str]:
    """The correct options of a list record; a single letter stands for its option (prefix ``A. `` removed, §4.3)."""
    letter_to_text = {
        option_label(i): t for i, t in enumerate(strip_option_prefixes(list(record.get("options") or [])))
    }
    answers = [str(a).strip() for a in record.get("answer") or []]
    return [letter_to_text.get(a.upper(), a) if len(a) == 1 else a for a in answers]


def explanation_line_text(lines: Sequence[str]) -> str:
    """Multi-hop inverse: the text after the first ":" of the first line containing "Explanation" (any case);
    empty when no line does (the scorer then compares with an empty gold, §5.6)."""
    line = next((line for line in lines if _EXPLANATION_LINE_RE.search(line)), "")
    return line.split(":", 1)[-1].strip()


def reasoning_lines(value: Any) -> list[str]:
    """``incorrect_reasoning_step`` as lines: a list as it is, a string split on line breaks (blank lines out)."""
    if isinstance(value, list):
        return [str(line) for line in value]
    return [line.strip() for line in str(value).splitlines() if line.strip()]


def gold_text(qa_type: str, record: Mapping[str, Any]) -> str:
    """The gold answer of ``record`` (a dataset record: answer, options, correct_answer, incorrect_explanation,
    incorrect_reasoning_step) as one text.

    true/false, short, multi-hop: ``answer``; multiple choice: :func:`multiple_choice_gold`; list: :func:`list_gold`
    joined with ", "; short inverse: ``incorrect_explanation``; multi-hop inverse: :func:`explanation_line_text`;
    other benchmarks (PromptCBLUE): ``target``, else ``answer``.
    """
    match _TYPE_ALIASES.get(qa_type, qa_type):
        case "multiple_choice":
            return multiple_choice_gold(record)
        case "list":
            return ", ".join(list_gold(record))
        case "short_inverse":
            return str(record.get("incorrect_explanation", "")).strip()
        case "multi_hop_inverse":
            return explanation_line_text(reasoning_lines(record.get("incorrect_reasoning_step", "")))
        case "true_false" | "short" | "multi_hop":
            return str(record.get("answer", "")).strip()
        case _:
            return str(record.get("target") or record.get("answer") or "").strip()
