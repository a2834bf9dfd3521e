"""Kendall's tau-b and tau-c for stacks of rows give scipy's values exactly, ties and all-tied rows included."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from stats.kendall import tau_b_rows, tau_c_rows


@pytest.mark.parametrize("variant", ["b", "c"])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 8])
def test_rows_equal_scipy_exactly(n, variant):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 4, size=(400, n)) + rng.choice([0.0, 0.5], size=(400, n))  # many ties, some halves
    y = rng.normal(size=(400, n)).round(1)
    x[0] = 1.0  # one all-tied row: undefined
    y[1] = 2.5  # and one tied in y
    ours = (tau_b_rows if variant == "b" else tau_c_rows)(x, y)
    for row in range(400):
        expected = kendalltau(x[row], y[row], variant=variant).statistic if n >= 2 else np.nan
        assert (np.isnan(expected) and np.isnan(ours[row])) or ours[row] == expected


def test_known_answer():
    # x = 1 2 3 4, y = 1 3 2 4: 5 concordant, 1 discordant pairs, no ties -> (5 - 1) / 6
    assert tau_b_rows(np.array([[1, 2, 3, 4]]), np.array([[1, 3, 2, 4]]))[0] == pytest.approx(4 / 6)


def test_tau_c_known_answer():
    # x = 1 1 2 2, y = 1 2 3 4: 4 concordant pairs, 0 discordant, m = min(2 distinct, 4 distinct) = 2
    # tau_c = 2 * 4 / (4² * (2 - 1) / 2) = 1.0; with y = 1 2 4 3 still 4 - 0 (the tied x pairs do not count)
    assert tau_c_rows(np.array([[1, 1, 2, 2]]), np.array([[1, 2, 3, 4]]))[0] == 1.0
    # x = 1 2 3, y = 1 3 2: 2 concordant, 1 discordant, m = 3: 2 * 1 / (9 * 2 / 3) = 1 / 3
    assert tau_c_rows(np.array([[1, 2, 3]]), np.array([[1, 3, 2]]))[0] == pytest.approx(1 / 3)
