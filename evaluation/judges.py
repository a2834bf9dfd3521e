"""The judge figures of ``metric_correlation --judges/--tie-calibration/--permutations/--answers`` (pure).

Reads a judges file (CSV or JSON Lines: ``item_uid, system, judge`` and a ``score`` or a ``label``; one per judge,
question and system; labels become scores by their place on an ordered scale, :func:`read_judge_rows`; a judge may
also give its ``probability`` that the answer is good, name its model family, or decline with the label "cannot
judge"), a pairwise verdicts file (:func:`read_verdict_rows`) and an answers file (``item_uid, system, response``)
for the style-controlled leaderboard, refusing bad input by file, line and field, and turns :mod:`stats.judges` and
:mod:`stats.style` results into JSON-ready dicts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from evaluation.agreement import (
    StatsInputError,
    metric_correlation_report,
    read_csv,
    read_rankings,
    read_scores,
    wrap_errors,
)
from records import jsonl
from records.text import refused_character
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.judges import judge_meta_evaluation
from stats.results import StatResult
from stats.significance import DEFAULT_PERMUTATIONS
from stats.style import STYLE_FEATURES, answer_style, comparisons, leaderboard_of, without_style

#: Every judge line names these; it gives a ``score`` (higher = better), a ``label`` on an ordered scale, or both.
JUDGE_FIELDS = ("item_uid", "system", "judge")
JUDGE_VALUE_FIELDS = ("score", "label")
#: What a judge line may add: the judge's probability (0 to 1) that the answer is good, and its model family.
JUDGE_CARD_FIELDS = ("probability", "judge_family")
JUDGE_FAMILY_MAX = 100
#: The label of a judge declining an answer (case and surrounding spaces do not matter); never a scale label.
CANNOT_JUDGE = "cannot judge"
#: A pairwise verdicts line: the two systems in the order the judge was shown them, and which it preferred.
VERDICT_FIELDS = ("item_uid", "judge", "first", "second", "verdict")
VERDICTS = ("first", "second", "tie")
ANSWER_FIELDS = ("item_uid", "system", "response")
MAX_FIELD_CHARS = 100_000


def _is_jsonl(path: str | Path) -> bool:
    return str(path).lower().endswith((".jsonl", ".json", ".ndjson"))


def read_records(
    path,
    fields: Iterable[str],
    *,
    numbers: Iterable[str] = (),
    optional: Iterable[str] = (),
    name: str | None = None,
) -> pd.DataFrame:
    """Rows of a CSV or JSON Lines file, every field required and non-empty; ``numbers`` are finite numbers.

    ``optional`` fields may be missing (a CSV without the column, a JSON line without the key or with ``null``) or
    empty; they come back as ``None``, and when present they are checked like the others.

    Errors name the file, the line (counted from 1; a CSV's header is line 1) and the field. JSON Lines are read by
    the shared strict reader (:mod:`records.jsonl`). ``path`` may also be an upload (the file's lines for JSON
    Lines, an open binary file for a CSV) when ``name``, the name messages use, says which kind it is.
    """
    fields, numbers, optional = tuple(fields), tuple(numbers), tuple(optional)
    display = name or str(path)
    if not _is_jsonl(display):
        df = read_csv(path, fields, name=display)
        path = display
        for col in fields:
            empty = (df[col] == "").to_numpy()
            if empty.any():
                raise StatsInputError(f"{path}: line {int(empty.argmax()) + 2}, field {col!r}: empty value")
        for col in optional:
            if col not in df.columns:
                df[col] = ""
        df = df.loc[:, [*fields, *optional]]
        for col in df.columns:  # the same text rule as the JSON Lines reader's: nothing the database cannot store
            for pos, value in enumerate(df[col]):
                if why := refused_character(value):
                    raise StatsInputError(f"{path}: line {pos + 2}, field {col!r}: {why}")
        df["_line"] = range(2, len(df) + 2)
        for col in numbers:
            values = [None if col in optional and v == "" else _finite(v) for v in df[col]]
            for pos, v in enumerate(values):
                if v is None and df[col].iloc[pos] != "":
                    raise StatsInputError(
                        f"{path}: line {pos + 2}, field {col!r}: {df[col].iloc[pos]!r} is not a finite number"
                    )
            df[col] = pd.Series(values, index=df.index, dtype=object)
        for col in optional:
            if col not in numbers:
                df[col] = [v or None for v in df[col]]
        return df
    rows = []
    try:
        for number, record in jsonl.records(path, display):
            row: dict = {
                name: None
                if name in optional and record.get(name) in (None, "")
                else jsonl.number_field(record, name, display, number)
                if name in numbers
                else jsonl.text_field(record, name, display, number, limit=MAX_FIELD_CHARS)
                for name in (*fields, *optional)
            }
            row["_line"] = number
            rows.append(row)
    except jsonl.InputFileError as exc:
        raise StatsInputError(str(exc)) from None
    if not rows:
        raise StatsInputError(f"{display}: no records")
    return pd.DataFrame(rows)


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _line(df: pd.DataFrame, pos: int) -> int:
    return int(df["_line"].iloc[pos])


def parse_label_scale(values: str | Iterable[str] | None) -> list[str] | None:
    """An ordered label scale, best first ("good, okay, bad" or a list); ``None`` when none is given."""
    if values is None:
        return None
    scale = [v.strip() for v in (values.split(",") if isinstance(values, str) else values) if v and v.strip()]
    if not scale:
        return None
    for label in scale:  # a label must be text that can be stored and shown, like the labels of the file
        reason = refused_character(label)
        if reason:
            raise StatsInputError(f"the label scale: a label {reason}")
    folded = [v.casefold() for v in scale]
    if len(set(folded)) != len(folded):
        raise StatsInputError(f"the label scale {', '.join(scale)} names a label twice")
    if CANNOT_JUDGE in folded:  # that label is the judge declining; as a step of the scale it would never count
        raise StatsInputError(f"the label scale: {CANNOT_JUDGE!r} is a judge declining an answer, not a label")
    return scale


def label_scores(scale: Iterable[str]) -> dict[str, float]:
    """Each label's score on an ordered scale given best first: the last is 0, each better label one more, so that
    higher is better as for numeric scores. Keys are case-folded (a judge writing "Good" means "good")."""
    scale = list(scale)
    return {label.casefold(): float(len(scale) - 1 - i) for i, label in enumerate(scale)}


def is_abstention(label: str | None) -> bool:
    """Whether a line's label is the judge declining the answer ("cannot judge", any case, spaces around)."""
    return label is not None and label.strip().casefold() == CANNOT_JUDGE


def read_judge_rows(path, *, scale: Iterable[str] | None = None, name: str | None = None) -> pd.DataFrame:
    """The lines of a judges file: ``item_uid, system, judge, score, label, probability, judge_family, abstained,
    _line``, one per judge and answer.

    A line gives a numeric ``score``, a ``label``, or both (the score then counts; the label is kept). A label
    becomes a score by its place on ``scale`` (best first, :func:`label_scores`); a label off the scale, or labels
    without a scale, are refused. The label "cannot judge" without a score is the judge declining the answer
    (``abstained``, score NaN); with a score, or with a probability, it is refused. ``probability`` (NaN when not
    given) is a number from 0 to 1; ``judge_family`` (None when not given) is the same on every line of a judge.
    Errors name the file, the line and the field, like every reader here.
    """
    display = name or str(path)
    df = read_records(
        path,
        JUDGE_FIELDS,
        numbers=("score", "probability"),
        optional=(*JUDGE_VALUE_FIELDS, *JUDGE_CARD_FIELDS),
        name=name,
    )
    scores = label_scores(scale) if scale is not None else None
    values, abstained = [], []
    for pos, (score, label, probability) in enumerate(zip(df["score"], df["label"], df["probability"], strict=True)):
        label = None if pd.isna(label) else label
        where = f"{display}: line {_line(df, pos)}"
        declined = is_abstention(label)
        abstained.append(declined)
        if declined:
            if not pd.isna(score):
                raise StatsInputError(f"{where}, field 'label': {label!r} means no score, but the line gives one")
            if not pd.isna(probability):
                raise StatsInputError(f"{where}, field 'probability': {label!r} means no probability, but one is given")
            values.append(math.nan)
            continue
        if not pd.isna(score):  # a missing score reads as None or, in a column of numbers, NaN
            values.append(float(score))
            continue
        if label is None:
            raise StatsInputError(f"{where}, field 'score': give a score or a label")
        if scores is None:
            raise StatsInputError(
                f"{where}, field 'label': {label!r} is a label, but no label scale (best first) was given"
            )
        if label.casefold() not in scores:
            raise StatsInputError(
                f"{where}, field 'label': {label!r} is not on the scale {', '.join(scale or [])} (best first)"
            )
        values.append(scores[label.casefold()])
    df["score"] = pd.Series(values, index=df.index, dtype=float)
    df["label"] = pd.Series([None if pd.isna(v) else v for v in df["label"]], index=df.index, dtype=object)
    df["abstained"] = pd.Series(abstained, index=df.index, dtype=bool)
    df["probability"] = _probabilities(df, display)
    df["judge_family"] = _families(df, display)
    dup = df.duplicated(["judge", "item_uid", "system"]).to_numpy()
    if dup.any():
        pos = int(dup.argmax())
        raise StatsInputError(
            f"{display}: line {_line(df, pos)}, field 'judge': a second score from judge {df['judge'].iloc[pos]!r} "
            f"for system {df['system'].iloc[pos]!r} on item {df['item_uid'].iloc[pos]!r}"
        )
    return df


def _probabilities(df: pd.DataFrame, display: str) -> pd.Series:
    """The ``probability`` column as floats (NaN where not given), each from 0 to 1 (the reader checked it finite)."""
    values = pd.Series([math.nan if pd.isna(v) else float(v) for v in df["probability"]], index=df.index, dtype=float)
    outside = ((values < 0) | (values > 1)).to_numpy()
    if outside.any():
        pos = int(outside.argmax())
        raise StatsInputError(
            f"{display}: line {_line(df, pos)}, field 'probability': {float(values.iloc[pos])!r} is not a probability "
            "(from 0 to 1)"
        )
    return values


def _families(df: pd.DataFrame, display: str) -> pd.Series:
    """The ``judge_family`` column (None where not given): at most :data:`JUDGE_FAMILY_MAX` characters, and the same
    on every line of a judge, since a judge is one model (a line without it differs from lines with it)."""
    families = [None if pd.isna(v) else str(v) for v in df["judge_family"]]
    first: dict[str, str | None] = {}
    for pos, (judge, family) in enumerate(zip(df["judge"], families, strict=True)):
        where = f"{display}: line {_line(df, pos)}, field 'judge_family'"
        if family is not None and len(family) > JUDGE_FAMILY_MAX:
            raise StatsInputError(f"{where}: a family of {len(family):,} characters (at most {JUDGE_FAMILY_MAX})")
        if judge not in first:
            first[judge] = family
        elif first[judge] != family:
            raise StatsInputError(
                f"{where}: {family!r} differs from the family {first[judge]!r} an earlier line gives judge {judge!r}"
            )
    return pd.Series(families, index=df.index, dtype=object)


def read_judges(path: str | Path, *, scale: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """judge name -> ``item, system, score`` from a judges file (labels scored on ``scale``); the answers a judge
    declined ("cannot judge") are left out."""
    df = read_judge_rows(path, scale=scale)
    df = df[~df["abstained"]]
    return {
        str(name): group.rename(columns={"item_uid": "item"})[["item", "system", "score"]].reset_index(drop=True)
        for name, group in df.groupby("judge", sort=True)
    }


def read_verdict_rows(path, name: str | None = None) -> pd.DataFrame:
    """The lines of a pairwise verdicts file: ``item_uid, judge, first, second, verdict, _line``.

    ``first`` and ``second`` name the two systems in the order the judge was shown them; ``verdict`` is ``first``,
    ``second`` or ``tie`` (any case; returned in lower case). Refused by file, line and field: a missing or empty
    field, a bad verdict, a system paired with itself, a second line for the same judge, item and shown order (the
    swapped order is another line: it is how a position bias shows).
    """
    display = name or str(path)
    df = read_records(path, VERDICT_FIELDS, name=name)
    verdicts = []
    for pos, (first, second, verdict) in enumerate(zip(df["first"], df["second"], df["verdict"], strict=True)):
        where = f"{display}: line {_line(df, pos)}"
        folded = verdict.strip().casefold()
        if folded not in VERDICTS:
            raise StatsInputError(f"{where}, field 'verdict': {verdict!r} is not one of {', '.join(VERDICTS)}")
        if first == second:
            raise StatsInputError(f"{where}, field 'second': system {second!r} is paired with itself")
        verdicts.append(folded)
    df["verdict"] = pd.Series(verdicts, index=df.index, dtype=object)
    dup = df.duplicated(["judge", "item_uid", "first", "second"]).to_numpy()
    if dup.any():
        pos = int(dup.argmax())
        raise StatsInputError(
            f"{display}: line {_line(df, pos)}, field 'judge': a second verdict from judge "
            f"{df['judge'].iloc[pos]!r} on item {df['item_uid'].iloc[pos]!r} with {df['first'].iloc[pos]!r} shown "
            f"first and {df['second'].iloc[pos]!r} second"
        )
    return df


def read_styles(path: str | Path) -> pd.DataFrame:
    """``item, system`` and the style features of each answer in an answers file."""
    df = read_records(path, ANSWER_FIELDS)
    dup = df.duplicated(["item_uid", "system"]).to_numpy()
    if dup.any():
        pos = int(dup.argmax())
        raise StatsInputError(f"{path}: line {_line(df, pos)}, field 'system': a second answer for this item")
    styles = pd.DataFrame([answer_style(text) for text in df["response"]])
    return pd.concat([df[["item_uid", "system"]].rename(columns={"item_uid": "item"}), styles], axis=1)


def _value(res: StatResult | None) -> dict:
    if res is None:
        return {"value": None, "ci": None}
    return {"value": res.value, "ci": list(res.ci) if res.ci else None}


def judges_section(
    rankings: pd.DataFrame,
    judges: Mapping[str, pd.DataFrame],
    *,
    exclude: Iterable = (),
    tie_calibrate: bool = False,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """The judges' figures as plain data (``None`` for undefined)."""
    result = judge_meta_evaluation(
        rankings,
        judges,
        exclude=exclude,
        tie_calibrate=tie_calibrate,
        n_permutations=n_permutations,
        n_resamples=n_resamples,
        seed=seed,
    )
    out: dict = {"judges": {}}
    for name, f in result.judges.items():
        acc = _value(f.acc_eq)
        out["judges"][name] = {
            "acc_eq": acc["value"],
            "acc_eq_ci": acc["ci"],
            "acc_eq_calibrated": f.acc_eq_calibrated,
            "epsilon": f.epsilon if tie_calibrate else None,
            "acc_eq_held_out": f.acc_eq_held_out,
            "segment_tau_b": _value(f.segment_tau_b)["value"],
            "segment_tau_c": _value(f.segment_tau_c)["value"],
            # questions where the per-question tau is defined (the judge and the physicians each vary): a label
            # judge that ties often is averaged over few questions, which its reader must know
            "segment_tau_n_items": f.segment_tau_b.n_items if f.segment_tau_b else 0,
            "cluster": f.cluster,
            "percentile_among_physicians": f.ceiling.percentile if f.ceiling else None,
            # the judge's acc_eq against each physician's leave-one-out consensus, averaged: the figure placed
            "acc_eq_leave_one_out": f.ceiling.judge if f.ceiling else None,
            "above_human_ceiling": f.ceiling.above_ceiling if f.ceiling else None,
            "n_items": f.acc_eq.n_items,
        }
    out["clusters"] = result.clusters() if n_permutations > 0 else None
    values = list(result.physicians.values())
    out["human_ceiling"] = (
        {
            "statistic": "acc_eq",
            "mean": sum(values) / len(values),
            "low": min(values),
            "high": max(values),
            "physicians": dict(result.physicians),
        }
        if len(values) >= 2
        else None
    )
    out["judge_notes"] = list(result.notes)
    return out


def style_section(
    rankings: pd.DataFrame,
    styles: pd.DataFrame,
    *,
    exclude: Iterable = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """Plain and style-controlled Bradley-Terry strengths, and the style coefficients with intervals."""
    comps = comparisons(rankings, styles, exclude=tuple(exclude), features=STYLE_FEATURES)
    # the rankings are paired once for both fits; the plain strengths are reported without an interval, so their
    # 1,000 refits are not drawn
    plain = leaderboard_of(without_style(comps), (), n_resamples=0, seed=seed)
    controlled = leaderboard_of(comps, STYLE_FEATURES, n_resamples=n_resamples, seed=seed)

    def ci(pair) -> list | None:
        return None if any(math.isnan(x) for x in pair) else [float(x) for x in pair]

    return {
        "plain_strengths": {str(s): float(v) for s, v in zip(plain.systems, plain.strengths, strict=True)},
        "style_controlled_strengths": {
            str(s): float(v) for s, v in zip(controlled.systems, controlled.strengths, strict=True)
        },
        "style_controlled_strengths_ci": {
            str(s): ci(c) for s, c in zip(controlled.systems, controlled.strength_ci, strict=True)
        },
        "style_coefficients": {
            f: {"value": None if math.isnan(v) else float(v), "ci": ci(c)}
            for f, v, c in zip(controlled.features, controlled.coefficients, controlled.coefficient_ci, strict=True)
        },
    }


def _insert_before_notes(report: dict, section: Mapping, notes: Iterable[str] = ()) -> None:
    """Add ``section``'s keys to ``report`` keeping ``notes`` last (the text output lists them at the end)."""
    kept = list(report.pop("notes", [])) + list(notes)
    report.update(section)
    report["notes"] = list(dict.fromkeys(kept))


def judge_correlation_report(
    rankings_path: str | Path,
    scores_path: str | Path | None,
    *,
    judges_path: str | Path | None = None,
    judge_scale: Iterable[str] | None = None,
    answers_path: str | Path | None = None,
    exclude: Iterable[str] = (),
    tie_calibrate: bool = False,
    n_permutations: int | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """``metric_correlation``'s report: the metric's figures (when ``scores_path``), then every judge's.

    The judge section is computed when judges, tie calibration or permutations are asked for; the metric of
    ``scores_path`` takes part in it under the name ``metric``; judges giving labels are scored on ``judge_scale``
    (best first). ``answers_path`` adds the style-controlled leaderboard.
    """
    exclude = tuple(exclude)
    if scores_path is None and judges_path is None:
        raise StatsInputError("give --scores, --judges or both")
    report: dict = (
        metric_correlation_report(rankings_path, scores_path, exclude=exclude, n_resamples=n_resamples, seed=seed)
        if scores_path is not None
        else {"excluded_systems": list(exclude), "notes": []}
    )
    rankings = read_rankings(rankings_path)
    if judges_path is not None or tie_calibrate or n_permutations is not None:
        judges: dict[str, pd.DataFrame] = {}
        if scores_path is not None:
            judges["metric"] = read_scores(scores_path)
        if judges_path is not None:
            for name, scores in read_judges(judges_path, scale=judge_scale).items():
                if name in judges:
                    raise StatsInputError(f"{judges_path}: the judge name {name!r} is taken by the --scores metric")
                judges[name] = scores
        where = " / ".join(str(p) for p in (rankings_path, scores_path, judges_path) if p is not None)
        section = wrap_errors(
            where,
            judges_section,
            rankings,
            judges,
            exclude=exclude,
            tie_calibrate=tie_calibrate,
            n_permutations=DEFAULT_PERMUTATIONS if n_permutations is None else n_permutations,
            n_resamples=n_resamples,
            seed=seed,
        )
        _insert_before_notes(report, section, section.pop("judge_notes"))
    if answers_path is not None:
        styles = read_styles(answers_path)
        where = f"{rankings_path} / {answers_path}"
        section = wrap_errors(
            where, style_section, rankings, styles, exclude=exclude, n_resamples=n_resamples, seed=seed
        )
        _insert_before_notes(report, {"style_control": section})
    return report
