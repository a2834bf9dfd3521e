"""One sample's own score, and each task's figure as a function of column sums (for the bootstrap).

Every official task figure depends on its samples only through sums of per-sample counts: extraction's micro F1
through the pooled (tp, fp, fn), classification's F1 through each label's gold, predicted and hit counts, ROUGE-L
through the sum and number of pair scores, Text2DT's ratio through the summed edit counts. :func:`contributions`
writes those counts as an ``(n_samples, k)`` matrix with a vectorised statistic of its column sums, the form
``stats.bootstrap.bootstrap_sums`` resamples (one matrix product for all resamples). Pure: numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .scoring import mean_in_order
from .tasks import CLASSIFICATION, EXTRACTION, GENERATION, Task

Statistic = Callable[[np.ndarray], np.ndarray]


def sample_score(task: Task, stats) -> float | None:
    """One sample's score on the task's scale (0..1), from its :func:`~.scoring.sample_stats`; None where the
    sample has nothing to score. Not the sample's share of the task figure (the figures pool counts first).

    - extraction: the sample's F1, 2 tp / (2 tp + fp + fn); 1.0 when tp = fp = fn = 0 (nothing to find and
      nothing claimed is right);
    - classification: 1.0 when the predicted label is the gold label, else 0.0;
    - generation: the mean ROUGE-L F of its pairs (MRG: one per gold section); None when it has no pair;
    - Text2DT: 1 - edit / max_edit, the task's ratio on this tree alone; None when max_edit is 0 (no triple on
      either side).
    """
    if task.kind == EXTRACTION:
        tp, fp, fn = stats
        return 2 * tp / (2 * tp + fp + fn) if tp or fp or fn else 1.0
    if task.kind == CLASSIFICATION:
        gold, predicted = stats
        return 1.0 if gold == predicted else 0.0
    if task.kind == GENERATION:
        return mean_in_order(stats) if stats else None
    return 1 - stats.edit / stats.max_edit if stats.max_edit else None


def contributions(task: Task, stats: Sequence) -> tuple[np.ndarray, Statistic]:
    """``(matrix, statistic)``: the ``(n_samples, k)`` per-sample contributions of the task's samples and the
    function of ``(B, k)`` column sums giving ``(B,)`` task figures (NaN where the figure is undefined).

    ``statistic(matrix.sum(0)[None])[0]`` is ``task_figure(task, stats)``; a row of resampled sums gives the figure
    of the resampled samples. Columns: extraction tp, fp, fn; generation the sum and the number of pair scores;
    Text2DT edit, max_edit; classification gold count, predicted count, hits for each label seen (sorted), three
    columns a label.
    """
    if task.kind == EXTRACTION:
        return _rows(stats, 3), micro_f1_of_sums
    if task.kind == CLASSIFICATION:
        return _classification_contributions(task, stats)
    if task.kind == GENERATION:
        return _rows([(sum(values), len(values)) for values in stats], 2), mean_of_sums
    return _rows([(one.edit, one.max_edit) for one in stats], 2), tree_ratio_of_sums


def _rows(rows: Sequence, k: int) -> np.ndarray:
    # reshape keeps k columns for a task without samples.
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), k)


def micro_f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """Extraction: :func:`~.scoring.micro_f1` of summed (tp, fp, fn), its operations in its order; 0 when tp is 0."""
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        f1 = 2 * precision * recall / (precision + recall)
    return np.where(tp > 0, f1, 0.0)


def mean_of_sums(sums: np.ndarray) -> np.ndarray:
    """Generation: sum of the pair scores / their number; NaN when no pair was drawn."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], np.nan)


def tree_ratio_of_sums(sums: np.ndarray) -> np.ndarray:
    """Text2DT: 1 - edit / max_edit; NaN when max_edit is 0 (the official code divides by zero there)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, 1 - sums[:, 0] / sums[:, 1], np.nan)


def _classification_contributions(task: Task, stats: Sequence) -> tuple[np.ndarray, Statistic]:
    labels = sorted({gold for gold, _ in stats} | {predicted for _, predicted in stats})
    column = {label: 3 * i for i, label in enumerate(labels)}
    matrix = np.zeros((len(stats), 3 * len(labels)), dtype=np.float64)
    for row, (gold, predicted) in enumerate(stats):
        matrix[row, column[gold]] = 1
        matrix[row, column[predicted] + 1] = 1
        if gold == predicted:
            matrix[row, column[gold] + 2] = 1
    # As task_figure decides: the official code reads the macro average only where the headline says so.
    macro = task.headline_key.endswith("Macro-F1")
    return matrix, macro_f1_of_sums if macro else weighted_f1_of_sums


def _label_f1(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per resample and label: F1 = 2 hits / (gold + predicted) (0 when both are 0), gold count, and whether the
    label occurs at all."""
    by_label = sums.reshape(len(sums), -1, 3)
    gold, predicted, hits = by_label[..., 0], by_label[..., 1], by_label[..., 2]
    seen = gold + predicted > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(seen, 2 * hits / (gold + predicted), 0.0)
    return f1, gold, seen


def macro_f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """Classification, macro: the mean F1 over the labels seen in that resample's gold or predictions (as
    scikit-learn, which knows only the labels of the data it is given); NaN when no label is seen."""
    f1, _, seen = _label_f1(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return f1.sum(axis=1) / seen.sum(axis=1)


def weighted_f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """Classification, weighted: sum(F1 × gold count) / number of gold labels; NaN when there is none."""
    f1, gold, _ = _label_f1(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (f1 * gold).sum(axis=1) / gold.sum(axis=1)
