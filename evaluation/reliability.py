"""The logic behind ``manage.py vetting_reliability`` (pure): reviewers' verdicts on QA items, and optionally gold
answers, fitted with the Dawid–Skene model (:mod:`stats.dawid_skene`), as a JSON-ready dict.

LABELS is a CSV ``item_uid,reviewer,label`` (one verdict per reviewer and item; a second reviewer or an adjudicator
is a row of their own), GOLD a CSV ``item_uid,label`` (one known answer per item). Labels are any text, kept as
written (whitespace around a value is stripped). Both files are read as the ``agreement`` command reads CSV
(:func:`evaluation.agreement.read_csv`), and bad input is refused with a :class:`records.jsonl.InputFileError`
naming the file, the line (the header is line 1) and the field: a missing column, a file without rows, an empty
item_uid, reviewer or label, a reviewer labelling an item twice, an item with two gold answers, a gold label that
no reviewer used. Gold on an item no reviewer labelled is read (its label is checked) but not used.

The report: the labels (sorted), the prior over them, per item of LABELS the most probable label and the posterior,
and per reviewer the accuracy (Σ_k prior_k · P(gives k | truth k)), the confusion matrix (row = true label, each
row summing to 1 over the labels given), the number of labels, and the share of their labels expected to be right
(``share_correct``) with its 95 % Jeffreys interval (``accuracy_interval``; it takes the posteriors as known).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.csv_input import data_line, read_fields
from records.jsonl import InputFileError
from stats.dawid_skene import DawidSkeneFit, accuracy, confusion_intervals, fit

LABEL_FIELDS = ("item_uid", "reviewer", "label")
GOLD_FIELDS = ("item_uid", "label")


def reliability_report(labels_path: str | Path, gold_path: str | Path | None = None) -> dict:
    """Read, fit and report (see the module docstring). Raises :class:`InputFileError` on bad input."""
    votes = read_labels(labels_path)
    item_codes, item_uids = pd.factorize(votes["item_uid"], sort=True)
    reviewer_codes, reviewers = pd.factorize(votes["reviewer"], sort=True)
    label_codes, labels_used = pd.factorize(votes["label"], sort=True)
    label_names = [str(label) for label in labels_used]
    gold = read_gold(gold_path, label_names) if gold_path is not None else {}
    item_of = {uid: code for code, uid in enumerate(item_uids)}
    true_labels = {item_of[uid]: label_names.index(label) for uid, label in gold.items() if uid in item_of}
    data = (item_codes.astype(np.int64), reviewer_codes.astype(np.int64), label_codes.astype(np.int64))
    result = fit(
        *data,
        n_items=len(item_uids),
        n_workers=len(reviewers),
        n_labels=len(label_names),
        true_labels=true_labels,
    )
    return {
        "method": "dawid-skene",
        "iterations": result.iterations,
        "labels": label_names,
        "prior": _by_label(result.priors, label_names),
        "items": _items(result, list(item_uids), label_names),
        "reviewers": _reviewers(result, data, list(reviewers), label_names),
    }


def read_labels(path: str | Path) -> pd.DataFrame:
    """The LABELS file's ``item_uid, reviewer, label`` rows, checked (see the module docstring)."""
    votes = read_fields(path, LABEL_FIELDS)
    repeated = votes.duplicated(["item_uid", "reviewer"]).to_numpy()
    if repeated.any():
        pos = int(repeated.argmax())
        uid, reviewer = votes["item_uid"].iloc[pos], votes["reviewer"].iloc[pos]
        first = data_line(int(((votes["item_uid"] == uid) & (votes["reviewer"] == reviewer)).to_numpy().argmax()))
        detail = f"{reviewer!r} already labelled item {uid!r} on line {first}"
        raise InputFileError(str(path), detail, line=data_line(pos), field="reviewer")
    return votes


def read_gold(path: str | Path, label_names: list[str]) -> dict[str, str]:
    """The GOLD file as ``{item_uid: label}`` in the file's order; every label must be one a reviewer used."""
    rows = read_fields(path, GOLD_FIELDS)
    unknown = (~rows["label"].isin(label_names)).to_numpy()
    if unknown.any():
        pos = int(unknown.argmax())
        detail = f"{rows['label'].iloc[pos]!r} is not a label any reviewer used ({', '.join(label_names)})"
        raise InputFileError(str(path), detail, line=data_line(pos), field="label")
    repeated = rows.duplicated(["item_uid"]).to_numpy()
    if repeated.any():
        pos = int(repeated.argmax())
        uid = rows["item_uid"].iloc[pos]
        first = data_line(int((rows["item_uid"] == uid).to_numpy().argmax()))
        detail = f"item {uid!r} already has a gold label on line {first}"
        raise InputFileError(str(path), detail, line=data_line(pos), field="item_uid")
    return dict(zip(rows["item_uid"], rows["label"], strict=True))


def format_table(report: dict) -> str:
    """A few readable lines: the fit, the prior, and per reviewer accuracy, share right and number of labels."""
    reviewers = report["reviewers"]
    n_labels = sum(r["n_labels"] for r in reviewers.values())
    lines = [
        f"Dawid-Skene: {n_labels} labels by {len(reviewers)} reviewers on {len(report['items'])} items, "
        f"{report['iterations']} iterations",
        "prior: " + ", ".join(f"{label} {p:.3f}" for label, p in report["prior"].items()),
        "",
    ]
    width = max(len("reviewer"), *(len(name) for name in reviewers))
    lines.append(f"{'reviewer':<{width}}  accuracy  share right  95% interval      labels")
    for name, r in reviewers.items():
        low, high = r["accuracy_interval"]
        interval = f"[{low:.3f}, {high:.3f}]"
        lines.append(
            f"{name:<{width}}  {r['accuracy']:8.3f}  {r['share_correct']:11.3f}  {interval:<16}  {r['n_labels']:6d}"
        )
    return "\n".join(lines) + "\n"


def _by_label(values: np.ndarray, label_names: list[str]) -> dict[str, float]:
    return {label: float(v) for label, v in zip(label_names, values, strict=True)}


def _items(result: DawidSkeneFit, item_uids: list[str], label_names: list[str]) -> dict:
    best = result.posteriors.argmax(axis=1)  # ties go to the first label, as crowd-kit's idxmax
    return {
        uid: {"label": label_names[best[code]], "posterior": _by_label(result.posteriors[code], label_names)}
        for code, uid in enumerate(item_uids)
    }


def _reviewers(
    result: DawidSkeneFit, data: tuple[np.ndarray, np.ndarray, np.ndarray], names: list[str], label_names: list[str]
) -> dict:
    accuracies = accuracy(result)
    intervals = confusion_intervals(result, *data)
    counts = np.bincount(data[1], minlength=len(names))
    return {
        name: {
            "accuracy": float(accuracies[w]),
            "confusion": {true: _by_label(result.errors[w, k], label_names) for k, true in enumerate(label_names)},
            "n_labels": int(counts[w]),
            "share_correct": float(intervals.share_correct[w]),
            "accuracy_interval": [float(intervals.accuracy_low[w]), float(intervals.accuracy_high[w])],
        }
        for w, name in enumerate(names)
    }
