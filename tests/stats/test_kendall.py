"""Kendall's tau-b for stacks of rows gives scipy's values exactly, ties and all-tied rows included."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from stats.kendall import tau_b_rows


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8])
def test_rows_equal_scipy_exactly(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 4, size=(400, n)) + rng.choice([0.0, 0.5], size=(400, n))  # many ties, some halves
    y = rng.normal(size=(400, n)).round(1)
    x[0] = 1.0  # one all-tied row: undefined
    ours = tau_b_rows(x, y)
    for row in range(400):
        expected = kendalltau(x[row], y[row], variant="b").statistic if n >= 2 else np.nan
        assert (np.isnan(expected) and np.isnan(ours[row])) or ours[row] == expected


def test_known_answer():
    # x = 1 2 3 4, y = 1 3 2 4: 5 concordant, 1 discordant pairs, no ties -> (5 - 1) / 6
    assert tau_b_rows(np.array([[1, 2, 3, 4]]), np.array([[1, 3, 2, 4]]))[0] == pytest.approx(4 / 6)
