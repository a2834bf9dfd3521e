"""The logic behind ``manage.py ppi_estimate`` (pure): each system's mean physician score, estimated from a sample
of items physicians labelled and a judge's values on every item (prediction-powered inference, :mod:`stats.ppi`),
as a JSON-ready dict.

HUMAN and JUDGE are CSVs ``item_uid,system,value`` (columns found by name, others ignored), read as the
``vetting_reliability`` command reads CSV (:mod:`evaluation.csv_input`). Several HUMAN rows for one (item, system)
(several physicians) are averaged first; JUDGE holds one value per (item, system). Per system, Y is the physicians'
means on the items they labelled (n of them), Ŷ the judge's values on those items, and Ŷu the judge's values on
the N items no physician labelled.

Refused with a :class:`records.jsonl.InputFileError` naming the file, the line (the header is line 1) and the
field: an empty file, a missing column, an empty cell, a value that is not a finite number, a judge row repeating
an (item, system), a HUMAN row whose (item, system) has no judge value, and a system with fewer than 2 labelled
items (named; a system only JUDGE has is refused too, at its first line there: it has no physician values at all).

The report: ``alpha`` and, per system (sorted), ``n_human`` (n), ``n_judge_only`` (N), the ``classical`` interval
of the mean of Y, the ``ppi`` one with its power-tuning ``lambda``, and ``human_needed``: with a target
half-width, how many physician-labelled items in all the PPI estimate needs to reach it
(:func:`stats.ppi.labels_needed`, at most n + N); ``None`` without one.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.csv_input import data_line, read_fields
from records.jsonl import InputFileError
from stats.ppi import DEFAULT_ALPHA, classical_mean_ci, labels_needed, ppi_mean_ci

FIELDS = ("item_uid", "system", "value")
MIN_LABELLED = 2


def ppi_report(
    human_path: str | Path,
    judge_path: str | Path,
    *,
    alpha: float = DEFAULT_ALPHA,
    target_halfwidth: float | None = None,
) -> dict:
    """Read, check, estimate and report (see the module docstring). Raises :class:`InputFileError` on bad input."""
    human = human_means(read_values(human_path))
    judge = read_values(judge_path)
    _refuse_repeated_judge_rows(judge, str(judge_path))
    joined = _joined(human, judge, str(human_path), str(judge_path))
    systems = {}
    for system, rows in joined.groupby("system", sort=True):
        labelled = rows["human"].notna().to_numpy()
        y = rows["human"].to_numpy()[labelled]
        yhat = rows["value"].to_numpy()
        systems[str(system)] = system_estimate(y, yhat[labelled], yhat[~labelled], alpha, target_halfwidth)
    return {"alpha": alpha, "systems": systems}


def system_estimate(
    y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, alpha: float, target_halfwidth: float | None
) -> dict:
    """One system's entry of the report."""
    ppi = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha)
    needed = None
    if target_halfwidth is not None:
        needed = labels_needed(y, yhat, y.size + yhat_unlabeled.size, target_halfwidth, alpha)
    return {
        "n_human": int(y.size),
        "n_judge_only": int(yhat_unlabeled.size),
        "classical": asdict(classical_mean_ci(y, alpha)),
        "ppi": {"mean": ppi.mean, "low": ppi.low, "high": ppi.high, "lambda": ppi.lam},
        "human_needed": needed,
    }


def read_values(path: str | Path) -> pd.DataFrame:
    """A HUMAN or JUDGE file's ``item_uid, system, value`` rows, ``value`` as a float, checked; ``line`` is each
    row's line in the file."""
    rows = read_fields(path, FIELDS)
    values = pd.to_numeric(rows["value"], errors="coerce").astype(float).to_numpy()
    bad = ~np.isfinite(values)
    if bad.any():
        pos = int(bad.argmax())
        detail = f"{rows['value'].iloc[pos]!r} is not a finite number"
        raise InputFileError(str(path), detail, line=data_line(pos), field="value")
    return rows.assign(value=values, line=np.arange(len(rows)) + 2)


def human_means(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, item): the physicians' mean value and the line of the first of their rows."""
    grouped = rows.groupby(["system", "item_uid"], sort=False)
    return grouped.agg(human=("value", "mean"), line=("line", "min")).reset_index()


def format_table(report: dict) -> str:
    """One line per system: the numbers of items, both intervals, λ and the physician-labelled items needed."""
    systems = report["systems"]
    level = f"{1 - report['alpha']:.0%}"
    width = max(len("system"), *(len(name) for name in systems))
    lines = [
        f"Prediction-powered estimates of the physicians' mean, {level} intervals",
        "",
        f"{'system':<{width}}  {'n':>6}  {'N':>7}  {'classical':<28}  {'ppi':<28}  lambda  needed",
    ]
    for name, s in systems.items():
        needed = "-" if s["human_needed"] is None else str(s["human_needed"])
        lines.append(
            f"{name:<{width}}  {s['n_human']:6d}  {s['n_judge_only']:7d}  {_interval(s['classical']):<28}  "
            f"{_interval(s['ppi']):<28}  {s['ppi']['lambda']:6.3f}  {needed:>6}"
        )
    return "\n".join(lines) + "\n"


def _interval(figures: dict) -> str:
    return f"{figures['mean']:.4f} [{figures['low']:.4f}, {figures['high']:.4f}]"


def _refuse_repeated_judge_rows(judge: pd.DataFrame, display: str) -> None:
    repeated = judge.duplicated(["system", "item_uid"]).to_numpy()
    if repeated.any():
        pos = int(repeated.argmax())
        uid, system = judge["item_uid"].iloc[pos], judge["system"].iloc[pos]
        first = int(judge["line"][(judge["item_uid"] == uid) & (judge["system"] == system)].iloc[0])
        detail = f"item {uid!r} of system {system!r} already has a judge value on line {first}"
        raise InputFileError(display, detail, line=data_line(pos), field="item_uid")


def _joined(human: pd.DataFrame, judge: pd.DataFrame, human_display: str, judge_display: str) -> pd.DataFrame:
    """The judge's rows with the physicians' mean (NaN where no physician labelled the item), after refusing a
    physician value without a judge value and a system with fewer than :data:`MIN_LABELLED` labelled items."""
    joined = judge.merge(human, on=["system", "item_uid"], how="outer", suffixes=("", "_human"), indicator=True)
    orphans = joined[joined["_merge"] == "right_only"]
    if len(orphans):
        first = orphans.loc[orphans["line_human"].idxmin()]
        detail = f"item {first['item_uid']!r} of system {first['system']!r} has no value in {judge_display}"
        raise InputFileError(human_display, detail, line=int(first["line_human"]))
    counts = joined.groupby("system", sort=True)["human"].count()
    for system, count in counts[counts < MIN_LABELLED].items():
        rows = joined[joined["system"] == system]
        needed = f"at least {MIN_LABELLED} are needed"
        if count == 0:
            detail = f"system {system!r} has no item with a physician's value in {human_display}; {needed}"
            raise InputFileError(judge_display, detail, line=int(rows["line"].min()))
        detail = f"system {system!r} has only {count} item with a physician's value; {needed}"
        raise InputFileError(human_display, detail, line=int(rows["line_human"].min()))
    return joined
