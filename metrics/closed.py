"""Closed-ended scoring: true/false accuracy, multiple-choice accuracy, list F1 (docs/metric.md §4).

Each ``score_*`` function takes the inputs (dataset items) and the cleaned responses of one QA type and
returns a :class:`TypeResult` with per-item records and the public scorer's summary keys.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .gold import gold_text, multiple_choice_gold
from .normalise import (
    clean_list_gold,
    list_match_letter_or_text,
    mc_match_type,
    normalise,
    option_label,
    strip_option_prefixes,
    to_text,
)


@dataclass
class TypeResult:
    """Scores of one QA type: ``summary`` holds the public keys, ``items`` one record per input item."""

    qa_type: str
    summary: dict[str, Any]
    items: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def paragraph_id(item: dict[str, Any]) -> str:
    source = item.get("source") or {}
    return source.get("paragraph_id", "unknown") if isinstance(source, dict) else "unknown"


def kept_indices(items: Sequence[dict[str, Any]]) -> list[int]:
    """Indices that survive the public scorer's results dict keyed by paragraph_id (§3.2).

    A later item with the same paragraph_id overwrites an earlier one; the key keeps its first position.
    """
    last: dict[str, int] = {}
    for record in items:
        if not record.get("skipped"):
            last[record["paragraph_id"]] = record["index"]
    return list(last.values())


# -- true / false ------------------------------------------------------------------------------------------
_TF_RE = re.compile(r"^(true|false)", flags=re.IGNORECASE)


def score_true_false(inputs: Sequence[dict], responses: Sequence[str]) -> TypeResult:
    """Accuracy with a prefix rule (§4.1, quirk §7.10).

    The response must *start with* ``true``/``false`` (any case, no word boundary: ``"Truely"`` → true);
    trailing text only sets ``malformed``. Anything else is invalid and wrong. ``accuracy = correct / N``.
    """
    items, correct, invalid = [], 0, 0
    for index, (gold, response) in enumerate(zip(inputs, responses, strict=True)):
        expected = gold_text("true_false", gold).lower()
        raw = to_text(response).strip()
        match = _TF_RE.match(raw)
        predicted = match.group(1).lower() if match else ""
        malformed = bool(raw[len(match.group(0)) :].strip()) if match else True
        is_invalid = predicted not in {"true", "false"}
        is_correct = (not is_invalid) and predicted == expected
        invalid += is_invalid
        correct += is_correct
        items.append(
            {"index": index, "paragraph_id": paragraph_id(gold), "expected": expected, "predicted": predicted,
             "correct": is_correct, "malformed": malformed, "invalid": is_invalid}
        )  # fmt: skip
    accuracy = correct / len(inputs) if inputs else 0.0
    return TypeResult("true_false", {"accuracy": accuracy, "true_false_invalid_count": invalid}, items)


# -- multiple choice ----------------------------------------------------------------------------------------
MC_EMPTY = {
    "multiple_choice_average": 0.0,
    "multiple_choice_full_match_average": 0.0,
    "multiple_choice_combined_match_average": 0.0,
    "multiple_choice_invalid_count": 0,
    "multiple_choice_full_match": 0.0,
    "multiple_choice_letter_match": 0.0,
    "multiple_choice_mixed_match": 0.0,
}


def score_multiple_choice(inputs: Sequence[dict], responses: Sequence[str]) -> TypeResult:
    """Accuracy = share of items with ``normalise(response) == normalise(gold text)`` (§4.2, quirk §7.8).

    Gold text is ``correct_answer``, or the option it names when it is a single letter. Letters, ``"C: text"``
    and explanations are wrong. ``match_type`` (full/letter/mixed/none) is diagnostic only; the combined
    average is the share of letter+mixed answers; ``multiple_choice_invalid_count`` is always 0.
    """
    items = []
    counts = Counter()
    overall = full = combined = 0
    for index, (gold, response) in enumerate(zip(inputs, responses, strict=True)):
        options = {option_label(i): o for i, o in enumerate(gold.get("options", []))}
        expected_text = multiple_choice_gold(gold)
        expected = normalise(expected_text)
        predicted_raw = to_text(response)
        predicted = normalise(predicted_raw)
        match_type = mc_match_type(expected, predicted, options)
        counts[match_type] += 1
        is_correct = predicted == expected
        overall += is_correct
        full += match_type == "full"
        combined += match_type in {"letter", "mixed"}
        items.append(
            {"index": index, "paragraph_id": paragraph_id(gold), "expected": expected_text,
             "predicted": predicted_raw, "correct": is_correct, "match_type": match_type, "malformed": False}
        )  # fmt: skip
    total = len(inputs)
    summary = dict(MC_EMPTY)
    if total:
        summary.update(
            multiple_choice_average=overall / total,
            multiple_choice_full_match_average=full / total,
            multiple_choice_combined_match_average=combined / total,
            multiple_choice_full_match=counts["full"] / total,
            multiple_choice_letter_match=counts["letter"] / total,
            multiple_choice_mixed_match=counts["mixed"] / total,
        )
    return TypeResult("multiple_choice", summary, items)


# -- list ------------------------------------------------------------------------------------------------------
LIST_EMPTY = {
    "list_overall_macro_avg_precision": 0.0,
    "list_overall_macro_avg_recall": 0.0,
    "list_overall_macro_avg_f1_score": 0.0,
    "list_overall_micro_precision": 0.0,
    "list_overall_micro_recall": 0.0,
    "list_overall_micro_f1_score": 0.0,
    **{f"list_{part}_{avg}_{m}": 0.0 for part in ("full_match", "combined_match") for avg in ("macro", "micro")
       for m in ("precision", "recall", "f1_score")},
    "list_full_match": 0.0,
    "list_letter_match": 0.0,
    "list_mixed_match": 0.0,
    "list_invalid_count": 0,
}  # fmt: skip


def overlap_prf(true_list: Sequence[str], pred_list: Sequence[str]) -> tuple[float, float, float]:
    """Per-question multiset precision/recall/F1 (``compute_overlap_f1``, §4.3)."""
    true_c, pred_c = Counter(map(str, true_list)), Counter(map(str, pred_list))
    tp = sum(min(true_c[k], pred_c[k]) for k in pred_c if k in true_c)
    fp = sum(pred_c[k] - true_c.get(k, 0) for k in pred_c if k not in true_c or pred_c[k] > true_c[k])
    fn = sum(true_c[k] - pred_c.get(k, 0) for k in true_c if k not in pred_c or true_c[k] > pred_c.get(k, 0))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def label_macro_micro(expected_sets: list[set[str]], predicted_sets: list[set[str]]) -> dict[str, float]:
    """Label-macro and pooled micro P/R/F1 via sklearn (§4.3, quirk §7.9).

    ``MultiLabelBinarizer`` over every gold and predicted label string, then
    ``precision_recall_fscore_support(average="macro"|"micro", zero_division=0)``: "macro" averages over
    *labels* (option strings), not questions. Raises ``ValueError`` when there is no label or no item.
    """
    from sklearn.metrics import precision_recall_fscore_support
    from sklearn.preprocessing import MultiLabelBinarizer

    mlb = MultiLabelBinarizer()
    mlb.fit(expected_sets + predicted_sets)
    y_true, y_pred = mlb.transform(expected_sets), mlb.transform(predicted_sets)
    scores = {}
    for avg in ("macro", "micro"):
        p, r, f1, _ = precision_recall_fscore_support(y_true, y_pred, average=avg, zero_division=0)
        scores.update({f"{avg}_precision": float(p), f"{avg}_recall": float(r), f"{avg}_f1_score": float(f1)})
    return scores


def ir_metrics(predicted: list[list[str]], gold: list[list[str]], k: int = 5) -> dict[str, float]:
    """MAP, MRR and P@k on the predicted order (reported by the public scorer, not used in any headline)."""
    aps, rrs, pks = [], [], []
    for preds, golds in zip(predicted, gold, strict=True):
        gold_set = set(golds)
        hits, precisions = 0, []
        for i, p in enumerate(preds):
            if p in gold_set:
                hits += 1
                precisions.append(hits / (i + 1))
        aps.append(sum(precisions) / len(gold_set) if gold_set else 0.0)
        rank = next((i + 1 for i, p in enumerate(preds) if p in gold_set), None)
        rrs.append(1 / rank if rank else 0.0)
        pks.append(sum(1 for p in preds[:k] if p in gold_set) / k)
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
    return {"map": mean(aps), "mrr": mean(rrs), "p@5": mean(pks)}


def _score_list_item(gold: dict, response: str) -> dict[str, Any]:
    options_raw = list(gold.get("options", []))
    options = strip_option_prefixes(options_raw)
    letter_to_text = {option_label(i): text for i, text in enumerate(options)}
    expected = clean_list_gold(list(gold.get("answer", [])), letter_to_text)
    raw = to_text(response)
    match_type, malformed, predicted, unmatched = list_match_letter_or_text(expected, raw, letter_to_text, options)
    if malformed:
        # §4.3 / §7.9: one unmatched piece zeroes the question; the prediction becomes the unmatched pieces.
        pred_set = {normalise(seg) for seg, _norm in unmatched}
        p = r = f1 = 0.0
    elif match_type == "mixed":
        mapped = []
        for v in predicted:
            v = v.strip()
            if ":" in v:
                letter = v.split(":", 1)[0].strip().upper()
                if letter in letter_to_text:
                    mapped.append(letter_to_text[letter].strip().lower())
            elif len(v) == 1 and v.upper() in letter_to_text:
                mapped.append(letter_to_text[v.upper()].strip().lower())
            else:
                mapped.append(v.strip().lower())
        p, r, f1 = overlap_prf(expected, mapped) if mapped else (0.0, 0.0, 0.0)
        pred_set = set(mapped)
    else:
        p, r, f1 = overlap_prf(expected, predicted)
        pred_set = set(predicted)
    return {
        "expected": expected, "predicted": predicted if predicted else [raw], "pred_set": sorted(pred_set),
        "options": [normalise(o) for o in options_raw], "precision": p, "recall": r, "f1": f1,
        "match_type": match_type, "malformed": malformed,
    }  # fmt: skip


def score_list(inputs: Sequence[dict], responses: Sequence[str], *, macro: str = "label") -> TypeResult:
    """List F1 (§4.3). ``macro="label"``: the public label-macro F1; ``"question"``: the paper's mean over questions.

    Items are parsed by :func:`~.normalise.list_match_letter_or_text`; a malformed item scores P = R = F1 = 0
    and counts in ``list_invalid_count``. Headline macro/micro come from :func:`label_macro_micro` over the
    items kept by paragraph_id; "full-match only" and "letter+mixed only" variants replace the other items'
    predictions by ∅. An item whose parsing raises (e.g. no options) is skipped, as in the public scorer.
    """
    items: list[dict[str, Any]] = []
    notes: list[str] = []
    counts = Counter()
    invalid = 0
    for index, (gold, response) in enumerate(zip(inputs, responses, strict=True)):
        record: dict[str, Any] = {"index": index, "paragraph_id": paragraph_id(gold)}
        try:
            record.update(_score_list_item(gold, response))
        except Exception as exc:  # noqa: BLE001 - the public scorer prints any error and drops the item
            record.update(skipped=True, error=f"{type(exc).__name__}: {exc}", precision=None, recall=None, f1=None)
            notes.append(f"list item {index + 1} skipped: {record['error']}")
            items.append(record)
            continue
        if record["malformed"]:
            invalid += 1
        else:
            counts["total"] += 1
            counts[record["match_type"]] += 1
        items.append(record)

    kept = [items[i] for i in kept_indices(items)]
    expected_sets = [set(r["expected"]) for r in kept]
    predicted_sets = [set(r["pred_set"]) for r in kept]
    try:
        overall = label_macro_micro(expected_sets, predicted_sets)
        full = label_macro_micro(
            expected_sets, [set(r["pred_set"]) if r["match_type"] == "full" else set() for r in kept]
        )
        combined = label_macro_micro(
            expected_sets, [set(r["pred_set"]) if r["match_type"] in {"letter", "mixed"} else set() for r in kept]
        )
    except ValueError as exc:
        # The public scorer's outer try: the whole list type falls back to zeros (even list_invalid_count).
        notes.append(f"list aggregates failed ({exc}); the public scorer reports zeros for the whole list type")
        return TypeResult("list", dict(LIST_EMPTY), items, notes)

    total = counts["total"]
    summary: dict[str, Any] = {
        "list_overall_macro_avg_precision": overall["macro_precision"],
        "list_overall_macro_avg_recall": overall["macro_recall"],
        "list_overall_macro_avg_f1_score": overall["macro_f1_score"],
        "list_overall_micro_precision": overall["micro_precision"],
        "list_overall_micro_recall": overall["micro_recall"],
        "list_overall_micro_f1_score": overall["micro_f1_score"],
    }
    for part, scores in (("full_match", full), ("combined_match", combined)):
        for avg in ("macro", "micro"):
            for m in ("precision", "recall", "f1_score"):
                summary[f"list_{part}_{avg}_{m}"] = scores[f"{avg}_{m}"]
    summary.update(
        list_full_match=counts["full"] / total if total else 0.0,
        list_letter_match=counts["letter"] / total if total else 0.0,
        list_mixed_match=counts["mixed"] / total if total else 0.0,
        list_invalid_count=invalid,
    )
    predicted_lists = [r["predicted"] for r in kept]
    gold_lists = [r["expected"] for r in kept]
    for suffix, allowed in (("", None), ("_full", {"full"}), ("_combined", {"letter", "mixed"})):
        chosen = [i for i, r in enumerate(kept) if allowed is None or r["match_type"] in allowed]
        ir = ir_metrics([predicted_lists[i] for i in chosen], [gold_lists[i] for i in chosen])
        summary.update({f"list_map{suffix}": ir["map"], f"list_mrr{suffix}": ir["mrr"],
                        f"list_p_at_5{suffix}": ir["p@5"]})  # fmt: skip
    summary["list_question_macro_f1_score"] = _mean([r["f1"] for r in items if not r.get("skipped")])
    if macro == "question":
        scored = [r for r in items if not r.get("skipped")]
        summary["list_overall_macro_avg_precision"] = _mean([r["precision"] for r in scored])
        summary["list_overall_macro_avg_recall"] = _mean([r["recall"] for r in scored])
        summary["list_overall_macro_avg_f1_score"] = summary["list_question_macro_f1_score"]
    return TypeResult("list", summary, items, notes)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
