"""The logic of ``manage.py span_score``: a reference and a prediction file in, SHROOM's scores out. No Django.

It joins the pure span definitions (:mod:`metrics.spans`, :mod:`metrics.span_io`) and the bootstrap of
:mod:`stats.bootstrap`, which may not import each other, so it lives here; it opens no database connection.
``iou`` and ``cor`` are the means over answers of :func:`metrics.spans.score_iou` and
:func:`metrics.spans.score_cor`, as the official Mu-SHROOM scorer computes them; the 95 % intervals resample answers.
"""

from __future__ import annotations

import numpy as np

from metrics.span_io import read_spans_jsonl
from metrics.spans import score_cor, score_iou
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, interval_containing


def span_score_report(
    reference: str, prediction: str, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> tuple[dict, list[dict]]:
    """``({"iou", "cor", "n", "iou_ci", "cor_ci"}, per-answer rows {"id", "iou", "cor"} sorted by id)``.

    Raises :class:`records.jsonl.InputFileError` naming file, line and field on bad input: an id twice, a
    prediction for an unknown id, a reference answer without prediction, a span outside its text.
    """
    refs = read_spans_jsonl(reference, require_text=True)
    lengths = {uid: len(rec.text or "") for uid, rec in refs.items()}
    preds = read_spans_jsonl(prediction, require_text=False, text_lengths=lengths, prediction=True)
    rows = []
    for uid in sorted(refs):
        ref, pred = refs[uid], preds[uid]
        rows.append(
            {
                "id": uid,
                "iou": score_iou(ref.hard_labels, pred.hard_labels),
                "cor": score_cor(ref.soft_labels, pred.soft_labels, lengths[uid]),
            }
        )
    values = np.array([[row["iou"], row["cor"]] for row in rows], dtype=float)
    summary: dict = {"iou": float(values[:, 0].mean()), "cor": float(values[:, 1].mean()), "n": len(rows)}
    if n_resamples > 0 and len(rows) > 1:
        n = len(rows)
        outcome = bootstrap_sums(values, lambda sums: sums / n, n_resamples=n_resamples, seed=seed)
        low, high = interval_containing(np.array([summary["iou"], summary["cor"]]), outcome.ci_low, outcome.ci_high)
        summary["iou_ci"] = [float(low[0]), float(high[0])]
        summary["cor_ci"] = [float(low[1]), float(high[1])]
    else:
        summary["iou_ci"] = summary["cor_ci"] = None
    return summary, rows


def format_text(summary: dict) -> str:
    lines = [f"answers scored        {summary['n']}"]
    for key, label in (("iou", "IoU of hard labels"), ("cor", "Spearman of soft labels")):
        ci = summary.get(f"{key}_ci")
        extra = f"  [95% CI {ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""
        lines.append(f"{label:<22}{summary[key]:.8f}{extra}")
    return "\n".join(lines) + "\n"
