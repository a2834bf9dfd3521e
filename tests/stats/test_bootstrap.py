"""The shared bootstrap helper."""

from __future__ import annotations

import numpy as np
import pytest

from stats.bootstrap import bootstrap_sums, percentile_interval, resample_counts


def test_counts_are_seeded_resamples_of_all_units():
    c = resample_counts(50, 300, seed=3)
    assert c.shape == (300, 50) and (c.sum(axis=1) == 50).all()
    assert np.array_equal(c, resample_counts(50, 300, seed=3))
    assert not np.array_equal(c, resample_counts(50, 300, seed=4))
    # each unit is drawn once per resample on average
    assert c.mean() == pytest.approx(1.0)
    with pytest.raises(ValueError):
        c[0, 0] = 5  # cached and read-only


@pytest.mark.parametrize("n_units", [1, 7, 1001, 40_000])
def test_counts_drawn_in_blocks_are_the_resamples_one_draw_of_every_row_gives(n_units):
    """The count matrix is drawn a block of rows at a time (memory); the resamples of a seed must stay those of
    one ``integers(0, n, size=(B, n))`` call, the draw every interval in the portal was computed with."""
    n_resamples = 75  # not a multiple of the block
    drawn = np.random.default_rng(11).integers(0, n_units, size=(n_resamples, n_units))
    expected = np.stack([np.bincount(row, minlength=n_units) for row in drawn]).astype(float)
    assert np.array_equal(resample_counts(n_units, n_resamples, seed=11), expected)


def test_sum_bootstrap_equals_explicit_resampling_of_a_mean():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    out = bootstrap_sums(x, lambda s: s[:, 0] / len(x), n_resamples=500, seed=9)
    counts = resample_counts(40, 500, seed=9).astype(int)
    explicit = np.array([np.repeat(x, row).mean() for row in counts])
    assert out.samples == pytest.approx(explicit, abs=1e-12)
    lo, hi = np.percentile(explicit, [2.5, 97.5])
    assert (out.ci_low[0], out.ci_high[0]) == pytest.approx((lo, hi), abs=1e-12)


def test_percentile_interval_ignores_undefined_resamples():
    samples = np.array([np.nan, 1.0, 2.0, 3.0, np.inf])
    lo, hi = percentile_interval(samples)
    assert (lo[0], hi[0]) == pytest.approx(tuple(np.percentile([1.0, 2.0, 3.0], [2.5, 97.5])))
    lo, hi = percentile_interval(np.array([np.nan, np.nan]))
    assert np.isnan(lo[0]) and np.isnan(hi[0])


def test_resamples_with_a_single_distinct_unit_are_undefined():
    out = bootstrap_sums(np.array([1.0, 2.0]), lambda s: s[:, 0], n_resamples=400, seed=1, min_distinct=2)
    counts = resample_counts(2, 400, seed=1)
    single = (counts > 0).sum(axis=1) < 2
    assert single.any()
    assert np.isnan(out.samples[single]).all() and np.isfinite(out.samples[~single]).all()
    assert out.n_defined[0] == (~single).sum()
    plain = bootstrap_sums(np.array([1.0, 2.0]), lambda s: s[:, 0], n_resamples=400, seed=1)
    assert np.isfinite(plain.samples).all()


def test_the_count_cache_keeps_what_fits_and_always_the_newest(monkeypatch):
    from stats import bootstrap

    bootstrap.clear_cache()
    monkeypatch.setattr(bootstrap, "COUNTS_CACHE_BYTES", 100 * 10 * 8 * 2)  # two 100 x 10 matrices
    first = resample_counts(10, 100, seed=1)
    resample_counts(10, 100, seed=2)
    assert resample_counts(10, 100, seed=1) is first  # both fit: the same matrix, not a second draw
    resample_counts(10, 100, seed=3)  # the least recently used (seed 2) goes
    assert [key[2] for key in bootstrap._counts_cache] == [1, 3]
    big = resample_counts(1000, 100, seed=4)  # larger than the whole budget: kept alone, as the newest
    assert list(bootstrap._counts_cache) == [(1000, 100, 4)] and resample_counts(1000, 100, seed=4) is big
    again = resample_counts(10, 100, seed=1)
    assert np.array_equal(again, first) and again is not first  # drawn again, the same resamples
    bootstrap.clear_cache()


