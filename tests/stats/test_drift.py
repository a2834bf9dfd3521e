"""A labeller's accuracy over windows, and the drift rule (pure)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta

from stats.drift import accuracy_windows, drifted


def test_windows_hold_the_share_right_and_its_jeffreys_interval():
    right = np.array([1.0] * 8 + [0.0] * 2 + [1.0] * 3)
    windows = accuracy_windows(right, 10)
    assert [(w["start"], w["end"], w["n"]) for w in windows] == [(1, 10, 10), (11, 13, 3)]
    assert windows[0]["accuracy"] == 0.8 and windows[1]["accuracy"] == 1.0
    assert windows[0]["low"] == pytest.approx(beta.ppf(0.025, 8.5, 2.5), abs=1e-12)
    assert windows[0]["high"] == pytest.approx(beta.ppf(0.975, 8.5, 2.5), abs=1e-12)


def test_a_drop_larger_than_its_interval_is_a_drift_and_noise_is_not():
    steady = np.array([0.9] * 100)
    assert not drifted(steady, 50)
    dropped = np.array([0.95] * 100 + [0.5] * 50)
    assert drifted(dropped, 50)
    slight = np.array([0.9] * 100 + [0.85] * 50)
    assert not drifted(slight, 50)  # 85 % of 50 reaches above 90 %: within the window's interval
    assert not drifted(np.array([0.9] * 60 + [0.2] * 50), 60)  # not enough before the window to call it a drop
