"""The judge card's statistics (pure; numpy, scipy and pandas only): how a judge's values sit beside the
physicians' own, figure by figure, each with its ``n``, its interval and, where the data cannot give it, ``None``
with an ``undefined_reason`` in plain words. Every result is a plain dict of floats, ints, strings, ``None``,
lists and dicts (JSON-ready). Intervals are two-sided of coverage ``1 − alpha`` (95 % by default).

* :func:`calibration` — the reliability diagram (DeGroot & Fienberg 1983, *The Statistician* 32) over equal-width
  bins of the judge's probability, the last bin closed; the expected calibration error
  ``ECE = Σ_b (n_b/N)·|mean_prob_b − mean_outcome_b|`` (Naeini, Cooper & Hauskrecht 2015, AAAI; Guo et al. 2017,
  ICML) and the Brier score ``mean((prob − outcome)²)`` (Brier 1950, *Monthly Weather Review* 78). The outcome is
  the physicians' value of the same answer, fractional when several physicians are averaged. Intervals: the
  percentile bootstrap over questions of :mod:`stats.bootstrap` (Efron & Tibshirani 1993, ch. 13), all of a
  question's answers drawn together. ECE over few answers per bin is biased upwards (the absolute value of noise is
  positive), and so is its bootstrap: read a small ECE on few answers as "no evidence of miscalibration", not as 0.
* :func:`bias_by_group` — the mean of judge − physicians per group (a QA type, a category), as the HealthBench
  judge audits report it; > 0: the judge is more lenient than the physicians. Interval: Student's t with n − 1
  degrees of freedom, ``mean ± t_{1−α/2, n−1}·s/√n`` with the sample standard deviation ``s`` (ddof 1).
* :func:`position_bias` — pairwise verdicts with the order the judge was shown the two answers. The first-position
  rate is the share of non-tie verdicts that chose the first-shown answer, with Wilson's (1927) interval
  (:func:`stats.rates.wilson_interval`) and the two-sided exact binomial test against 0.5
  (``scipy.stats.binomtest``). The flip rate (position consistency, Zheng et al. 2023, *Judging LLM-as-a-judge
  with MT-Bench and Chatbot Arena*, NeurIPS; Wang et al. 2024, *Large Language Models are not Fair Evaluators*,
  ACL) is the share of pairs seen in both orders whose two verdicts do not prefer the same system; a tie in one
  order and a preference in the other counts as a flip, two ties do not. ``to_first`` counts the flips where
  each order chose whichever answer was shown first (the position-driven kind), ``to_second`` those where each
  chose the second.
* :func:`self_preference` — does the judge favour answers of its own model family beyond what physicians do
  (Panickssery, Bowman & Feng 2024, *LLM Evaluators Recognize and Favor Their Own Generations*, NeurIPS)? With
  the residual ``judge − physicians`` of each answer, the effect is the mean residual on own-family answers minus
  the mean residual on the others. Interval: percentile bootstrap over questions, both means recomputed in each
  resample. p-value: two-sided permutation test, own_family shuffled within each question (globally without
  questions), counted with the observed arrangement included, ``(1 + #{|permuted| ≥ |observed|}) / (1 + R)``
  as in :mod:`stats.significance`; past :data:`PERMUTATION_DRAW_LIMIT` shuffled values, the same probability
  read from the permutation distribution's exact mean and variance under a normal law (many questions).
* :func:`abstention_by_difficulty` — the judge's "cannot judge" rate beside the physicians' "cannot tell" rate, by
  tertile of question difficulty (``pandas.qcut``; fewer bands when difficulties tie), each a Wilson interval over
  answers (the judge) or tasks (the physicians); and Spearman's (1904) rho between difficulty and the judge's
  per-question abstention rate, with ``scipy.stats.spearmanr``'s p-value (t approximation, n − 2 dof).

Values: the judge's value of an answer must be a finite number in [0, 1] (a ``ValueError`` names the argument
otherwise: the caller passes only the answers the judge scored). The physicians' value may be missing (NaN or
``None``: no physician judged that answer), and such answers are left out of every figure; a present value
outside [0, 1] is refused too.

Determinism: every figure is the same for the same rows in any order. Rows are sorted (by question, then by value)
before anything is summed, resampled or permuted; bootstraps and permutations are seeded.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest, norm, spearmanr
from scipy.stats import t as student_t

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, interval_containing
from .rates import wilson_interval
from .results import finite_or_none

DEFAULT_ALPHA = 0.05
DEFAULT_N_BINS = 10
DEFAULT_PERMUTATIONS = 2000
VERDICTS = ("first", "second", "tie")
VERDICT_COLUMNS = ("item", "first", "second", "verdict")
ABSTENTION_COLUMNS = (
    "item",
    "difficulty",
    "judge_answers",
    "judge_abstained",
    "physician_tasks",
    "physician_abstained",
)
#: Tertile bands by how many non-empty bins ``pandas.qcut`` made (fewer when difficulties tie).
BAND_NAMES = {3: ("easier", "middle", "harder"), 2: ("easier", "harder"), 1: ("all of known difficulty",)}
UNKNOWN_BAND = "unknown difficulty"
MISSING_GROUP = "(no group)"
#: Permuted effects this close to the observed one count as reaching it (the same arrangement summed in another
#: order differs by float noise, and must count).
_PERMUTATION_TOLERANCE = 1e-12
_PERMUTATION_BLOCK = 256
#: Above this many shuffled values (answers × permutations) the permutation distribution is read from its exact
#: mean and variance instead of drawn: shuffling sorts every row of every permutation, tens of seconds for a study
#: of 10,000 questions, while over that many questions the sum the effect rests on is normal to far better than
#: the p-value's printed digits.
PERMUTATION_DRAW_LIMIT = 20_000_000


# ---------------------------------------------------------------------------------------------------- values


def _judge_values(values: Any, name: str) -> np.ndarray:
    """The judge's values as floats; a ``ValueError`` naming ``name`` for a missing, non-finite or out-of-range one."""
    array = _floats(values, name)
    bad = ~np.isfinite(array) | (array < 0) | (array > 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be a finite number in [0, 1]; row {row} is {array[row]}")
    return array


def _physician_values(values: Any, name: str, n: int) -> np.ndarray:
    """The physicians' values as floats, NaN where missing; a ``ValueError`` naming ``name`` for one out of range."""
    array = _floats(values, name)
    if array.size != n:
        raise ValueError(f"{name} has {array.size} values for {n} answers")
    present = ~np.isnan(array)
    bad = present & (~np.isfinite(array) | (array < 0) | (array > 1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be in [0, 1] or missing; row {row} is {array[row]}")
    return array


def _floats(values: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numbers: {error}") from error
    if array.ndim != 1:
        array = array.reshape(-1)
    return array


def _labels(values: Any, name: str, n: int) -> list[Hashable]:
    labels = list(values)
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} values for {n} answers")
    return labels


def _question_codes(items: Any, n: int) -> np.ndarray:
    """Each row's question as an integer, numbered in the sorted order of the keys (not the rows' order)."""
    if items is None:
        return np.zeros(n, dtype=np.int64)  # numbered after sorting, see _sorted_units
    keys = _labels(items, "items", n)
    if any(_is_missing(key) for key in keys):
        raise ValueError("items has a row without a question key")
    ordered = sorted(set(keys), key=_sort_key)
    code = {key: index for index, key in enumerate(ordered)}
    return np.array([code[key] for key in keys], dtype=np.int64)


def _sort_key(key: Hashable) -> tuple[int, Any]:
    # numbers sort among numbers and strings among strings; mixed kinds (1 and "1") by kind first, never compared
    if isinstance(key, numbers.Real) and not isinstance(key, bool):
        return (0, float(key))
    if isinstance(key, str):
        return (1, key)
    return (2, f"{type(key).__name__}:{key}")


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _sorted_units(codes: np.ndarray, *columns: np.ndarray, own_questions: bool) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts rows by question then by ``columns``, and the rows' question codes in that order (with
    ``own_questions`` each row is its own question, numbered in the sorted order)."""
    order = np.lexsort((*reversed(columns), codes))
    sorted_codes = np.arange(codes.size) if own_questions else codes[order]
    return order, sorted_codes


def _sums_per_question(contributions: np.ndarray, sorted_codes: np.ndarray) -> np.ndarray:
    """Per-row contributions (rows sorted by question) summed per question: ``(n_questions, k)``."""
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    return np.add.reduceat(contributions, starts, axis=0)


def _bootstrap_intervals(
    per_question: np.ndarray, statistic: Any, estimates: Sequence[float], *, alpha: float, n_resamples: int, seed: int
) -> list[list[float] | None]:
    """Percentile bootstrap intervals over questions of each column ``statistic`` returns, each widened to contain
    its estimate (:func:`stats.bootstrap.interval_containing`); ``None`` where no resample was defined."""
    outcome = bootstrap_sums(per_question, statistic, n_resamples=n_resamples, seed=seed, level=1 - alpha)
    intervals: list[list[float] | None] = []
    for column, estimate in enumerate(estimates):
        low, high = interval_containing(
            estimate, float(np.atleast_1d(outcome.ci_low)[column]), float(np.atleast_1d(outcome.ci_high)[column])
        )
        low, high = finite_or_none(low), finite_or_none(high)
        intervals.append(None if low is None or high is None else [low, high])
    return intervals


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")


def _proportion(successes: int, n: int, alpha: float, empty_reason: str) -> dict[str, Any]:
    """``successes`` out of ``n`` with its Wilson interval; undefined (with ``empty_reason``) when ``n`` is 0."""
    interval = wilson_interval(successes, n, level=1 - alpha)
    if interval is None:
        return {"n": n, "count": successes, "rate": None, "low": None, "high": None, "undefined_reason": empty_reason}
    return {
        "n": n,
        "count": successes,
        "rate": successes / n,
        "low": interval[0],
        "high": interval[1],
        "undefined_reason": None,
    }


# ------------------------------------------------------------------------------------------------ calibration


def calibration(
    prob: Any,
    outcome: Any,
    *,
    items: Any = None,
    n_bins: int = DEFAULT_N_BINS,
    alpha: float = DEFAULT_ALPHA,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The judge's calibration: ECE, Brier score and the reliability diagram's bins (see the module docstring).

    ``prob`` is the judge's probability that each answer is good, ``outcome`` the physicians' value of it (missing:
    the answer is left out), ``items`` each answer's question (``None``: each answer its own question). Beside the
    figures: ``n_questions``, and ``interval_undefined_reason`` when the intervals are None for want of two
    questions."""
    _check_alpha(alpha)
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, not {n_bins}")
    judge = _judge_values(prob, "prob")
    physicians = _physician_values(outcome, "outcome", judge.size)
    codes = _question_codes(items, judge.size)
    kept = ~np.isnan(physicians)
    judge, physicians, codes = judge[kept], physicians[kept], codes[kept]
    order, sorted_codes = _sorted_units(codes, judge, physicians, own_questions=items is None)
    judge, physicians = judge[order], physicians[order]
    n, n_questions = int(judge.size), int(np.unique(sorted_codes).size)
    result: dict[str, Any] = {
        "n": n,
        "n_questions": n_questions,
        "ece": None,
        "ece_ci": None,
        "brier": None,
        "brier_ci": None,
        "mean_prob": None,
        "mean_outcome": None,
        "bins": [],
        "undefined_reason": None,
        "interval_undefined_reason": None,
    }
    if n == 0:
        result["undefined_reason"] = "no answer has both a probability and a physician's value"
        return result
    if n < 2:
        result["undefined_reason"] = "one answer only has both a probability and a physician's value: need at least 2"
        return result
    contributions = _calibration_contributions(judge, physicians, n_bins)
    totals = contributions.sum(axis=0)[None, :]
    ece, brier = (float(value) for value in _ece_and_brier(totals, n_bins)[0])
    result.update(
        ece=ece,
        brier=brier,
        mean_prob=float(judge.mean()),
        mean_outcome=float(physicians.mean()),
        bins=_reliability_bins(totals[0], n_bins),
    )
    if n_questions < 2:
        result["interval_undefined_reason"] = "every answer is on one question: the bootstrap needs at least 2"
        return result
    per_question = _sums_per_question(contributions, sorted_codes)
    result["ece_ci"], result["brier_ci"] = _bootstrap_intervals(
        per_question,
        lambda sums: _ece_and_brier(sums, n_bins),
        (ece, brier),
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
    )
    return result


def _bin_index(prob: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins [0, 1/k), …, [(k−1)/k, 1], the last one closed (a probability of 1 belongs to it)."""
    return np.minimum(np.floor(prob * n_bins).astype(np.int64), n_bins - 1)


def _calibration_contributions(prob: np.ndarray, outcome: np.ndarray, n_bins: int) -> np.ndarray:
    """Per answer: a one in its bin's count, its probability and outcome in its bin's sums, its squared error, a one
    (the answer count): the ECE and the Brier score are functions of these sums, which the bootstrap resamples."""
    rows = np.zeros((prob.size, 3 * n_bins + 2))
    index, bins = np.arange(prob.size), _bin_index(prob, n_bins)
    rows[index, bins] = 1.0
    rows[index, n_bins + bins] = prob
    rows[index, 2 * n_bins + bins] = outcome
    rows[:, 3 * n_bins] = (prob - outcome) ** 2
    rows[:, 3 * n_bins + 1] = 1.0
    return rows


def _ece_and_brier(sums: np.ndarray, n_bins: int) -> np.ndarray:
    """``(B, 2)``: ECE and Brier from ``(B, 3k+2)`` sums. ``(n_b/N)·|p̄_b − ō_b|`` is ``|Σp_b − Σo_b| / N``."""
    prob_sums, outcome_sums = sums[:, n_bins : 2 * n_bins], sums[:, 2 * n_bins : 3 * n_bins]
    total = sums[:, 3 * n_bins + 1]
    ece = np.abs(prob_sums - outcome_sums).sum(axis=1) / total
    brier = sums[:, 3 * n_bins] / total
    return np.column_stack([ece, brier])


def _reliability_bins(totals: np.ndarray, n_bins: int) -> list[dict[str, Any]]:
    bins = []
    for b in range(n_bins):
        count = int(round(totals[b]))
        if count == 0:
            continue
        bins.append(
            {
                "low": b / n_bins,
                "high": (b + 1) / n_bins,
                "n": count,
                "mean_prob": float(totals[n_bins + b] / count),
                "mean_outcome": float(totals[2 * n_bins + b] / count),
            }
        )
    return bins


# --------------------------------------------------------------------------------------------------- mean bias


def bias_by_group(judge_value: Any, outcome: Any, groups: Any, *, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """The mean of judge − physicians per group and over all answers, each with its Student t interval (n − 1
    degrees of freedom, sample standard deviation). Answers without a physician's value are left out; an answer
    without a group (``None``/NaN) counts in ``overall`` and in the group ``"(no group)"``. Group names are given
    as strings, in sorted order."""
    _check_alpha(alpha)
    judge = _judge_values(judge_value, "judge_value")
    physicians = _physician_values(outcome, "outcome", judge.size)
    labels = [MISSING_GROUP if _is_missing(label) else str(label) for label in _labels(groups, "groups", judge.size)]
    kept = ~np.isnan(physicians)
    differences = judge[kept] - physicians[kept]
    kept_labels = np.array([label for label, keep in zip(labels, kept, strict=True) if keep], dtype=object)
    per_group = {
        name: _mean_difference(differences[kept_labels == name], alpha) for name in sorted(set(kept_labels.tolist()))
    }
    return {"groups": per_group, "overall": _mean_difference(differences, alpha)}


def _mean_difference(differences: np.ndarray, alpha: float) -> dict[str, Any]:
    values = np.sort(differences)  # the same sum in any row order
    n = int(values.size)
    if n < 2:
        reason = (
            "no answer has both the judge's value and a physician's value"
            if n == 0
            else "one answer only: a mean difference and its interval need at least 2"
        )
        return {"n": n, "mean": None, "low": None, "high": None, "undefined_reason": reason}
    mean = float(values.mean())
    half = float(student_t.ppf(1 - alpha / 2, n - 1)) * float(values.std(ddof=1)) / math.sqrt(n)
    return {"n": n, "mean": mean, "low": mean - half, "high": mean + half, "undefined_reason": None}


# ----------------------------------------------------------------------------------------------- position bias


def position_bias(verdicts: pd.DataFrame, *, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """The first-position win rate and the flip rate of pairwise verdicts (see the module docstring).

    ``verdicts`` has columns ``item``, ``first``, ``second`` (the systems in the order the judge was shown them)
    and ``verdict`` (``"first"``, ``"second"`` or ``"tie"``). A pair counts for the flip rate only when the judge
    saw it in both orders. An ``(item, first, second)`` given twice, a system compared with itself, an unknown
    verdict or a missing key raise ``ValueError``."""
    _check_alpha(alpha)
    frame = _verdict_frame(verdicts)
    return {
        "n": len(frame),
        "first_position": _first_position(frame, alpha),
        "flips": _flips(frame, alpha),
    }


def _verdict_frame(verdicts: pd.DataFrame) -> pd.DataFrame:
    if len(verdicts) == 0:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in VERDICT_COLUMNS})
    missing = [column for column in VERDICT_COLUMNS if column not in verdicts.columns]
    if missing:
        raise ValueError(f"verdicts lacks the column(s) {', '.join(missing)}")
    frame = verdicts.loc[:, list(VERDICT_COLUMNS)].copy()
    if frame[["item", "first", "second"]].isna().any().any():
        raise ValueError("verdicts has a row without its item or one of its systems")
    frame["verdict"] = frame["verdict"].map(lambda verdict: str(verdict).strip().lower())
    unknown = sorted(set(frame["verdict"]) - set(VERDICTS))
    if unknown:
        raise ValueError(f"verdicts must be one of {', '.join(VERDICTS)}, not {', '.join(unknown)}")
    if (frame["first"] == frame["second"]).any():
        raise ValueError("verdicts compares a system with itself")
    duplicated = frame.duplicated(["item", "first", "second"])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"verdicts repeats item {row['item']!r} shown as {row['first']!r} then {row['second']!r}")
    return frame


def _first_position(frame: pd.DataFrame, alpha: float) -> dict[str, Any]:
    ties = int((frame["verdict"] == "tie").sum())
    chose_first = int((frame["verdict"] == "first").sum())
    n = int((frame["verdict"] != "tie").sum())
    reason = "no verdicts" if len(frame) == 0 else "every verdict is a tie: no preference to place"
    result = _proportion(chose_first, n, alpha, reason)
    result["p_value"] = float(binomtest(chose_first, n, 0.5).pvalue) if n else None
    result["ties"] = ties
    return result


def _flips(frame: pd.DataFrame, alpha: float) -> dict[str, Any]:
    shown = {(row.item, row.first, row.second): row.verdict for row in frame.itertuples(index=False)}
    pairs = flips = to_first = to_second = 0
    for (item, first, second), verdict in shown.items():
        swapped = shown.get((item, second, first))
        if swapped is None or _sort_key(first) > _sort_key(second):
            continue  # seen in one order only, or counted from its other order
        pairs += 1
        if _preferred(first, second, verdict) != _preferred(second, first, swapped):
            flips += 1
            to_first += verdict == swapped == "first"
            to_second += verdict == swapped == "second"
    reason = "no verdicts" if len(frame) == 0 else "no pair was shown to the judge in both orders"
    result = _proportion(flips, pairs, alpha, reason)
    result["to_first"] = to_first
    result["to_second"] = to_second
    return result


def _preferred(first: Hashable, second: Hashable, verdict: str) -> Hashable | None:
    """The system a verdict prefers, ``None`` for a tie."""
    return {"first": first, "second": second}.get(verdict)


# --------------------------------------------------------------------------------------------- self-preference


def self_preference(
    judge_value: Any,
    outcome: Any,
    own_family: Any,
    *,
    items: Any = None,
    alpha: float = DEFAULT_ALPHA,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    n_permutations: int = DEFAULT_PERMUTATIONS,
) -> dict[str, Any]:
    """How much more the judge likes answers of its own model family than the physicians do: the mean residual
    (judge − physicians) on own-family answers minus that on the others, with a percentile bootstrap interval over
    questions and a two-sided permutation p-value (see the module docstring). Undefined when either group has
    fewer than 2 answers with a physician's value. Beside the figures: ``interval_undefined_reason`` (fewer than
    two questions) and ``p_value_undefined_reason`` (no question holds answers of both kinds, so shuffling within
    questions changes nothing)."""
    _check_alpha(alpha)
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be at least 1, not {n_permutations}")
    judge = _judge_values(judge_value, "judge_value")
    physicians = _physician_values(outcome, "outcome", judge.size)
    own = _booleans(own_family, "own_family", judge.size)
    codes = _question_codes(items, judge.size)
    kept = ~np.isnan(physicians)
    residual, own, codes = judge[kept] - physicians[kept], own[kept], codes[kept]
    order, sorted_codes = _sorted_units(codes, own.astype(float), residual, own_questions=items is None)
    residual, own = residual[order], own[order]
    n_own, n_other = int(own.sum()), int((~own).sum())
    result: dict[str, Any] = {
        "n_own": n_own,
        "n_other": n_other,
        "effect": None,
        "low": None,
        "high": None,
        "p_value": None,
        "own_mean_residual": float(residual[own].mean()) if n_own else None,
        "other_mean_residual": float(residual[~own].mean()) if n_other else None,
        "undefined_reason": None,
        "interval_undefined_reason": None,
        "p_value_undefined_reason": None,
    }
    if n_own < 2 or n_other < 2:
        result["undefined_reason"] = (
            f"{n_own} answer(s) of the judge's own family and {n_other} of others have a physician's value: "
            "each needs at least 2"
        )
        return result
    effect = float(result["own_mean_residual"] - result["other_mean_residual"])
    result["effect"] = effect
    if np.unique(sorted_codes).size < 2:
        result["interval_undefined_reason"] = "every answer is on one question: the bootstrap needs at least 2"
    else:
        contributions = np.column_stack([residual * own, own, residual * ~own, ~own]).astype(float)
        (interval,) = _bootstrap_intervals(
            _sums_per_question(contributions, sorted_codes),
            _effect_from_sums,
            (effect,),
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
        )
        if interval is not None:
            result["low"], result["high"] = interval
    permute_within = np.zeros_like(sorted_codes) if items is None else sorted_codes
    if not _any_question_mixes(own, permute_within):
        result["p_value_undefined_reason"] = (
            "no question has answers of both the judge's family and others: shuffling within questions changes nothing"
        )
    else:
        if own.size * n_permutations <= PERMUTATION_DRAW_LIMIT:
            result["p_value"] = _permutation_p_value(residual, own, permute_within, effect, n_permutations, seed)
        else:
            result["p_value"] = _permutation_p_value_normal(residual, own, permute_within, effect)
    return result


def _booleans(values: Any, name: str, n: int) -> np.ndarray:
    labels = _labels(values, name, n)
    if any(_is_missing(value) or value not in (True, False) for value in labels):
        raise ValueError(f"{name} must be True or False for every answer")
    return np.array([bool(value) for value in labels], dtype=bool)


def _effect_from_sums(sums: np.ndarray) -> np.ndarray:
    """Own-family mean residual minus the others' from ``(B, 4)`` sums (NaN where a resample lacks either kind)."""
    return sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3]


def _any_question_mixes(own: np.ndarray, codes: np.ndarray) -> bool:
    own_per_question = np.bincount(codes, weights=own.astype(float))
    answers_per_question = np.bincount(codes)
    return bool(((own_per_question > 0) & (own_per_question < answers_per_question)).any())


def _permutation_p_value(
    residual: np.ndarray, own: np.ndarray, codes: np.ndarray, observed: float, n_permutations: int, seed: int
) -> float:
    """Two-sided: ``(1 + #{|permuted effect| ≥ |observed|}) / (1 + R)``, own_family shuffled within each question
    (rows sorted by question: sorting each row's random key within its question permutes within it)."""
    rng = np.random.default_rng(seed)
    n_own, n_other = own.sum(), (~own).sum()
    threshold = abs(observed) - _PERMUTATION_TOLERANCE * max(1.0, abs(observed))
    hits = 0
    for start in range(0, n_permutations, _PERMUTATION_BLOCK):
        size = min(_PERMUTATION_BLOCK, n_permutations - start)
        keys = rng.random((size, own.size))
        order = np.lexsort((keys, np.broadcast_to(codes, keys.shape)), axis=-1)
        shuffled = own[order]
        own_sum = (shuffled * residual).sum(axis=1)
        effects = own_sum / n_own - (residual.sum() - own_sum) / n_other
        hits += int((np.abs(effects) >= threshold).sum())
    return (1 + hits) / (1 + n_permutations)


def _permutation_p_value_normal(residual: np.ndarray, own: np.ndarray, codes: np.ndarray, observed: float) -> float:
    """The two-sided p-value of :func:`_permutation_p_value` read from a normal law with the permutation
    distribution's exact mean and variance. Shuffling within question g draws its k_g own-family answers out of
    its m_g without replacement, so their residual sum has mean k_g·r̄_g and variance
    k_g·(m_g − k_g)/(m_g·(m_g − 1))·Σ(r − r̄_g)²; questions shuffle independently, and the effect is
    own_sum·(1/n_own + 1/n_other) − Σr/n_other."""
    n_own, n_other = float(own.sum()), float((~own).sum())
    m = np.bincount(codes).astype(float)
    k = np.bincount(codes, weights=own.astype(float))
    sums = np.bincount(codes, weights=residual)
    present = m > 0
    mean_g = np.divide(sums, m, out=np.zeros_like(sums), where=present)
    squares = np.bincount(codes, weights=(residual - mean_g[codes]) ** 2)
    spread = np.divide(k * (m - k), m * (m - 1), out=np.zeros_like(m), where=m > 1)
    scale = 1 / n_own + 1 / n_other
    mean = scale * float((k * mean_g).sum()) - float(residual.sum()) / n_other
    sd = scale * math.sqrt(float((spread * squares).sum()))
    threshold = abs(observed) - _PERMUTATION_TOLERANCE * max(1.0, abs(observed))
    if sd == 0:
        return 1.0 if abs(mean) >= threshold else 0.0
    return float(norm.cdf((-threshold - mean) / sd) + norm.sf((threshold - mean) / sd))


# ---------------------------------------------------------------------------------------------------- abstention


def abstention_by_difficulty(frame: pd.DataFrame, *, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """The judge's and the physicians' abstention rates by tertile of question difficulty, overall, and the trend
    of the judge's rate with difficulty (see the module docstring).

    ``frame`` has one row per question: ``item``, ``difficulty`` (higher = harder; NaN when unknown),
    ``judge_answers``, ``judge_abstained``, ``physician_tasks`` and ``physician_abstained``. Returns
    ``{"n_questions", "bands", "bands_note", "overall", "trend"}``; ``bands_note`` says why there are fewer than
    three bands of known difficulty (None when there are three). Each band also gives the lowest and highest
    difficulty in it."""
    _check_alpha(alpha)
    questions = _abstention_frame(frame)
    known = questions[questions["difficulty"].notna()]
    banded, bands_note = _difficulty_bands(known)
    bands = [_abstention_band(name, group, alpha) for name, group in banded]
    unknown = questions[questions["difficulty"].isna()]
    if len(unknown):
        bands.append(_abstention_band(UNKNOWN_BAND, unknown, alpha))
    return {
        "n_questions": len(questions),
        "bands": bands,
        "bands_note": bands_note,
        "overall": _abstention_band("all questions", questions, alpha),
        "trend": _abstention_trend(known),
    }


def _abstention_frame(frame: pd.DataFrame) -> pd.DataFrame:
    if len(frame) == 0:
        return pd.DataFrame({column: pd.Series(dtype=float) for column in ABSTENTION_COLUMNS})
    missing = [column for column in ABSTENTION_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks the column(s) {', '.join(missing)}")
    questions = frame.loc[:, list(ABSTENTION_COLUMNS)].copy()
    if questions["item"].isna().any() or questions["item"].duplicated().any():
        raise ValueError("frame must have one row per question, each with its item")
    questions["difficulty"] = pd.to_numeric(questions["difficulty"], errors="raise").astype(float)
    if np.isinf(questions["difficulty"]).any():
        raise ValueError("difficulty must be finite or missing")
    for asked, abstained in (("judge_answers", "judge_abstained"), ("physician_tasks", "physician_abstained")):
        for column in (asked, abstained):
            values = pd.to_numeric(questions[column], errors="raise")
            if values.isna().any() or (values < 0).any() or (values != np.floor(values)).any():
                raise ValueError(f"{column} must be a whole number of at least 0 on every question")
            questions[column] = values.astype(np.int64)
        if (questions[abstained] > questions[asked]).any():
            raise ValueError(f"{abstained} exceeds {asked} on a question")
    order = sorted(range(len(questions)), key=lambda row: _sort_key(questions["item"].iloc[row]))
    return questions.iloc[order].reset_index(drop=True)


def _difficulty_bands(known: pd.DataFrame) -> tuple[list[tuple[str, pd.DataFrame]], str | None]:
    """Tertiles of difficulty, easier first, non-empty ones only; and a note when they are fewer than three."""
    if len(known) == 0:
        return [], None
    if known["difficulty"].nunique() < 2:
        bins = pd.Series(0, index=known.index)
        n_bins = 1
    else:
        codes, edges = pd.qcut(known["difficulty"], 3, labels=False, retbins=True, duplicates="drop")
        bins, n_bins = codes.astype(np.int64), len(edges) - 1
    names = BAND_NAMES[n_bins]
    banded = [(names[code], known[bins == code]) for code in range(n_bins) if (bins == code).any()]
    if len(banded) == 3:
        return banded, None
    why = (
        "fewer than three questions have a known difficulty"
        if len(known) < 3
        else "the difficulties tie, so tertiles cannot split them in three"
    )
    return banded, f"{len(banded)} band(s) of known difficulty instead of three: {why}"


def _abstention_band(name: str, questions: pd.DataFrame, alpha: float) -> dict[str, Any]:
    difficulty = questions["difficulty"].dropna()
    return {
        "band": name,
        "n_questions": len(questions),
        "difficulty_low": float(difficulty.min()) if len(difficulty) else None,
        "difficulty_high": float(difficulty.max()) if len(difficulty) else None,
        "judge": _proportion(
            int(questions["judge_abstained"].sum()),
            int(questions["judge_answers"].sum()),
            alpha,
            "the judge was asked no answer here",
        ),
        "physicians": _proportion(
            int(questions["physician_abstained"].sum()),
            int(questions["physician_tasks"].sum()),
            alpha,
            "physicians had no task here",
        ),
    }


def _abstention_trend(known: pd.DataFrame) -> dict[str, Any]:
    """Spearman's rho between difficulty and the judge's abstention rate, over questions the judge was asked on."""
    asked = known[known["judge_answers"] > 0]
    n = len(asked)
    result: dict[str, Any] = {"n": n, "rho": None, "p_value": None, "undefined_reason": None}
    rate = (asked["judge_abstained"] / asked["judge_answers"]).to_numpy(dtype=float)
    difficulty = asked["difficulty"].to_numpy(dtype=float)
    if n < 3:
        result["undefined_reason"] = f"{n} question(s) of known difficulty with a judge's answer: need at least 3"
    elif np.ptp(difficulty) == 0:
        result["undefined_reason"] = "every question has the same difficulty"
    elif np.ptp(rate) == 0:
        result["undefined_reason"] = "the judge abstains at the same rate on every question"
    else:
        test = spearmanr(difficulty, rate)
        result["rho"], result["p_value"] = finite_or_none(test.statistic), finite_or_none(test.pvalue)
    return result
