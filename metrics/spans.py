"""Hallucination spans, SHROOM's way (SemEval 2024 Task 6; Mu-SHROOM, SemEval 2025 Task 3), pure.

A span is a half-open range ``[start, end)`` of *character* offsets (Python string indices, i.e. Unicode code
points) into the exact answer text shown to the annotator. Browsers count UTF-16 code units instead; the page
converts before sending, and the server checks every span against the stored text.

* **Soft labels** of an answer: for each character, the share of the answer's annotators who marked it, written as
  maximal runs of equal share ``{"start", "end", "prob"}`` (characters nobody marked are left out).
* **Hard labels**: the runs with ``prob > 0.5``, runs that touch merged (``[[start, end], ...]``), exactly as the
  official scorer's ``recompute_hard_labels``.
* **IoU** of two hard-label sets: |intersection| / |union| of their character sets, 1.0 when neither has any.
* **Correlation**: Spearman's rho between the two per-character soft-label vectors (over the reference text's
  length; a later run overwrites an earlier one, as the official scorer fills its vectors); when either vector is
  constant (after rounding to 8 decimals) it is 1.0 if both are and 0.0 otherwise.

These definitions follow the published scorer line by line (tests check its edge cases); the code is our own.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import numpy as np

KINDS = ("intrinsic", "extrinsic", "other")
KIND_LABELS = {
    "intrinsic": "Contradicts the source or reference",
    "extrinsic": "Not supported by the source or reference",
    "other": "Other hallucination",
}

Span = tuple[int, int]


def check_span(start: object, end: object, text_length: int) -> Span:
    """``(start, end)`` as integers inside a text of ``text_length`` characters and not empty; ValueError otherwise."""
    if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
        raise ValueError("start and end must be whole numbers")
    if not 0 <= start < end <= text_length:
        raise ValueError(f"the span {start}-{end} is not inside the text (0-{text_length}) or is empty")
    return start, end


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sorted, with overlapping and touching spans merged into one."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def soft_labels(annotators: Sequence[Iterable[Span]], text_length: int) -> list[dict]:
    """Per-character share of ``annotators`` (each a list of spans) who marked it, as maximal equal-share runs."""
    if not annotators:
        return []
    counts = np.zeros(text_length + 1, dtype=np.int64)
    for spans in annotators:
        for start, end in merge_spans(spans):  # one annotator counts once per character
            counts[start] += 1
            counts[end] -= 1
    per_char = np.cumsum(counts)[:text_length]
    runs: list[dict] = []
    change = np.flatnonzero(np.diff(per_char)) + 1
    starts = np.r_[0, change]
    ends = np.r_[change, text_length]
    for start, end in zip(starts, ends, strict=True):
        if end > start and per_char[start] > 0:
            runs.append({"start": int(start), "end": int(end), "prob": float(per_char[start] / len(annotators))})
    return runs


def hard_labels(soft: Iterable[dict]) -> list[list[int]]:
    """Runs with ``prob > 0.5``, sorted, touching runs merged (the official ``recompute_hard_labels``)."""
    hard: list[list[int]] = []
    previous_end = -1
    for run in sorted(soft, key=lambda r: (r["start"], r["end"])):
        if run["prob"] > 0.5:
            if run["start"] == previous_end:
                hard[-1][1] = run["end"]
            else:
                hard.append([run["start"], run["end"]])
            previous_end = run["end"]
    return hard


def inferred_soft_labels(hard: Iterable[Sequence[int]]) -> list[dict]:
    """Soft labels of a prediction that gives hard labels only: each hard span at probability 1, as given (the
    official scorer's ``infer_soft_labels``)."""
    return [{"start": start, "end": end, "prob": 1.0} for start, end in hard]


def score_iou(reference_hard: Iterable[Sequence[int]], predicted_hard: Iterable[Sequence[int]]) -> float:
    """Character IoU of two hard-label lists; 1.0 when neither marks any character."""
    ref = {i for start, end in reference_hard for i in range(start, end)}
    pred = {i for start, end in predicted_hard for i in range(start, end)}
    if not ref and not pred:
        return 1.0
    return len(ref & pred) / len(ref | pred)


def soft_vector(soft: Iterable[dict], text_length: int) -> np.ndarray:
    """The per-character probabilities of soft labels (later runs overwrite earlier ones, as the scorer does)."""
    vector = np.zeros(text_length)
    for run in soft:
        vector[run["start"] : run["end"]] = run["prob"]
    return vector


def score_cor(reference_soft: Iterable[dict], predicted_soft: Iterable[dict], text_length: int) -> float:
    """Spearman's rho of the two per-character vectors; 1.0 / 0.0 when either is constant (see the module).

    The same number as ``scipy.stats.spearmanr`` over the two vectors of :func:`soft_vector` (tests check it on random
    labels to 1e-12), computed over the vectors' constant stretches instead of their characters: a leaderboard scores
    every answer against every detector, and a text has far fewer stretches than characters, so no pair pays for
    building two character-long vectors and ranking them with scipy (``bench/bench_spans.py``). Runs lie inside the
    text (checked when they are stored)."""
    reference_soft, predicted_soft = list(reference_soft), list(predicted_soft)
    widths, ref, pred = _stretches(reference_soft, predicted_soft, text_length)
    ref_values = len(set(np.round(ref, 8).tolist()))
    pred_values = len(set(np.round(pred, 8).tolist()))
    if ref_values <= 1 or pred_values <= 1:
        return float(ref_values == pred_values)
    ref_ranks, pred_ranks = _tied_ranks(ref, widths), _tied_ranks(pred, widths)
    middle = (text_length + 1) / 2  # the mean rank of n characters
    covariance = ref_spread = pred_spread = 0.0
    for width, a, b in zip(widths, ref_ranks, pred_ranks, strict=True):
        a, b = a - middle, b - middle
        covariance += width * a * b
        ref_spread += width * a * a
        pred_spread += width * b * b
    return float(min(1.0, max(-1.0, covariance / math.sqrt(ref_spread * pred_spread))))


def _stretches(first: list[dict], second: list[dict], text_length: int) -> tuple[list[int], list[float], list[float]]:
    """Both soft-label vectors as stretches of characters on which neither changes: (widths, first's values, second's
    values). A character's value is the share of the last run covering it (later runs overwrite, as in
    :func:`soft_vector`), 0 where none does."""
    cuts = {0, text_length}
    for run in (*first, *second):
        cuts.update((min(max(run["start"], 0), text_length), min(max(run["end"], 0), text_length)))
    edges = sorted(cuts)
    widths, first_values, second_values = [], [], []
    for start, end in itertools.pairwise(edges):
        widths.append(end - start)
        first_values.append(_share_at(first, start))
        second_values.append(_share_at(second, start))
    return widths, first_values, second_values


def _share_at(runs: list[dict], position: int) -> float:
    share = 0.0
    for run in runs:
        if run["start"] <= position < run["end"]:
            share = float(run["prob"])
    return share


def _tied_ranks(values: list[float], widths: list[int]) -> list[float]:
    """Each stretch's rank among all characters, tied characters sharing their average rank (as ``rankdata``)."""
    characters: dict[float, int] = {}
    for value, width in zip(values, widths, strict=True):
        characters[value] = characters.get(value, 0) + width
    rank_of, last = {}, 0
    for value in sorted(characters):
        count = characters[value]
        last += count
        rank_of[value] = last - (count - 1) / 2
    return [rank_of[value] for value in values]
