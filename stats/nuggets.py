"""Statistics of nugget labels: consensus, system scores with intervals, agreement (docs/nuggets.md).

Pure (pandas, numpy, scikit-learn, scipy). Labels are the strings ``support`` > ``partial`` > ``not_support``,
an ordinal scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

#: The ordinal scale, lowest first (the order Krippendorff's ordinal alpha and the tie rule use).
ORDINAL_SCALE = ("not_support", "partial", "support")


def consensus_label(labels: Sequence[str]) -> str | None:
    """The majority label; on a tie, the median of all the labels on the ordinal scale (lower median when the
    count is even); empty → None."""
    raise NotImplementedError


def system_scores(
    per_answer: pd.DataFrame,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """Per (system, labeller, score): mean over answers, bootstrap 95 % ci_low / ci_high, n_answers.

    ``per_answer``: columns system, labeller, item_uid and one column per score (None / NaN = undefined for that
    answer, left out of that score's mean).
    """
    raise NotImplementedError


def label_agreement(
    labels: pd.DataFrame,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
):
    """Krippendorff's alpha (ordinal) between labellers over units (item_uid, system, nugget_id); a StatResult."""
    raise NotImplementedError


def judge_agreement(labels: pd.DataFrame, judges: Sequence[str], humans: Sequence[str]) -> dict:
    """Each judge vs the humans' consensus (Cohen's kappa, macro-F1, F1 per label, n) and the human ceiling
    (each human vs the consensus of the others: the same figures, with mean and range over humans)."""
    raise NotImplementedError


def system_rank_correlation(auto: Mapping[str, float], human: Mapping[str, float]) -> dict:
    """Spearman rho and Kendall tau-b between two system-level scores over the systems both have; n; None with a
    note when fewer than 3 systems."""
    raise NotImplementedError
