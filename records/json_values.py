"""The one JSON parser of text people send (pure): what it refuses and how the place of a refusal is named.

Every reader of a user's JSON goes through :func:`json_decoder` (the strict JSONL reader :mod:`records.jsonl`, the
kernel's loader of uploaded files and API bodies ``portal.importing``, and through them every importer, page, API
and management command). The decoder keeps in place, as a :class:`Refused` marker, each value no reader may take:

* ``NaN`` / ``Infinity`` / ``-Infinity``, and a number literal too large for a float (``1e400``, which Python
  would read as infinity: stored, it removed every judge from a study report);
* an integer of more than :data:`MAX_INT_DIGITS` digits (``int()`` of thousands of digits is slow and no column
  holds it);
* a key given twice in one object (``{"verdict": "correct", "verdict": "incorrect"}``): Python keeps the last,
  other readers the first, so two readers of one file would disagree about what it says.

A marker rather than an exception, because the hooks see only a number's text or one object's keys: the walk over
the parsed document (:func:`refused_value`) finds the marker and names its record and field.
"""

from __future__ import annotations

import json
import math

#: Longest integer accepted: 15 digits is beyond any count, page or id in the formats, and every such integer is
#: exact as a JavaScript number and as a PostgreSQL bigint.
MAX_INT_DIGITS = 15


class Refused:
    """A value the parser refused, kept where it was so that its place can be named; ``reason`` says why."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Refused({self.reason!r})"


def _parse_int(text: str):
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return Refused(f"an integer of {digits:,} digits is not accepted (at most {MAX_INT_DIGITS})")
    return int(text)


def _parse_float(text: str):
    value = float(text)
    return value if math.isfinite(value) else Refused(f"the number {text[:30]} is out of range")


def _parse_constant(name: str):
    return Refused(f"{name} is not a number")


def _object(pairs: list[tuple[str, object]]) -> dict:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                # Marked under the repeated key itself, so the message names it as the field.
                record[key] = Refused("is given twice in one object (each key may appear once)")
                break
            seen.add(key)
    return record


def json_decoder() -> json.JSONDecoder:
    """A decoder with the refusing hooks (a new one per document: the C scanner's key cache is per decoder)."""
    return json.JSONDecoder(
        parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant, object_pairs_hook=_object
    )


def json_loads(text: str):
    """``text`` parsed with the refusing hooks; refused values are left in place as :class:`Refused` markers.
    Malformed JSON raises ``json.JSONDecodeError`` (and thousands of nested brackets ``RecursionError``)."""
    return json_decoder().decode(text)


def refused_value(value) -> tuple[list, str] | None:
    """The first :class:`Refused` marker in a parsed document (in document order), as ``(path, reason)``; the path
    is the keys and list indexes leading to it (:func:`place` names it for people). None if there is none."""
    stack: list[tuple[object, list]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Refused):
            return path, node.reason
        if isinstance(node, dict):
            stack.extend((child, [*path, key]) for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((child, [*path, index]) for index, child in reversed(list(enumerate(node))))
    return None


def place(path: list) -> str:
    """A value's place for people: ``source.page``, ``options (entry 2)``, ``soft_labels (entry 1).prob``."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f" (entry {step + 1})"
        else:
            out += f".{step[:60]}" if out else step[:60]
    return out.strip()
