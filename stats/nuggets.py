"""Statistics of nugget labels: consensus, system scores with intervals, agreement (docs/nuggets.md).

Pure (pandas, numpy, scikit-learn, scipy). Labels are the strings of the ordinal scale
``not_support`` < ``partial`` < ``support``. A *unit* is one nugget in one system's answer to one item:
``(item_uid, system, nugget_id)``.

Which units count:

* human agreement (:func:`label_agreement`): units with labels from two or more labellers (Krippendorff's rule;
  units with one label carry no information on agreement);
* a judge against the humans (:func:`judge_agreement`): units the judge labelled and at least ``min_humans``
  (default 1) humans labelled; the consensus of one human is that human's label;
* the human ceiling: each human against the consensus of the *other* humans, on the units that human labelled
  and at least one other human labelled (leave-one-out, as HealthBench reports its physicians); a unit only that
  human labelled is left out. With two humans each is compared with the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import f1_score

from .agreement import cohen_kappa, krippendorff_alpha
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, interval_containing
from .results import StatResult, finite_or_none, undefined

#: The ordinal scale, lowest first (the order Krippendorff's ordinal alpha and the tie rule use).
ORDINAL_SCALE = ("not_support", "partial", "support")
UNIT = ("item_uid", "system", "nugget_id")
LABEL_COLUMNS = (*UNIT, "labeller", "label")
KEYS = ("system", "labeller", "item_uid")


def consensus_label(labels: Sequence[str]) -> str | None:
    """The majority label (the most frequent); on a tie between the most frequent, the median of *all* the
    labels on the ordinal scale not_support < partial < support, taking the mean of the two middle positions
    for an even count and, when that falls between two labels, the lower one (a split is settled towards the
    stricter label). Examples: [support, support, partial] → support; [support, not_support] → partial;
    [support, partial] → partial; [partial, not_support] → not_support. Empty → None.

    Raises ValueError for a label off the scale. The rule itself is :func:`consensus_positions`, which a whole
    study's units go through at once.
    """
    if not labels:
        return None
    counts = [0] * len(ORDINAL_SCALE)
    for label in labels:
        if label not in _POSITION:
            raise ValueError(f"label {label!r} is not one of {ORDINAL_SCALE}")
        counts[_POSITION[label]] += 1
    return ORDINAL_SCALE[int(consensus_positions(np.array([counts]))[0])]


_POSITION = {label: position for position, label in enumerate(ORDINAL_SCALE)}


def consensus_positions(counts: np.ndarray) -> np.ndarray:
    """The consensus rule (:func:`consensus_label`) for many units at once: ``counts[u, k]`` is how many labels
    ``ORDINAL_SCALE[k]`` unit ``u`` has; returns each unit's consensus position on the scale, -1 for a unit
    with no label. Written over counts so that 400,000 units of a large study take one pass of numpy."""
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.sum(axis=1)
    top = counts.max(axis=1)
    one_majority = (counts == top[:, None]).sum(axis=1) == 1
    at_most = np.cumsum(counts, axis=1)  # at_most[u, k]: labels at position k or lower

    def kth_smallest(k: np.ndarray) -> np.ndarray:  # the position of the k-th smallest label (k from 0)
        return (k[:, None] >= at_most).sum(axis=1)

    # the two middle labels (the same one for an odd count); the floor of their mean is the lower on a split
    median = (kth_smallest(np.maximum(n - 1, 0) // 2) + kth_smallest(n // 2)) // 2
    return np.where(n == 0, -1, np.where(one_majority, counts.argmax(axis=1), median))


def unit_consensus(labels: pd.DataFrame) -> pd.DataFrame:
    """Every unit's consensus label (:func:`consensus_label` of all its labels) and its number of labels: columns
    :data:`UNIT`, ``label``, ``n_labels``, one row per unit, sorted by the unit columns. Raises ValueError for a
    label off the scale."""
    if labels.empty:
        return pd.DataFrame({**{c: pd.Series(dtype=object) for c in UNIT}, "label": [], "n_labels": []})
    positions = pd.Index(ORDINAL_SCALE).get_indexer(labels["label"]).astype(np.int64)
    if (positions < 0).any():
        bad = labels["label"].iloc[int(np.flatnonzero(positions < 0)[0])]
        raise ValueError(f"label {bad!r} is not one of {ORDINAL_SCALE}")
    # one integer per unit, ordered as the unit tuples sort (each column's codes follow its sorted values)
    factorized = [pd.factorize(labels[column], sort=True) for column in UNIT]
    key = np.zeros(len(labels), dtype=np.int64)
    for codes, uniques in factorized:
        key = key * len(uniques) + codes
    keyed = np.logical_and.reduce([codes >= 0 for codes, _ in factorized])  # a missing key is no unit (as a group-by)
    unit_keys, unit_of_row = np.unique(key[keyed], return_inverse=True)
    positions = positions[keyed]
    scale = len(ORDINAL_SCALE)
    counts = np.bincount(unit_of_row * scale + positions, minlength=len(unit_keys) * scale).reshape(-1, scale)
    columns: dict[str, object] = {}
    rest = unit_keys
    for column, (_, uniques) in reversed(list(zip(UNIT, factorized, strict=True))):
        rest, codes = np.divmod(rest, len(uniques))
        columns[column] = np.asarray(uniques, dtype=object)[codes]
    out = pd.DataFrame({column: columns[column] for column in UNIT})
    out["label"] = np.asarray(ORDINAL_SCALE, dtype=object)[consensus_positions(counts)]
    out["n_labels"] = counts.sum(axis=1)
    return out


def system_scores(
    per_answer: pd.DataFrame,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """Per (system, labeller, score): mean over answers, bootstrap 95 % ci_low / ci_high, n_answers.

    ``per_answer``: columns system, labeller, item_uid and one numeric column per score (every other column).
    An answer whose score is None / NaN is left out of that score's mean (and its n_answers). The interval
    resamples answers (percentile bootstrap, :mod:`stats.bootstrap`, seeded); None below two answers. A score
    no answer has gives mean None, n_answers 0. Rows sorted by system and labeller, scores in column order.
    """
    missing = [c for c in KEYS if c not in per_answer.columns]
    if missing:
        raise ValueError(f"per_answer lacks column(s) {missing}")
    scores = [c for c in per_answer.columns if c not in KEYS]
    rows = []
    if per_answer.empty:
        return pd.DataFrame(columns=["system", "labeller", "score", "mean", "ci_low", "ci_high", "n_answers"])
    for (system, labeller), group in per_answer.groupby(["system", "labeller"], sort=True):
        for score in scores:
            values = pd.to_numeric(group[score], errors="coerce").to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            n = len(values)
            mean = float(values.mean()) if n else None
            low = high = None
            if n >= 2 and n_resamples > 0:
                outcome = bootstrap_sums(
                    values[:, None], lambda s, n=n: s[:, 0] / n, n_resamples=n_resamples, seed=seed
                )
                low, high = (
                    finite_or_none(x) for x in interval_containing(mean, outcome.ci_low[0], outcome.ci_high[0])
                )
            rows.append((system, labeller, score, mean, low, high, n))
    columns = ["system", "labeller", "score", "mean", "ci_low", "ci_high", "n_answers"]
    # Built column by column as objects: a DataFrame built from rows would turn the None of an undefined mean
    # or interval into NaN.
    data = {name: pd.Series([r[i] for r in rows], dtype=object) for i, name in enumerate(columns)}
    return pd.DataFrame(data).astype({"n_answers": int})


def _check_labels(labels: pd.DataFrame) -> None:
    missing = [c for c in LABEL_COLUMNS if c not in labels.columns]
    if missing:
        raise ValueError(f"labels lack column(s) {missing}; have {list(labels.columns)}")


def label_agreement(
    labels: pd.DataFrame,
    *,
    labellers: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """Krippendorff's alpha, ordinal (not_support < partial < support), between labellers over units
    (item_uid, system, nugget_id), with :func:`stats.agreement.krippendorff_alpha` and its bootstrap over units.
    ``labellers``: only these (the humans); default every labeller in ``labels``."""
    _check_labels(labels)
    if labellers is not None:
        labels = labels[labels["labeller"].isin(list(labellers))]
    name = "krippendorff_alpha_ordinal"
    if labels.empty:
        return undefined(name, "no labels")
    ratings = pd.DataFrame(
        {
            "item": labels.groupby(list(UNIT), sort=False).ngroup().to_numpy(),
            "annotator": labels["labeller"].to_numpy(),
            "value": labels["label"].to_numpy(),
        }
    )
    return krippendorff_alpha(ratings, level="ordinal", values=ORDINAL_SCALE, n_resamples=n_resamples, seed=seed)


def _consensus(labels: pd.DataFrame, min_labels: int = 1) -> pd.Series:
    """Consensus label per unit (index: the unit columns) over the units with at least ``min_labels`` labels."""
    if labels.empty:
        return pd.Series(dtype=object)
    units = unit_consensus(labels)
    return units[units["n_labels"] >= min_labels].set_index(list(UNIT))["label"]


def _versus(predicted: pd.DataFrame, reference: pd.Series, name: str, *, n_resamples: int, seed: int) -> dict:
    """Cohen's kappa, macro-F1 and F1 per label of ``predicted`` labels (one labeller) against ``reference``."""
    if reference.empty or predicted.empty:
        joined = pd.DataFrame(columns=["predicted", "reference"])
    else:
        mine = predicted[[*UNIT, "label"]].rename(columns={"label": "predicted"})
        joined = mine.merge(reference.rename("reference").reset_index(), on=list(UNIT), how="inner")
    n = len(joined)
    out: dict = {"kappa": None, "kappa_ci_low": None, "kappa_ci_high": None, "macro_f1": None, "n": n}
    out["f1"] = dict.fromkeys(reversed(ORDINAL_SCALE))
    if n == 0:
        out["note"] = "no unit labelled by both"
        return out
    y_true, y_pred = joined["reference"].to_numpy(), joined["predicted"].to_numpy()
    seen = set(pd.unique(y_true)) | set(pd.unique(y_pred))  # once, not per label: a study has 100,000s of units
    present = [label for label in reversed(ORDINAL_SCALE) if label in seen]
    per_label = f1_score(y_true, y_pred, labels=present, average=None, zero_division=0.0)
    out["f1"].update({label: float(v) for label, v in zip(present, per_label, strict=True)})
    out["macro_f1"] = float(np.mean(per_label))
    pair = pd.DataFrame(
        {
            "item": np.concatenate([np.arange(n), np.arange(n)]),
            "annotator": [name] * n + ["consensus"] * n,
            "value": np.concatenate([y_pred, y_true]),
        }
    )
    kappa = cohen_kappa(pair, values=ORDINAL_SCALE, n_resamples=n_resamples, seed=seed)
    out.update(kappa=kappa.value, kappa_ci_low=kappa.ci_low, kappa_ci_high=kappa.ci_high)
    reason = kappa.undefined_reason
    out["note"] = f"kappa undefined: {reason}" if reason else None
    return out


