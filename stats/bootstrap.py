"""One shared, seeded, vectorised bootstrap (pure; numpy only).

Method: the nonparametric bootstrap of Efron & Tibshirani (1993, *An Introduction to the Bootstrap*, ch. 6 and
13) resampling whole *units* (items, or questions for rankings) with replacement, and the percentile interval
``[q_{2.5 %}, q_{97.5 %}]`` of the resampled statistic. Resampling units (not single ratings) keeps the
ratings of one item together, which is the "cluster" bootstrap appropriate for agreement data.

Speed: a resample is represented by its *count vector* ``c`` (how often each unit was drawn). Every statistic
in this package is a function of sums of per-unit contributions (coincidence matrices, category counts,
confusion matrices, per-question values, win matrices), so the resampled sums for all ``B`` resamples are one
matrix product ``C @ X`` of the ``(B, n)`` count matrix with the ``(n, k)`` contribution matrix; the statistic
is then evaluated on the ``(B, k)`` sums in a vectorised way. The count matrix for a given ``(n, B, seed)`` is
cached, so every statistic on the same units uses the very same resamples.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from .results import StatResult, finite_or_none, same_value

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20250607
CI_LEVEL = 0.95
#: The fewest units (a study's ranked questions, items reviewed twice) from which a report's headline reads
#: anything: names a preferred system, the metric or judge that follows the physicians best, or a strength of
#: agreement. Every such figure is a mean over units with a percentile bootstrap over them, and on a handful of
#: units both are noise: one changed ranking moves the figure by tenths, and the resamples are too few to show it
#: (two units have three distinct resamples of a mean; every resample of two identical questions is the same
#: question, an interval of no width that looks like certainty). Ten units is where the interval starts to mean
#: something, the bound of the vetting report's reviewer pairs (:data:`stats.pairs.MIN_PAIR_ITEMS`) for the same
#: reason. It counts units, not raters: a question ranked by one physician is a whole unit of the preference and
#: correlation figures; agreement between physicians needs two on a question, and says so where it is undefined.
MIN_UNITS_TO_READ = 10
#: Resamples drawn at once when the count matrix is built (memory: this many rows of draws, not all of them).
DRAW_BLOCK = 32


@lru_cache(maxsize=16)
def _cached_distinct(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    if _too_large_to_keep(n_units, n_resamples):
        distinct = np.empty(n_resamples, dtype=np.int64)
        for start, block in _count_blocks(n_units, n_resamples, seed):
            distinct[start : start + len(block)] = (block > 0).sum(axis=1)
    else:
        distinct = (_cached_counts(n_units, n_resamples, seed) > 0).sum(axis=1)
    distinct.setflags(write=False)
    return distinct


#: The count matrices kept for reuse, in bytes. Every statistic on the same units reuses one matrix (the same
#: resamples, and no second draw); the cache keeps as many recent matrices as fit, and always the newest. A matrix
#: larger than the whole budget (one over a nugget study's 400,000 units is 3.2 GB) is not built at all by
#: :func:`bootstrap_sums`, which then draws the resamples block by block for each statistic.
COUNTS_CACHE_BYTES = 1 << 30
COUNTS_CACHE_ENTRIES = 16
_counts_cache: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
_counts_lock = threading.Lock()  # the web process's threads share it


def _cached_counts(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    key = (n_units, n_resamples, seed)
    with _counts_lock:
        if key in _counts_cache:
            _counts_cache.move_to_end(key)
            return _counts_cache[key]
    counts = _draw_counts(n_units, n_resamples, seed)
    with _counts_lock:
        _counts_cache[key] = counts
        while len(_counts_cache) > 1 and (
            len(_counts_cache) > COUNTS_CACHE_ENTRIES
            or sum(kept.nbytes for kept in _counts_cache.values()) > COUNTS_CACHE_BYTES
        ):
            _counts_cache.popitem(last=False)  # the least recently used
    return counts


def clear_cache() -> None:
    """Forget every cached count matrix (benchmarks start cold with it)."""
    with _counts_lock:
        _counts_cache.clear()
    _cached_distinct.cache_clear()


def _too_large_to_keep(n_units: int, n_resamples: int) -> bool:
    """True when one count matrix would not fit in the cache's budget: then it is never built whole, and each
    statistic draws the resamples again, a block at a time (time for memory: drawing again is slow, but at a nugget
    study's size the matrix would take gigabytes)."""
    return n_units * n_resamples * 8 > COUNTS_CACHE_BYTES


def _count_blocks(n_units: int, n_resamples: int, seed: int) -> Iterator[tuple[int, np.ndarray]]:
    """The count matrix of ``(n_units, n_resamples, seed)`` a block of rows at a time: (its first row, the rows).

    Drawn a block at a time and counted row by row: no matrix of draws, no offset copy and no integer count matrix
    beside it. The blocks draw the very numbers one ``integers(0, n, size=(B, n))`` call would (tests/stats: the
    resamples of a seed must not change), so every interval stays what it was."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, DRAW_BLOCK):
        drawn = rng.integers(0, n_units, size=(min(DRAW_BLOCK, n_resamples - start), n_units))
        block = np.empty(drawn.shape, dtype=np.float64)
        for row, units in zip(block, drawn, strict=True):
            row[:] = np.bincount(units, minlength=n_units)
        yield start, block


def _draw_counts(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    counts = np.empty((n_resamples, n_units), dtype=np.float64)
    for start, block in _count_blocks(n_units, n_resamples, seed):
        counts[start : start + len(block)] = block
    counts.setflags(write=False)
    return counts


def _resampled_sums(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """``counts @ x`` for the count matrix of ``(len(x), n_resamples, seed)``: from the cached matrix, or block by
    block when it is too large to keep."""
    n_units = x.shape[0]
    if not _too_large_to_keep(n_units, n_resamples):
        return resample_counts(n_units, n_resamples, seed) @ x
    sums = np.empty((n_resamples, x.shape[1]), dtype=np.float64)
    for start, block in _count_blocks(n_units, n_resamples, seed):
        sums[start : start + len(block)] = block @ x
    return sums


def resample_counts(n_units: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``(n_resamples, n_units)`` matrix: row ``b`` says how often each unit is drawn in resample ``b``.

    Each row sums to ``n_units`` (a resample has as many units as the data). Read-only, cached per
    ``(n_units, n_resamples, seed)``; drawn with ``numpy.random.default_rng(seed)``.
    """
    if n_units < 1 or n_resamples < 1:
        raise ValueError("n_units and n_resamples must be positive")
    return _cached_counts(int(n_units), int(n_resamples), int(seed))


def percentile_interval(samples: np.ndarray, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column of ``samples`` (first axis = resamples), ignoring non-finite values.

    Columns without any finite value give NaN bounds.
    """
    samples = np.asarray(samples, dtype=float)
    tail = (1.0 - level) / 2.0 * 100.0
    masked = np.where(np.isfinite(samples), samples, np.nan)
    if masked.ndim == 1:
        masked = masked[:, None]
    lo = np.full(masked.shape[1:], np.nan)
    hi = np.full(masked.shape[1:], np.nan)
    ok = np.isfinite(masked).any(axis=0)
    if ok.any():
        q = np.nanpercentile(masked[:, ok], [tail, 100.0 - tail], axis=0)
        lo[ok], hi[ok] = q[0], q[1]
    return lo, hi


def interval_containing(estimate, low, high):
    """The interval ``[low, high]`` widened, where needed, to contain ``estimate`` (scalars or arrays alike; a NaN
    anywhere gives NaN bounds: no estimate, no interval).

    A percentile interval need not contain its estimate. When every resample gives the same value it has no
    width and can still lie beside the estimate by float noise: resampled sums are added in another order (three
    answers scoring 0.1 resample to 0.10000000000000002), and a warm-started Bradley-Terry fit stops 1e-9 away
    from the cold-started estimate. A skewed statistic can miss it by more. Reports show each estimate with its
    interval, and one outside its own interval reads as a contradiction (and drew a whisker of negative length:
    the report's plot was a 500). Widening only ever makes the interval more cautious."""
    return np.minimum(low, estimate), np.maximum(high, estimate)


def _drop_single_unit(samples: np.ndarray, n: int, b: int, seed: int, min_distinct: int) -> np.ndarray:
    """Mark resamples with fewer than ``min_distinct`` distinct units undefined, as for the point estimate."""
    if min_distinct <= 1:
        return samples
    few = _cached_distinct(n, b, seed) < min_distinct
    if few.any():
        samples = samples.copy()
        samples[few] = np.nan
    return samples


@dataclass(frozen=True)
class BootstrapOutcome:
    """Resampled values (``samples``: ``(B,)`` or ``(B, s)``) and their percentile interval."""

    samples: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_resamples: int
    n_defined: np.ndarray  # resamples with a finite value, per column


def bootstrap_sums(
    contributions: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = CI_LEVEL,
    min_distinct: int = 1,
) -> BootstrapOutcome:
    """Bootstrap a statistic that depends on the data only through column sums of per-unit contributions.

    ``contributions`` is ``(n_units, k)``; ``statistic`` maps a ``(B, k)`` array of resampled sums to ``(B,)``
    (or ``(B, s)``) values, NaN where undefined. Applying ``statistic`` to ``contributions.sum(0)[None]``
    must give the point estimate; each module's tests check that against the reference library.
    With ``min_distinct=2`` a resample drawing a single distinct unit is undefined (NaN), mirroring the rule
    that chance-corrected agreement on a single item is undefined; the default (1) is the plain bootstrap.
    """
    x = np.asarray(contributions, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] < 1 or n_resamples < 1:
        raise ValueError("n_units and n_resamples must be positive")
    sums = _resampled_sums(x, n_resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = np.asarray(statistic(sums), dtype=float)
    samples = _drop_single_unit(samples, x.shape[0], n_resamples, seed, min_distinct)
    lo, hi = percentile_interval(samples, level)
    n_defined = np.isfinite(samples).sum(axis=0)
    return BootstrapOutcome(samples, lo, hi, n_resamples, np.atleast_1d(n_defined))


def with_interval(result: StatResult, outcome: BootstrapOutcome | None, column: int = 0) -> StatResult:
    """Attach the interval of ``outcome`` (one column) to a defined result with at least two items."""
    if outcome is None or result.value is None or result.n_items < 2:
        return result
    n_def = int(outcome.n_defined[column])
    percentile_low = float(np.atleast_1d(outcome.ci_low)[column])
    percentile_high = float(np.atleast_1d(outcome.ci_high)[column])
    low, high = interval_containing(result.value, percentile_low, percentile_high)
    lo, hi = finite_or_none(low), finite_or_none(high)
    notes = result.notes
    if lo is not None and hi is not None and not (same_value(lo, percentile_low) and same_value(hi, percentile_high)):
        notes = notes + ("the bootstrap's percentile interval did not reach the estimate; it was widened to it",)
    if n_def < outcome.n_resamples:
        notes = notes + (
            f"{outcome.n_resamples - n_def} of {outcome.n_resamples} bootstrap resamples were undefined; "
            "the interval uses the rest",
        )
    return replace(
        result,
        ci_low=lo,
        ci_high=hi,
        undefined_reason=None,
        notes=notes,
        n_resamples=outcome.n_resamples,
        n_resamples_defined=n_def,
    )
