"""The logic behind the ``agreement``, ``ranking_agreement`` and ``metric_correlation`` commands (pure).

Each ``*_report`` function reads CSV file(s), validates them (naming file, line and column on error by raising
:class:`StatsInputError`), runs the statistics and returns a JSON-ready dict: plain floats, ``None`` where a
figure is undefined, and a ``notes`` list that says why. Line numbers count the header as line 1.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from records.text import NotUtf8, utf8_text
from stats.agreement import LEVELS, agreement_summary
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.correlation import pairwise_accuracy, segment_tau_b, system_correlation
from stats.leaderboard import bradley_terry_leaderboard
from stats.rankings import kendall_w, mean_pairwise_tau_b
from stats.results import StatResult


class StatsInputError(ValueError):
    """Bad input file; the message names the file, the line and the column."""


def _csv_text(path, where) -> str:
    """The file's text; a file that is not UTF-8 is refused with the line and byte where it stops being so."""
    try:
        raw = path.read() if hasattr(path, "read") else Path(path).read_bytes()
    except FileNotFoundError:
        raise StatsInputError(f"{where}: no such file") from None
    except OSError as exc:
        raise StatsInputError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        return utf8_text(raw)  # without the byte-order mark, which would rename the first column
    except NotUtf8 as exc:
        raise StatsInputError(f"{where}: line {exc.line}: {exc}") from None


def read_csv(path, required: Sequence[str], *, name: str | None = None) -> pd.DataFrame:
    """Read a CSV as strings (empty cells stay ""), check the columns, strip whitespace.

    ``path`` is a path or an open binary file (an upload); ``name`` is how messages call it (default: the path).
    """
    where = name or path
    text = _csv_text(path, where)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise StatsInputError(f"{where}: the file is empty") from None
    except pd.errors.ParserError as exc:
        # pandas: "Error tokenizing data. C error: Expected 3 fields in line 5, saw 4"
        fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if fields:
            expected, line, found = fields.groups()
            raise StatsInputError(f"{where}: line {line}: {found} fields where the header has {expected}") from None
        quote = re.search(r"EOF inside string starting at row (\d+)", str(exc))  # rows counted from 0
        if quote:
            raise StatsInputError(f"{where}: line {int(quote.group(1)) + 1}: a quoted field is never closed") from None
        raise StatsInputError(f"{where}: not a CSV file the portal can read ({str(exc).strip()})") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise StatsInputError(
            f"{where}: line 1 (header): missing column(s) {', '.join(map(repr, missing))}; found {list(df.columns)}"
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


def wrap_errors(path: str | Path, fn, *args, **kwargs):
    """Run a statistic, turning its ValueError about the data into a StatsInputError naming the file(s)."""
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
    w = wrap_errors(path, kendall_w, df, n_resamples=n_resamples, seed=seed)
    tau = wrap_errors(path, mean_pairwise_tau_b, df, n_resamples=n_resamples, seed=seed)
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


def read_rankings(path: str | Path) -> pd.DataFrame:
    """``item, annotator, answer, rank, system`` rankings, validated."""
    return _rank_frame(path, ["system"])


def read_scores(path: str | Path) -> pd.DataFrame:
    """``item, system, score`` metric scores, validated (numeric, one per item and system)."""
    scores = read_csv(path, ["item", "system", "score"])
    _require_nonempty(scores, path, ["item", "system"])
    scores["score"] = _numeric(scores, path, "score")
    _no_duplicates(scores, path, ["item", "system"])
    return scores


def metric_correlation_report(
    rankings_path: str | Path,
    scores_path: str | Path,
    *,
    exclude: Sequence[str] = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """Segment tau-b, pairwise accuracy, system Pearson/Spearman and Bradley-Terry strengths."""
    ranks = read_rankings(rankings_path)
    scores = read_scores(scores_path)
    kw = {"exclude": tuple(exclude), "n_resamples": n_resamples, "seed": seed}
    where = f"{rankings_path} / {scores_path}"
    seg, _ = wrap_errors(where, segment_tau_b, ranks, scores, **kw)
    out: dict = {"excluded_systems": list(exclude)}
    notes: list[str] = []
    _fig(seg, "segment_tau_b", out, notes)
    _fig(wrap_errors(where, pairwise_accuracy, ranks, scores, **kw), "pairwise_accuracy", out, notes)
    for method in ("pearson", "spearman"):
        _fig(
            wrap_errors(where, system_correlation, ranks, scores, method=method, **kw),
            f"system_{method}",
            out,
            notes,
        )
        bt = wrap_errors(where, system_correlation, ranks, scores, method=method, human="bradley_terry", **kw)
        _fig(bt, f"system_{method}_bt", out, notes)
    board = wrap_errors(rankings_path, bradley_terry_leaderboard, ranks, **kw)
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


def _fmt(v: object) -> str:
    if v is None:
        return "undefined"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def _lines(key: str, val: object, indent: int) -> list[str]:
    pad = "  " * indent
    if isinstance(val, dict):
        out = [f"{pad}{key}:"]
        for k, v in val.items():
            if str(k).endswith("_ci"):
                continue
            ci = val.get(f"{k}_ci") if isinstance(v, (int, float)) else None
            out.extend(
                _lines(str(k), v, indent + 1) if isinstance(v, (dict, list)) else [_line_of(k, v, ci, indent + 1)]
            )
        return out
    if isinstance(val, list) and any(isinstance(v, (dict, list)) for v in val):
        out = [f"{pad}{key}:"]
        for i, v in enumerate(val, start=1):
            out.extend(_lines(str(i), v, indent + 1))
        return out
    if isinstance(val, list):
        return [f"{pad}{key:<26} {', '.join(_fmt(v) for v in val) or 'none'}"]
    return [_line_of(key, val, None, indent)]


def _line_of(key: object, val: object, ci: object, indent: int) -> str:
    extra = f"  [95% CI {ci[0]:.4f}, {ci[1]:.4f}]" if isinstance(ci, list) and len(ci) == 2 else ""
    return f"{'  ' * indent}{str(key):<26} {_fmt(val)}{extra}"


def format_text(report: dict) -> str:
    """Human-readable lines: ``name  value  [95% CI lo, hi]``; nested figures indented; notes at the end."""
    lines = []
    for key, val in report.items():
        if key == "notes" or key.endswith("_ci"):
            continue
        if isinstance(val, (dict, list)):
            lines.extend(_lines(key, val, 0))
            continue
        line = _line_of(key, val, report.get(f"{key}_ci"), 0)
        if key == "percent_agreement" and isinstance(val, float):
            line += f"  ({val * 100:.1f} % of rater pairs agree)"
        lines.append(line)
    if report.get("notes"):
        lines.append("notes:")
        lines.extend(f"  - {n}" for n in report["notes"])
    return "\n".join(lines) + "\n"
