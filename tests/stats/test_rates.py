"""Wilson score interval: known answers (Newcombe 1998, table I) and the edges."""

from __future__ import annotations

import pytest

from stats.rates import wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),  # Newcombe 1998, example (a)
        (15, 148, 0.0624, 0.1605),  # example (b)
        (0, 20, 0.0, 0.1611),  # example (c)
        (1, 29, 0.0061, 0.1718),  # example (d)
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_known_answers(k, n, low, high):
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_edges_are_exact_and_empty_is_undefined():
    assert wilson_interval(0, 18)[0] == 0.0 and wilson_interval(18, 18)[1] == 1.0
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
