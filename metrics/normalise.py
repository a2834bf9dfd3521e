"""Text normalisation and answer parsing of the public ClinIQLink scorer (docs/metric.md §3, §4).

These functions port ``submission/evaluate.py`` (commit 25cf06f) line for line where docs/metric.md is silent,
including its regular expressions, so that odd responses parse the same way as in the public scorer.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

THINK_RE = re.compile(r"<think>.*?</think>", flags=re.DOTALL | re.IGNORECASE)
_DELIMITERS_RE = re.compile(r"[–—_/\\\[\]\(\)\{\};\-]")
_SPACES_RE = re.compile(r"\s+")


def to_text(value: Any) -> str:
    """Flatten a response to text (``_to_text``, §3.1): lists joined by spaces, dicts → generated_text/text."""
    if isinstance(value, (list, tuple)):
        return " ".join(to_text(v) for v in value).strip()
    if isinstance(value, dict):
        return str(value.get("generated_text") or value.get("text") or "").strip()
    return str(value).strip()


def clean_response(value: Any) -> str:
    """§3.1: flatten, delete every ``<think>…</think>`` block (non-greedy, any case), strip.

    An unclosed ``<think>`` stays in the text, as in the public scorer.
    """
    return THINK_RE.sub("", to_text(value)).strip()


def option_label(index: int) -> str:
    """Label of the option at ``index``: ``chr(65 + i)``, so 27+ options run into ``[ \\ ] ^ _ ` a b …`` (§2.2)."""
    return chr(65 + index)


def normalise(text: str) -> str:
    """MC/list normalisation (§4.2).

    NFKD, drop combining marks, casefold, map ``– — _ / \\ [ ] ( ) { } ; -`` to spaces, keep only letters,
    digits, marks, whitespace, ``%``, ``,`` and ``:``, collapse whitespace, strip.
    """
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.casefold()
    text = _DELIMITERS_RE.sub(" ", text)
    text = "".join(
        c for c in text if unicodedata.category(c)[0] in ("L", "N", "M") or c.isspace() or c in {"%", ",", ":"}
    )
    return _SPACES_RE.sub(" ", text).strip()


# -- multiple choice ----------------------------------------------------------------------------------------
def mc_match_type(expected_norm: str, predicted_norm: str, options: dict[str, str]) -> str:
    """Diagnostic match type of an MC answer: full / letter / mixed / none (§4.2, ``_mc_match_letter_or_text``).

    Called, as in the public scorer, with the *normalised* gold and prediction. "mixed" needs ``"L: text"``
    where text equals the option lower-cased but not normalised, so options with ``-``, ``/``, ``.`` never
    match mixed. Never returns "invalid" (that branch is dead code: ``multiple_choice_invalid_count`` is 0).
    """
    if predicted_norm == expected_norm:
        return "full"
    norm_options = {k: normalise(v) for k, v in options.items()}
    rev_options = {v: k for k, v in norm_options.items()}
    expected_letter = rev_options.get(normalise(expected_norm))
    prediction_raw = to_text(predicted_norm).strip()
    prediction = normalise(to_text(predicted_norm))
    is_full = prediction == expected_norm
    is_letter = prediction.upper() in options and prediction.upper() == expected_letter
    if ":" in prediction_raw:
        letter, text = prediction_raw.split(":", 1)
        letter, text = letter.strip().upper(), text.strip().lower()
        if (
            letter in options
            and text == options[letter].strip().lower()
            and letter == expected_letter
            and text == expected_norm
        ):
            return "mixed"
    if is_full and is_letter:
        return "mixed"
    if is_full:
        return "full"
    if is_letter:
        return "letter"
    return "none"


# -- list ----------------------------------------------------------------------------------------------------
_OPTION_PREFIX_RE = re.compile(r"^(?:[A-H]\. |[A-H]: )")
_GOLD_LETTER_WORD_RE = re.compile(r"^([A-Za-z])[\.:]?\s+(.+)$")


def strip_option_prefixes(options: list[str]) -> list[str]:
    """Options lose a leading ``"A. "`` / ``"A: "`` (A–H only) prefix (§4.3)."""
    return [_OPTION_PREFIX_RE.sub("", opt).strip() for opt in options]


def clean_list_gold(answers: list[str], letter_to_text: dict[str, str]) -> list[str]:
    """Gold list answers as the public scorer rebuilds them, normalised (§4.3).

    A single letter maps to its option; an answer matching ``^letter[.:]?\\s+rest`` whose letter is an option
    label is **replaced by rest** — meant for ``"c prostatectomy"``, it also turns ``"B cells"`` into
    ``"cells"`` whenever the list has ≥ 2 options (quirk, §4.3 / §7.9).
    """
    cleaned = []
    for value in answers:
        value = value.strip()
        if len(value) == 1 and value.upper() in letter_to_text:
            cleaned.append(letter_to_text[value.upper()])
            continue
        match = _GOLD_LETTER_WORD_RE.match(value)
        if match and match.group(1).upper() in letter_to_text:
            cleaned.append(match.group(2))
        else:
            cleaned.append(value)
    return [normalise(v) for v in cleaned]


def _rebuild_composite(base_segments: list[str], options: list[str]) -> list[str]:
    """Map segments to options, re-joining comma pieces of options that contain commas (longest first)."""
    opt_norm = {normalise(o): o for o in options}
    if not any("," in o for o in options):
        return [opt_norm.get(normalise(seg), normalise(seg)) for seg in base_segments]
    max_parts = max(o.count(",") + 1 for o in options)
    segments: list[str] = []
    i = 0
    while i < len(base_segments):
        for window in range(max_parts, 0, -1):
            if i + window > len(base_segments):
                continue
            candidate = normalise(", ".join(base_segments[i : i + window]))
            if candidate in opt_norm:
                segments.append(opt_norm[candidate])
                i += window
                break
        else:
            single = normalise(base_segments[i])
            segments.append(opt_norm[single] if single in opt_norm else base_segments[i])
            i += 1
    return segments


def list_match_letter_or_text(
    expected_values: list[str], raw_resp: str, letter_to_text: dict[str, str], options: list[str]
) -> tuple[str, bool, list[str], list[tuple[str, str]]]:
    """Parse a list response (§4.3, ``_list_match_letter_or_text``).

    Returns ``(match_type, malformed, predicted_values, unmatched_segments)``. Only the text before the first
    blank line is read; comma pieces that all equal options give a "full" match at once; otherwise ``L: text``
    / ``L. text`` chunks (any option label, case-insensitive, no word boundary) or comma pieces are matched
    one by one, and any piece that matches nothing is *unmatched* and makes the item malformed.
    """
    raw_resp = raw_resp.split("\n\n")[0].strip()
    expected_set = {normalise(v) for v in expected_values}
    norm_opts_set = {normalise(o) for o in options}
    # dict.fromkeys keeps first-seen order where the public code returns list(set) (order is cosmetic here).
    first_pass = dict.fromkeys(normalise(seg) for seg in re.split(r",\s*", raw_resp) if seg.strip())
    if first_pass and set(first_pass) <= norm_opts_set:
        return "full", False, list(first_pass), []

    cleaned = re.sub(r"[()]", "", raw_resp)
    letters = "".join(letter_to_text.keys())
    letter_pattern = rf"([{letters}])[:\.]\s*(.+?)(?=(?:\s*[{letters}][\:\.])|$)"
    matches = re.findall(letter_pattern, cleaned, flags=re.IGNORECASE)
    if matches:
        if len(matches) == 1 and "," in matches[0][1]:
            base_segments = [item.strip().rstrip(",") for item in matches[0][1].split(",") if item.strip()]
        else:
            base_segments = [f"{ltr}: {txt.strip().rstrip(',').strip()}" for ltr, txt in matches]
    else:
        base_segments = [seg.strip().rstrip(",") for seg in cleaned.split(",") if seg.strip()]

    if not options:  # the public code's max() over the options raises here and the item is skipped
        raise ValueError("list item has no options")
    opt_norm = {normalise(o): o for o in options}
    segments = _rebuild_composite(base_segments, options)

    predicted_values: list[str] = []
    unmatched: list[tuple[str, str]] = []
    malformed = False
    match_type = "none"
    for seg in segments:
        seg_matched = False
        if re.fullmatch(r"[A-Za-z]", seg):
            label = seg.upper()
            if label in letter_to_text:
                predicted_values.append(normalise(letter_to_text[label]))
                seg_matched = True
                if match_type == "none":
                    match_type = "letter"
        m = re.match(r"^([A-Za-z])[:\.]\s*(.+)$", seg)
        if m:
            label = m.group(1).upper()
            norm_txt = normalise(m.group(2).strip().rstrip(",").strip())
            if label in letter_to_text and normalise(letter_to_text[label]) == norm_txt:
                predicted_values.append(norm_txt)
                seg_matched = True
                match_type = "mixed"
            elif norm_txt in opt_norm:
                predicted_values.append(norm_txt)
                seg_matched = True
                if match_type == "none":
                    match_type = "full"
                elif match_type == "letter":
                    match_type = "mixed"
            seg = seg.replace(":", "").strip()
        if not seg_matched:
            norm_seg = normalise(seg)
            if norm_seg in opt_norm:
                predicted_values.append(norm_seg)
                seg_matched = True
                if match_type == "none":
                    match_type = "full"
                elif match_type == "letter":
                    match_type = "mixed"
        if not seg_matched:
            norm_seg = normalise(seg)
            predicted_values.append(norm_seg)
            if norm_seg not in norm_opts_set:
                unmatched.append((seg, norm_seg))
                malformed = True
    if set(predicted_values) == expected_set:
        match_type = "full"
    return match_type, malformed, predicted_values, unmatched
