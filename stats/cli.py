"""The logic behind the ``agreement``, ``ranking_agreement`` and ``metric_correlation`` commands (pure).

Each ``*_report`` function reads CSV file(s), validates them (naming file, line and column on error by raising
:class:`StatsInputError`), runs the statistics and returns a JSON-ready dict: plain floats, ``None`` where a
figure is undefined, and a ``notes`` list that says why. Line numbers count the header as line 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .agreement import LEVELS, agreement_summary
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from .correlation import pairwise_accuracy, segment_tau_b, system_correlation
from .leaderboard import bradley_terry_leaderboard
from .rankings import kendall_w, mean_pairwise_tau_b
from .results import StatResult


class StatsInputError(ValueError):
    """Bad input file; the message names the file, the line and the column."""


def read_csv(path: str | Path, required: Sequence[str]) -> pd.DataFrame:
    """Read a CSV as strings (empty cells stay ""), check the columns, strip whitespace."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except FileNotFoundError:
        raise StatsInputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise StatsInputError(f"{path}: cannot read as CSV: {exc}") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise StatsInputError(
            f"{path}: line 1 (header): missing column(s) {', '.join(map(repr, missing))}; found {list(df.columns)}"
        )
    for col in df.columns:
        df[col] = df[col].astype(str).str.strip()
    return df


def _where(path: str | Path, pos: int, col: str) -> str:
    return f"{path}: line {pos + 2}, column {col!r}"


def _require_nonempty(df: pd.DataFrame, path: str | Path, cols: Sequence[str]) -> None:
    for col in cols:
        empty = (df[col] == "").to_numpy()
        if empty.any():
            raise StatsInputError(f"{_where(path, int(empty.argmax()), col)}: empty value")


def _to_float(s: str) -> float | None:
    try:
        x = float(s)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _numeric(df: pd.DataFrame, path: str | Path, col: str) -> pd.Series:
    vals = [_to_float(v) for v in df[col]]
    for pos, v in enumerate(vals):
        if v is None:
            raise StatsInputError(f"{_where(path, pos, col)}: {df[col].iloc[pos]!r} is not a number")
    return pd.Series(vals, index=df.index, dtype=float)


def _no_duplicates(df: pd.DataFrame, path: str | Path, keys: Sequence[str]) -> None:
    dup = df.duplicated(list(keys)).to_numpy()
    if dup.any():
        pos = int(dup.argmax())
        what = ", ".join(f"{k}={df[k].iloc[pos]!r}" for k in keys)
        raise StatsInputError(f"{_where(path, pos, keys[-1])}: duplicate row for {what}")


def _fig(res: StatResult, key: str, out: dict, notes: list[str]) -> None:
    out[key] = res.value
    out[f"{key}_ci"] = list(res.ci) if res.ci else None
    if res.undefined_reason:
        notes.append(f"{key}: undefined: {res.undefined_reason}")
    notes.extend(f"{key}: {n}" for n in res.notes)


def parse_scale(values: str | None) -> list[str] | None:
    """``"good,okay,bad"`` -> ``["good", "okay", "bad"]`` (order kept)."""
    if values is None:
        return None
    scale = [v.strip() for v in values.split(",") if v.strip()]
    if not scale:
        raise StatsInputError("--values: empty scale")
    if len(set(scale)) != len(scale):
        raise StatsInputError(f"--values: repeated value in {scale}")
    return scale


