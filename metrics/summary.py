"""The public summary of a scored submission and the result object (docs/metric.md §2.4).

``overall_effectiveness`` = unweighted mean of TF accuracy, ``multiple_choice_average``,
``list_overall_macro_avg_f1_score`` and the four per-type mean semantic scores (§2.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .closed import LIST_EMPTY, MC_EMPTY, TypeResult, kept_indices
from .open_ended import OPEN_TYPES
from .profiles import Profile

#: The public scorer's type order (``QA_FILES``); it fixes the order of the IDF corpus and the baseline sample.
QA_TYPES = ("true_false", "multiple_choice", "list", "short", "multi_hop", "short_inverse", "multi_hop_inverse")
TEXT_METRICS = ("bleu", "rouge", "meteor")


def mean_or_zero(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def mean_or_none(values: Sequence[float | None]) -> float | None:
    if any(v is None for v in values):
        return None
    return mean_or_zero(values)  # type: ignore[arg-type]


@dataclass
class SubmissionScore:
    """Everything one scoring run produced. ``summary`` has the public summary keys; ``run`` the run record."""

    summary: dict[str, Any]
    per_type: dict[str, TypeResult]
    run: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def item_rows(self, submission: str = "") -> list[dict[str, Any]]:
        """One row per item in the shape of ``metric-reference/expected.jsonl``."""
        return [
            item_row(qa_type, item, submission)
            for qa_type in QA_TYPES
            for item in (self.per_type[qa_type].items if qa_type in self.per_type else [])
        ]

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "run": self.run, "notes": self.notes,
                "per_type": {t: r.summary for t, r in self.per_type.items()}}  # fmt: skip


def item_row(qa_type: str, item: dict[str, Any], submission: str = "") -> dict[str, Any]:
    """One item's record in the shape of a ``metric-reference/expected.jsonl`` row."""
    row = {"submission": submission, "qa_type": qa_type, "index": item["index"], "paragraph_id": item["paragraph_id"]}
    if qa_type in OPEN_TYPES:
        row.update({k: item[k] for k in ("semantic", "word", "sentence", "paragraph", *TEXT_METRICS)})
        if qa_type == "multi_hop_inverse":
            row.update(predicted_step=item["predicted_step"], step_distance=item["step_distance"])
    elif qa_type == "list":
        row.update(precision=item["precision"], recall=item["recall"], f1=item["f1"])
    else:
        row["correct"] = item["correct"]
    return row


def build_summary(per_type: Mapping[str, TypeResult], profile: Profile) -> dict[str, Any]:
    """The public ``overall_evaluation_results.json`` keys, in its order, without the per-type dumps (§2.4)."""

    def part(qa_type: str) -> dict[str, Any]:
        return per_type[qa_type].summary if qa_type in per_type else {}

    tf, mc, lst = part("true_false"), {**MC_EMPTY, **part("multiple_choice")}, {**LIST_EMPTY, **part("list")}
    semantic = {t: part(t).get("semantic_match_score", 0.0) for t in OPEN_TYPES}
    overall = float(np.mean([tf.get("accuracy", 0.0), mc["multiple_choice_average"],
                             lst["list_overall_macro_avg_f1_score"], *semantic.values()]))  # fmt: skip
    tf_invalid = tf.get("true_false_invalid_count", 0)
    s: dict[str, Any] = {
        "overall_effectiveness": overall,
        "true_false_accuracy": tf.get("accuracy", 0.0),
        "multiple_choice_accuracy": 0.0 if profile.summary_key_bug else mc["multiple_choice_average"],
        "list_macro_f1_score": 0.0 if profile.summary_key_bug else lst["list_overall_macro_avg_f1_score"],
        "total_invalid_close_ended": tf_invalid + mc["multiple_choice_invalid_count"] + lst["list_invalid_count"],
        "true_false_invalid_count": tf_invalid,
        "multiple_choice_invalid_count": mc["multiple_choice_invalid_count"],
        "list_invalid_count": lst["list_invalid_count"],
        **{f"{t}_semantic_match_score": semantic[t] for t in OPEN_TYPES},
        "multiple_choice_match_metrics": {f"{m}_match": mc[f"multiple_choice_{m}_match"]
                                          for m in ("full", "letter", "mixed")},
        "list_match_metrics": {f"{m}_match": lst[f"list_{m}_match"] for m in ("full", "letter", "mixed")},
        "multi_hop_inverse_step_identification_rate": part("multi_hop_inverse").get("step_identification_rate", 0.0),
    }  # fmt: skip
    s.update({k: mc[k] for k in MC_EMPTY if k != "multiple_choice_invalid_count"})
    s.update({k: lst[k] for k in LIST_EMPTY if k != "list_invalid_count"})
    per_open = {t: {f"avg_{m}": part(t).get(f"avg_{m}", 0.0) for m in ("bleu", "meteor", "rouge")}
                for t in OPEN_TYPES}  # fmt: skip
    s["open_ended_metrics_per_type"] = per_open
    s["open_ended_metrics_overall"] = {m: mean_or_none([v[m] for v in per_open.values()])
                                       for m in ("avg_bleu", "avg_meteor", "avg_rouge")}  # fmt: skip
    stats = {}
    for t in OPEN_TYPES:
        records = per_type[t].items if t in per_type else []
        values = [records[i]["semantic"] for i in kept_indices(records)]
        if values:
            arr = np.array(values)
            stats[t] = {"min": float(arr.min()), "p25": float(np.percentile(arr, 25)),
                        "median": float(np.median(arr)), "p75": float(np.percentile(arr, 75)),
                        "max": float(arr.max())}  # fmt: skip
    s["open_ended_stats"] = stats
    return s
