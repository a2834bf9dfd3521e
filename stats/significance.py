"""Which judges agree with physicians significantly better than others, and where the physicians themselves stand.

* :func:`paired_permutation_test` — is judge A's agreement with the physicians higher than judge B's? Both are
  scored on the same questions, so the test is paired: under the null hypothesis the two judges are exchangeable,
  and swapping their per-question results at random (a sign flip per question) gives the null distribution of the
  difference. Questions are the unit, as in the bootstrap intervals. The p-value is one-sided (A better than B),
  counted with the observed arrangement included, (1 + #{resampled ≥ observed}) / (1 + R), so it is never 0.
* :func:`significance_clusters` — the WMT tables' grouping: judges sorted by agreement; a judge is placed in a
  better cluster than the next ones only when it beats every one of them at p < alpha.
* :func:`human_ceiling` — HealthBench's placing of a grader among physicians: each physician's agreement with the
  others is the human range; a judge's percentile says how many physicians it agrees better than.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_PERMUTATIONS = 1000
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class PermutationResult:
    difference: float
    p_value: float
    n_resamples: int


def paired_permutation_test(
    numerator_a,
    numerator_b,
    denominator,
    *,
    n_resamples: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    flips: np.ndarray | None = None,
) -> PermutationResult:
    """One-sided paired permutation test that A's pooled agreement beats B's.

    Per question: ``numerator_a`` / ``numerator_b`` are each judge's correct pairs (or a per-question correlation,
    with ``denominator`` 1 per question for a plain average) and ``denominator`` the question's pairs, the same for
    both judges. Statistic: sum(numerator_a − numerator_b) / sum(denominator). ``flips``: the draws
    :func:`sign_flips` gives for this ``n_resamples``, ``seed`` and number of questions, when a caller testing many
    pairs of judges on the same questions has made them once.
    """
    a = np.asarray(numerator_a, dtype=float)
    b = np.asarray(numerator_b, dtype=float)
    n = np.asarray(denominator, dtype=float)
    if not (a.shape == b.shape == n.shape) or a.ndim != 1:
        raise ValueError("the per-question arrays must be three vectors of the same length")
    if len(a) == 0 or n.sum() <= 0:
        raise ValueError("the permutation test needs at least one question with pairs")
    if n_resamples < 1:
        raise ValueError("n_resamples must be positive")
    total = n.sum()
    diff = a - b
    observed = diff.sum() / total
    if flips is None:
        flips = sign_flips(n_resamples, len(diff), seed)
    elif flips.shape != (n_resamples, len(diff)):
        raise ValueError("the sign flips must be one row per resample and one column per question")
    resampled = flips @ diff / total
    # a tolerance so that a resample equal to the observed difference (up to rounding) counts as "as large"
    hits = int((resampled >= observed - 1e-12).sum())
    return PermutationResult(
        difference=float(observed), p_value=(1 + hits) / (1 + n_resamples), n_resamples=n_resamples
    )


def sign_flips(n_resamples: int, n_questions: int, seed: int) -> np.ndarray:
    """The permutation test's random sign per resample and question (−1 swaps the two judges' results)."""
    return np.random.default_rng(seed).choice((-1.0, 1.0), size=(n_resamples, n_questions))


def significance_clusters(
    scores: Mapping[Hashable, float],
    p_better: Callable[[Hashable, Hashable], float],
    *,
    alpha: float = DEFAULT_ALPHA,
) -> dict[Hashable, int]:
    """Cluster numbers (1 = best) for judges sorted by ``scores`` (higher first, ties by name).

    ``p_better(a, b)`` is the one-sided p-value that ``a`` beats ``b``. Going down the sorted list, the current
    cluster is closed after judge k only when every judge in it beats every judge below k at p < ``alpha``; judges
    that cannot be separated so share a cluster. (mt-metrics-eval's greedy rule starts a new cluster as soon as any
    member of the current one beats the next judge; this stricter rule never puts two judges in different clusters
    without a significant difference between every member of the upper and the lower one.)
    """
    order = sorted(scores, key=lambda name: (-scores[name], str(name)))
    pvals: dict[tuple[Hashable, Hashable], float] = {}

    def beats(a: Hashable, b: Hashable) -> bool:
        if (a, b) not in pvals:
            pvals[(a, b)] = p_better(a, b)
        return pvals[(a, b)] < alpha

    clusters: dict[Hashable, int] = {}
    start, cluster = 0, 1
    while start < len(order):
        end = len(order)  # exclusive end of the current cluster; everything left if no split works
        for k in range(start + 1, len(order)):
            upper, lower = order[start:k], order[k:]
            if all(beats(a, b) for a in upper for b in lower):
                end = k
                break
        for name in order[start:end]:
            clusters[name] = cluster
        start, cluster = end, cluster + 1
    return clusters


@dataclass(frozen=True)
class HumanCeiling:
    """The physicians' own agreement with each other, and a judge's place among them."""

    mean: float
    low: float
    high: float
    n_physicians: int
    judge: float
    percentile: float
    above_ceiling: bool


def human_ceiling(physicians: Sequence[float], judge: float) -> HumanCeiling:
    """Place ``judge`` among the physicians' leave-one-out agreement values.

    ``percentile``: the share of physicians the judge agrees better than, ties counting half (0–100).
    ``above_ceiling``: the judge agrees better than every physician, which is more often a sign of a problem (the
    judge saw the reference, or the physicians disagree for a reason the judge misses) than of a superhuman judge.
    """
    values = np.asarray([v for v in physicians if v is not None and np.isfinite(v)], dtype=float)
    if len(values) == 0:
        raise ValueError("the human ceiling needs at least one physician's agreement value")
    below = float((values < judge).sum()) + 0.5 * float((values == judge).sum())
    return HumanCeiling(
        mean=float(values.mean()),
        low=float(values.min()),
        high=float(values.max()),
        n_physicians=len(values),
        judge=float(judge),
        percentile=100.0 * below / len(values),
        above_ceiling=bool(judge > values.max()),
    )