@pytest.mark.parametrize("n_units", [3, 257])
def test_units_too_many_to_keep_give_the_same_bootstrap_block_by_block(monkeypatch, n_units):
    """Above the cache's budget the count matrix is never built whole: each statistic draws the same resamples a
    block at a time (memory for time). Same samples, same intervals, same undefined single-unit resamples."""
    from stats import bootstrap

    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, size=(n_units, 3)).astype(float)

    def statistic(sums):
        return sums[:, 0] / sums[:, 1:].sum(axis=1)

    bootstrap.clear_cache()
    kept = bootstrap_sums(x, statistic, n_resamples=101, seed=5, min_distinct=2)
    assert len(bootstrap._counts_cache) == 1
    bootstrap.clear_cache()
    monkeypatch.setattr(bootstrap, "COUNTS_CACHE_BYTES", 8)  # nothing fits
    streamed = bootstrap_sums(x, statistic, n_resamples=101, seed=5, min_distinct=2)
    assert len(bootstrap._counts_cache) == 0  # no matrix was built
    assert np.allclose(streamed.samples, kept.samples, rtol=1e-12, atol=0, equal_nan=True)
    assert np.array_equal(np.isnan(streamed.samples), np.isnan(kept.samples))
    assert np.allclose([streamed.ci_low, streamed.ci_high], [kept.ci_low, kept.ci_high], rtol=1e-12, atol=0)
    assert np.array_equal(streamed.n_defined, kept.n_defined)
    if n_units == 3:
        assert kept.n_defined[0] < 101  # some resamples drew a single unit: undefined in both
    bootstrap.clear_cache()


def test_an_interval_is_widened_to_contain_its_estimate_and_never_narrowed():
    from stats.bootstrap import interval_containing

    assert interval_containing(0.5, 0.2, 0.7) == (0.2, 0.7)  # already contains it: unchanged
    assert interval_containing(4.771117576, 4.771117578, 4.771117578) == (4.771117576, 4.771117578)
    assert interval_containing(-1.0, -0.8, -0.5) == (-1.0, -0.5)
    low, high = interval_containing(np.array([1.0, 0.0, np.nan]), np.array([0.5, 0.1, 0.0]), np.array([0.9, 0.2, 1]))
    assert low.tolist()[:2] == [0.5, 0.0] and high.tolist()[:2] == [1.0, 0.2]
    assert np.isnan(low[2]) and np.isnan(high[2])  # no estimate: no interval


def test_a_statistic_s_interval_contains_its_value():
    """Three answers that all score 0.1 have the mean 0.1; every resample sums them to 0.30000000000000004, and a
    third of that is 0.10000000000000002: the interval [that, that] lay above its estimate. The interval of a
    result always contains its value."""
    from stats.bootstrap import with_interval
    from stats.results import StatResult

    values = np.full((3, 1), 0.1)
    result = StatResult("mean", 0.1, n_items=3)
    out = with_interval(result, bootstrap_sums(values, lambda s: s[:, 0] / 3, n_resamples=50))
    assert out.ci_low <= out.value <= out.ci_high


def test_a_tie_is_equal_values_or_overlapping_intervals():
    from stats.results import same_value, tied_with_best

    assert same_value(0.7, 0.7 + 1e-9) and not same_value(0.7, 0.7001)
    figures = {"a": (0.62, (0.5, 0.8)), "b": (0.55, (0.3, 0.7)), "c": (0.1, (-0.1, 0.3)), "d": (0.62, None)}
    assert tied_with_best(figures) == ["a", "b", "d"]  # d: the same value; c: its interval ends below a's
    assert tied_with_best({"a": (0.9, None), "b": (0.2, None)}) == ["a", "b"]  # no intervals: cannot tell apart
    assert tied_with_best({"a": (0.9, (0.8, 1.0)), "b": (0.2, None)}) == ["a"]  # b's point lies outside a's interval
    assert tied_with_best({}) == []
