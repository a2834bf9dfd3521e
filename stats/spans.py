"""Agreement between physicians on hallucination spans, character by character (pure).

Input per answer: a boolean matrix ``(annotators, characters)``, True where that annotator marked the character as
hallucinated (the portal builds it from the stored spans, :mod:`metrics.spans`). Only answers with two or more
annotators can show agreement; the others are left out and counted in a note.

* **Pairwise IoU**: for each pair of annotators of an answer, |both marked| / |either marked| (1.0 when neither
  marked anything, SHROOM's convention), averaged over the pairs of the answer and then over answers.
* **Krippendorff's alpha (nominal)** over characters: each character is a unit rated "marked" / "not marked" by each
  of its answer's annotators (Krippendorff 2011's coincidence matrix, :mod:`stats.agreement`). Characters within an
  answer are not independent, so the interval resamples *answers*.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .agreement import alpha_from_coincidences, coincidence_contributions
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, with_interval
from .results import StatResult, undefined

_NOMINAL_POSITIONS = np.array([0.0, 1.0])


def answer_iou(marks: np.ndarray) -> float | None:
    """Mean pairwise character IoU of one answer's annotators; ``None`` with fewer than two."""
    marks = np.asarray(marks, dtype=bool)
    if marks.ndim != 2 or marks.shape[0] < 2:
        return None
    values = []
    for i in range(marks.shape[0]):
        for j in range(i + 1, marks.shape[0]):
            union = np.logical_or(marks[i], marks[j]).sum()
            values.append(1.0 if union == 0 else float(np.logical_and(marks[i], marks[j]).sum() / union))
    return float(np.mean(values))


def _coincidences(marks: np.ndarray) -> np.ndarray:
    """The answer's summed 2x2 coincidence matrix over its characters (flattened to 4)."""
    marked = marks.sum(axis=0).astype(float)
    counts = np.column_stack([marks.shape[0] - marked, marked])
    return coincidence_contributions(counts).sum(axis=0).reshape(4)


def span_agreement(
    answers: Sequence[np.ndarray], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, StatResult]:
    """``pairwise_iou`` and ``krippendorff_alpha`` over the answers with two or more annotators."""
    usable = [np.asarray(m, dtype=bool) for m in answers if np.asarray(m).ndim == 2 and np.asarray(m).shape[0] >= 2]
    usable = [m for m in usable if m.shape[1] > 0]
    left_out = len(answers) - len(usable)
    answers = "answer" if left_out == 1 else "answers"
    notes = (f"{left_out} {answers} with fewer than two annotators left out",) if left_out else ()
    if not usable:
        reason = "no answer was marked by two or more physicians"
        return {
            "pairwise_iou": undefined("pairwise_iou", reason, notes=notes),
            "krippendorff_alpha": undefined("krippendorff_alpha", reason, notes=notes),
        }
    raters = max(m.shape[0] for m in usable)
    ious = np.array([answer_iou(m) for m in usable], dtype=float)
    iou = StatResult("pairwise_iou", float(ious.mean()), n_items=len(usable), n_raters=raters, notes=notes)
    if n_resamples > 0:
        k = len(ious)
        iou = with_interval(iou, bootstrap_sums(ious, lambda s: s[:, 0] / k, n_resamples=n_resamples, seed=seed))

    contributions = np.stack([_coincidences(m) for m in usable])

    def alpha(sums: np.ndarray) -> np.ndarray:
        return alpha_from_coincidences(sums.reshape(-1, 2, 2), "nominal", _NOMINAL_POSITIONS)

    value = float(alpha(contributions.sum(axis=0)[None])[0])
    if not np.isfinite(value):
        kripp = undefined(
            "krippendorff_alpha",
            "every physician left every character unmarked (or marked every one): no disagreement is expected",
            n_items=len(usable),
            n_raters=raters,
            notes=notes,
        )
    else:
        kripp = StatResult("krippendorff_alpha", value, n_items=len(usable), n_raters=raters, notes=notes)
        if n_resamples > 0:
            kripp = with_interval(
                kripp, bootstrap_sums(contributions, alpha, n_resamples=n_resamples, seed=seed, min_distinct=2)
            )
    return {"pairwise_iou": iou, "krippendorff_alpha": kripp}
