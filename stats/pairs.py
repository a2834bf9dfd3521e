"""Reviewer pairs and agreement in words: per-pair Cohen's kappa on the items two reviewers share, and the
Landis & Koch words for a kappa value."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .agreement import cohen_kappa, percent_agreement
from .bootstrap import MIN_UNITS_TO_READ
from .ratings import prepare_ratings

#: Pairs of raters with fewer items in common than this are reported but marked: a kappa over a handful of
#: items swings by tenths with one changed rating (the reports' one bound, :data:`stats.bootstrap.MIN_UNITS_TO_READ`).
MIN_PAIR_ITEMS = MIN_UNITS_TO_READ


def rater_pairs(
    frame: pd.DataFrame,
    *,
    verdict_values: Sequence,
    relevance_values: Sequence,
    min_items: int = MIN_PAIR_ITEMS,
) -> list[dict]:
    """Agreement of every pair of raters over the items both rated (``frame``: item, annotator, verdict,
    relevance; one row per rating).

    Per pair: ``n_items`` in common, raw verdict agreement (share of common items with the same verdict),
    Cohen's kappa on the verdict and quadratic-weighted Cohen's kappa on relevance (no bootstrap: per-pair
    intervals over a few items say little). Pairs with no item in common are left out; pairs with fewer than
    ``min_items`` are kept with ``too_few_items`` set, so the page can mark them rather than hide them.
    """
    items_by = frame.groupby("annotator")["item"].apply(set).to_dict()
    # each rater's rows once, so a pair reads its two raters' rows rather than the whole frame
    rows_by = {who: rows for who, rows in frame.groupby("annotator", sort=False)}
    pairs = []
    for a, b in _sorted_pairs(items_by):
        shared = items_by[a] & items_by[b]
        if not shared:
            continue
        pair = pd.concat([rows_by[a], rows_by[b]]).sort_index()
        pair = pair[pair["item"].isin(shared)]
        # the verdicts' table once for both statistics (raw agreement counts the same on the full scale)
        verdicts = prepare_ratings(pair.rename(columns={"verdict": "value"})[["item", "annotator", "value"]],
                                   values=verdict_values)  # fmt: skip
        relevance = pair.rename(columns={"relevance": "value"})[["item", "annotator", "value"]]
        pairs.append(
            {
                "pair": [a, b],
                "n_items": len(shared),
                "too_few_items": len(shared) < min_items,
                "verdict_percent_agreement": percent_agreement(verdicts, n_resamples=0).to_dict(),
                "verdict_cohen_kappa": cohen_kappa(verdicts, n_resamples=0).to_dict(),
                "relevance_cohen_kappa_quadratic": cohen_kappa(
                    relevance, values=relevance_values, weights="quadratic", n_resamples=0
                ).to_dict(),
            }
        )
    return pairs


def _sorted_pairs(items_by: dict) -> list[tuple]:
    names = sorted(items_by, key=str)
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def strength_of_agreement(kappa: float | None) -> str | None:
    """Landis & Koch (1977, *Biometrics* 33:159-174) words for a kappa-like coefficient: below 0 "poor",
    up to 0.20 "slight", 0.40 "fair", 0.60 "moderate", 0.80 "substantial", above "almost perfect"."""
    if kappa is None:
        return None
    for bound, word in ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa < bound or (bound > 0 and kappa <= bound):
            return word
    return "almost perfect"
