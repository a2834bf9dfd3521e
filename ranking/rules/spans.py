"""What makes a submitted set of hallucination spans valid (pure, no Django).

Input, per task: ``{slot letter: [{"start", "end", "kind", "note"?}, ...]}``: half-open ``[start, end)`` offsets in
characters (Unicode code points, Python's string indices) into the answer text shown. The page's script converts the
browser's UTF-16 offsets and applies the same checks before sending; only this module decides.

Rules: whole numbers inside the text and not empty (:func:`metrics.spans.check_span`); kind one of
:data:`metrics.spans.KINDS`; note at most :data:`MAX_NOTE` characters, storable (:mod:`records.text`); at most :data:`MAX_SPANS` marks per answer.
Overlapping or touching marks of the same kind are merged into one (their distinct notes joined with " / "); marks of
*different* kinds that overlap or touch are refused: which kind the merged stretch has is the physician's call, not
ours (the page never sends them: a new mark there absorbs the marks it overlaps or touches and takes its kind).
In a span study every answer must be present: a non-empty list marks its hallucinated words, an empty list says "read,
nothing hallucinated" (so a forgotten answer is never recorded as clean).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from metrics.spans import KINDS, check_span, merge_spans
from records.text import refused_character

MAX_SPANS = 200
MAX_NOTE = 1000
# Ties of the item-level kind go to the more serious one.
KIND_PRECEDENCE = ("intrinsic", "extrinsic", "other")


@dataclass(frozen=True)
class MarkedSpan:
    start: int
    end: int
    kind: str
    note: str = ""

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "kind": self.kind, "note": self.note}


def spans_check(
    *, slots: Sequence[str], text_lengths: dict[str, int], spans: object, every_answer: bool = True
) -> tuple[dict[str, list[MarkedSpan]], list[str]]:
    """Validate and merge the spans of a task's answers; returns ``{slot: [MarkedSpan, ...]}`` and every problem.

    ``text_lengths`` gives each slot's answer length in characters. ``every_answer`` (a submission) requires a list
    for every slot; a draft passes False. Problems name the answer letter and the mark's number in the list sent
    (from 1).
    """
    problems: list[str] = []
    if spans in (None, ""):
        spans = {}
    if not isinstance(spans, dict):
        return {}, ["spans must be an object keyed by answer letter"]
    unknown = sorted(str(s) for s in set(spans) - set(slots))
    if unknown:
        problems.append(f"spans: unknown answer(s) {', '.join(unknown)}")
    parsed: dict[str, list[MarkedSpan]] = {}
    missing = [slot for slot in slots if slot not in spans]
    if every_answer and missing:
        problems.append(
            f"answer {', '.join(missing)}: mark the hallucinated words, or confirm there is no hallucination "
            "(tick “No hallucination in this answer”; in the API an empty list)"
        )
    for slot in slots:
        if slot in spans:
            parsed[slot] = _answer_check(slot, spans[slot], text_lengths.get(slot, 0), problems)
    return parsed, problems


def _answer_check(slot: str, given: object, text_length: int, problems: list[str]) -> list[MarkedSpan]:
    if not isinstance(given, list):
        problems.append(f"answer {slot}: its marks must be a list")
        return []
    if len(given) > MAX_SPANS:
        problems.append(f"answer {slot}: at most {MAX_SPANS} marks per answer (got {len(given)})")
        return []
    numbered: list[tuple[int, MarkedSpan]] = []
    for number, entry in enumerate(given, start=1):
        where = f"answer {slot}, mark {number}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object with start, end and kind")
            continue
        try:
            start, end = check_span(entry.get("start"), entry.get("end"), text_length)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        kind = entry.get("kind")
        if kind not in KINDS:
            problems.append(f"{where}: kind {str(kind)[:30]!r} is not one of {', '.join(KINDS)}")
            continue
        note = entry.get("note", "")
        if note is None:
            note = ""
        if not isinstance(note, str):
            problems.append(f"{where}: the note must be text")
            continue
        if len(note) > MAX_NOTE:
            problems.append(f"{where}: the note is longer than {MAX_NOTE} characters ({len(note)})")
            continue
        if why := refused_character(note):
            problems.append(f"{where}: the note {why}")
            continue
        numbered.append((number, MarkedSpan(start, end, kind, note.strip())))
    return _merge(slot, numbered, problems)


def _merge(slot: str, numbered: list[tuple[int, MarkedSpan]], problems: list[str]) -> list[MarkedSpan]:
    """Same-kind neighbours merged; overlapping or touching marks of different kinds refused."""
    ordered = sorted(numbered, key=lambda pair: (pair[1].start, pair[1].end))
    reach: tuple[int, MarkedSpan] | None = None  # the mark reaching furthest right so far
    conflict = False
    for number, span in ordered:
        if reach is not None and span.start <= reach[1].end and span.kind != reach[1].kind:
            problems.append(
                f"answer {slot}, marks {min(number, reach[0])} and {max(number, reach[0])} overlap or touch but have "
                f"different kinds ({reach[1].kind}, {span.kind}): give them one kind, or leave a gap between them"
            )
            conflict = True
        if reach is None or span.end > reach[1].end:
            reach = (number, span)
    if conflict:
        return []
    merged: list[MarkedSpan] = []
    for kind in KINDS:
        of_kind = [span for _, span in ordered if span.kind == kind]
        for start, end in merge_spans((s.start, s.end) for s in of_kind):
            notes = list(dict.fromkeys(s.note for s in of_kind if s.note and start <= s.start and s.end <= end))
            merged.append(MarkedSpan(start, end, kind, " / ".join(notes)[:MAX_NOTE]))
    return sorted(merged, key=lambda s: s.start)


def derived_label(spans: Iterable[MarkedSpan]) -> tuple[bool, str]:
    """The answer's item-level label from its spans: (any span, the kind covering most characters, ties going to
    intrinsic, then extrinsic, then other); ``(False, "")`` without spans."""
    covered = {kind: 0 for kind in KIND_PRECEDENCE}
    for span in spans:
        covered[span.kind] += span.end - span.start
    if not any(covered.values()):
        return False, ""
    return True, max(KIND_PRECEDENCE, key=lambda kind: (covered[kind], -KIND_PRECEDENCE.index(kind)))