def agreement_report(
    path: str | Path,
    *,
    level: str,
    values: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """Agreement figures for ``item,annotator,value`` (empty value = missing). See the module docstring."""
    if level not in LEVELS:
        raise StatsInputError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    df = read_csv(path, ["item", "annotator", "value"])
    _require_nonempty(df, path, ["item", "annotator"])
    present = df[df["value"] != ""]
    _no_duplicates(present, path, ["item", "annotator"])
    raw = present["value"]
    scale: list | None = None
    if values is not None:
        scale = list(values)
        nums = [_to_float(v) for v in scale]
        numeric = all(x is not None for x in nums)
        if numeric:
            scale = nums
            data = [_to_float(v) for v in raw]
        else:
            data = list(raw)
        allowed = set(scale)
        for pos, (v, orig) in enumerate(zip(data, raw, strict=True)):
            if v not in allowed:
                raise StatsInputError(
                    f"{_where(path, int(raw.index[pos]), 'value')}: {orig!r} is not on the scale {list(values)}"
                )
    else:
        nums = [_to_float(v) for v in raw]
        data = nums if all(x is not None for x in nums) else list(raw)
    ratings = pd.DataFrame({"item": present["item"], "annotator": present["annotator"], "value": data})
    res = agreement_summary(ratings, level=level, values=scale, n_resamples=n_resamples, seed=seed)
    out: dict = {"level": level}
    notes: list[str] = []
    for key in (
        "krippendorff_alpha",
        "fleiss_kappa",
        "cohen_kappa",
        "cohen_kappa_quadratic",
        "percent_agreement",
    ):
        _fig(res[key], key, out, notes)
    out["n_items"] = res["percent_agreement"].n_items
    out["n_annotators"] = int(df.loc[df["value"] != "", "annotator"].nunique())
    out["n_missing"] = int((df["value"] == "").sum())
    out["notes"] = list(dict.fromkeys(notes))
    return out


def _rank_frame(path: str | Path, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = ["item", "annotator", "answer", "rank", *extra]
    df = read_csv(path, cols)
    _require_nonempty(df, path, [c for c in cols if c != "rank"])
    df["rank"] = _numeric(df, path, "rank")
    _no_duplicates(df, path, ["item", "annotator", "answer"])
    if "system" in extra:
        _no_duplicates(df, path, ["item", "annotator", "system"])
    return df


def _wrap(path: str | Path, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except StatsInputError:
        raise
    except ValueError as exc:
        raise StatsInputError(f"{path}: {exc}") from None


def ranking_agreement_report(
    path: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict:
    """Kendall's W (pooled and per item) and mean pairwise tau-b for ``item,annotator,answer,rank``."""
    df = _rank_frame(path)
    w = _wrap(path, kendall_w, df, n_resamples=n_resamples, seed=seed)
    tau = _wrap(path, mean_pairwise_tau_b, df, n_resamples=n_resamples, seed=seed)
    out: dict = {}
    notes: list[str] = []
    _fig(w.pooled, "kendall_w", out, notes)
    per = w.per_item
    out["kendall_w_per_item"] = {str(k): (None if pd.isna(v) else float(v)) for k, v in per["value"].items()}
    for item, why in per["undefined_reason"].dropna().items():
        notes.append(f"kendall_w_per_item[{item}]: undefined: {why}")
    _fig(tau.pooled, "mean_pairwise_tau_b", out, notes)
    out["n_items"] = int((per["n_answers"] >= 2).sum())
    out["n_annotators"] = int(df["annotator"].nunique())
    out["notes"] = list(dict.fromkeys(notes))
    return out


def metric_correlation_report(
    rankings_path: str | Path,
    scores_path: str | Path,
    *,
    exclude: Sequence[str] = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """Segment tau-b, pairwise accuracy, system Pearson/Spearman and Bradley-Terry strengths."""
    ranks = _rank_frame(rankings_path, ["system"])
    scores = read_csv(scores_path, ["item", "system", "score"])
    _require_nonempty(scores, scores_path, ["item", "system"])
    scores["score"] = _numeric(scores, scores_path, "score")
    _no_duplicates(scores, scores_path, ["item", "system"])
    kw = {"exclude": tuple(exclude), "n_resamples": n_resamples, "seed": seed}
    where = f"{rankings_path} / {scores_path}"
    seg, _ = _wrap(where, segment_tau_b, ranks, scores, **kw)
    out: dict = {"excluded_systems": list(exclude)}
    notes: list[str] = []
    _fig(seg, "segment_tau_b", out, notes)
    _fig(_wrap(where, pairwise_accuracy, ranks, scores, **kw), "pairwise_accuracy", out, notes)
    for method in ("pearson", "spearman"):
        _fig(
            _wrap(where, system_correlation, ranks, scores, method=method, **kw),
            f"system_{method}",
            out,
            notes,
        )
        bt = _wrap(where, system_correlation, ranks, scores, method=method, human="bradley_terry", **kw)
        _fig(bt, f"system_{method}_bt", out, notes)
    board = _wrap(rankings_path, bradley_terry_leaderboard, ranks, **kw)
    out["bradley_terry"] = {str(s.system): s.strength for s in board.standings}
    out["bradley_terry_ci"] = {str(s.system): list(s.strength_ci) if s.strength_ci else None for s in board.standings}
    out["win_rate"] = {str(s.system): s.win_rate for s in board.standings}
    if board.undefined_reason:
        notes.append(f"bradley_terry: undefined: {board.undefined_reason}")
    notes.extend(f"bradley_terry: {n}" for n in board.notes)
    out["n_items"] = seg.n_items
    out["n_systems"] = seg.n_systems or 0
    out["notes"] = list(dict.fromkeys(notes))
    return out


def to_json(report: dict) -> str:
    """One JSON object; refuses NaN/inf so an undefined figure can only appear as ``null``."""
    return json.dumps(report, allow_nan=False, sort_keys=False)


def _fmt(v: object) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def format_text(report: dict) -> str:
    """Human-readable lines: ``name  value  [95% CI lo, hi]``; dict figures listed; notes at the end."""
    lines = []
    for key, val in report.items():
        if key == "notes" or key.endswith("_ci"):
            continue
        if isinstance(val, dict):
            lines.append(f"{key}:")
            lines.extend(f"  {k:<24} {_fmt(v)}" for k, v in val.items())
            continue
        ci = report.get(f"{key}_ci")
        extra = f"  [95% CI {ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""
        if key == "percent_agreement" and isinstance(val, float):
            extra += f"  ({val * 100:.1f} % of rater pairs agree)"
        lines.append(f"{key:<26} {_fmt(val)}{extra}")
    if report.get("notes"):
        lines.append("notes:")
        lines.extend(f"  - {n}" for n in report["notes"])
    return "\n".join(lines) + "\n"