def _spread(values: list[float | None]) -> dict:
    kept = [v for v in values if v is not None]
    if not kept:
        return {"mean": None, "min": None, "max": None}
    return {"mean": float(np.mean(kept)), "min": float(min(kept)), "max": float(max(kept))}


def judge_agreement(
    labels: pd.DataFrame,
    judges: Sequence[str],
    humans: Sequence[str],
    *,
    min_humans: int = 1,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """Each judge against the humans' consensus, and the human ceiling (leave-one-out); see the module docstring.

    Returns ``{"judges": {judge: figures}, "human_ceiling": {"per_human": {human: figures}, "kappa": spread,
    "macro_f1": spread, "n_humans": k}}`` where figures = ``kappa`` (Cohen's, unweighted, with its bootstrap
    interval ``kappa_ci_low`` / ``kappa_ci_high`` over units), ``macro_f1`` (mean F1 over the labels that occur
    in either the judge's labels or the consensus, as scikit-learn's default), ``f1`` per label (None for a label
    neither uses), ``n`` (units compared), ``note``; spread = mean, min, max over humans with a defined figure.
    """
    _check_labels(labels)
    human_labels = labels[labels["labeller"].isin(list(humans))]
    consensus = _consensus(human_labels, min_humans)
    kw = {"n_resamples": n_resamples, "seed": seed}
    out_judges = {judge: _versus(labels[labels["labeller"] == judge], consensus, judge, **kw) for judge in judges}
    per_human = {}
    for human in humans:
        others = _consensus(human_labels[human_labels["labeller"] != human], 1)
        per_human[human] = _versus(human_labels[human_labels["labeller"] == human], others, human, **kw)
    ceiling = {
        "per_human": per_human,
        "kappa": _spread([f["kappa"] for f in per_human.values()]),
        "macro_f1": _spread([f["macro_f1"] for f in per_human.values()]),
        "n_humans": len(per_human),
    }
    return {"judges": out_judges, "human_ceiling": ceiling}


def system_rank_correlation(auto: Mapping[str, float], human: Mapping[str, float]) -> dict:
    """Spearman's rho and Kendall's tau-b (``scipy.stats``) between two system-level scores over the systems
    both have a finite score for. ``{"spearman", "kendall_tau_b", "n", "note"}``; the correlations are None
    with a note when fewer than three systems are shared (two points always correlate perfectly) or when
    either score is constant across them."""
    shared = sorted(
        s
        for s in set(auto) & set(human)
        if finite_or_none(_float(auto[s])) is not None and finite_or_none(_float(human[s])) is not None
    )
    out: dict = {"spearman": None, "kendall_tau_b": None, "n": len(shared), "note": None}
    if len(shared) < 3:
        n = len(shared)
        out["note"] = (
            f"{'no' if n == 0 else n} system{'' if n == 1 else 's'} in common: a rank correlation needs at least three"
        )
        return out
    x = np.array([float(auto[s]) for s in shared])
    y = np.array([float(human[s]) for s in shared])
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        out["note"] = "one of the scores is the same for every system: no ranking to correlate"
        return out
    out["spearman"] = finite_or_none(spearmanr(x, y).statistic)
    out["kendall_tau_b"] = finite_or_none(kendalltau(x, y, variant="b").statistic)
    return out


def _float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")
