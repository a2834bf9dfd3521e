"""Per-ranker shuffles: reproducible, independent between rankers, no position bias (pure, no database)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from scipy.stats import chisquare

from ranking.shuffle import permutation, sample_items, seeded_fraction, slot_letter, task_seed

ROOT = Path(__file__).resolve().parents[2]


def test_same_ids_give_the_same_seed_and_permutation():
    seed = task_seed(study_seed=7, ranker_id=3, item_id=42)
    assert seed == task_seed(study_seed=7, ranker_id=3, item_id=42)
    assert permutation(8, seed) == permutation(8, seed)
    assert sorted(permutation(8, seed)) == list(range(8))


def test_seed_is_stable_across_processes():
    """hash() is salted per process; the seed must not be."""
    code = "from ranking.shuffle import task_seed, permutation; s = task_seed(study_seed=7, ranker_id=3, item_id=42); print(s, permutation(8, s))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(h), "PATH": ""},
            cwd=ROOT,
        ).stdout
        for h in (1, 2)
    }
    assert len(outputs) == 1


def test_rankers_get_independent_orders():
    orders = {tuple(permutation(6, task_seed(study_seed=1, ranker_id=r, item_id=5))) for r in range(40)}
    assert len(orders) > 30  # 720 possible orders: 40 rankers almost never collide much
    first = [permutation(6, task_seed(study_seed=1, ranker_id=r, item_id=5))[0] for r in range(600)]
    second = [permutation(6, task_seed(study_seed=1, ranker_id=r + 1, item_id=5))[0] for r in range(600)]
    same = sum(a == b for a, b in zip(first, second, strict=True)) / 600
    assert 0.08 < same < 0.26  # independent: agree about 1/6 of the time


def test_reference_position_has_no_bias_over_2000_seeds():
    n = 8
    reference = n - 1  # the reference answer is created last; the shuffle must spread it evenly
    where = Counter(
        permutation(n, task_seed(study_seed=s, ranker_id=9, item_id=77)).index(reference) for s in range(2000)
    )
    counts = [where[p] for p in range(n)]
    assert chisquare(counts).pvalue > 0.001
    assert all(2000 / n * 0.7 < c < 2000 / n * 1.3 for c in counts), counts


def test_every_position_is_uniform_for_every_answer():
    n = 4
    table = Counter()
    for s in range(2000):
        for position, answer in enumerate(permutation(n, task_seed(study_seed=3, ranker_id=s, item_id=1))):
            table[(answer, position)] += 1
    for answer in range(n):
        assert chisquare([table[(answer, p)] for p in range(n)]).pvalue > 0.001


def test_slot_letters_and_fraction():
    assert [slot_letter(i) for i in (0, 1, 25, 26, 27)] == ["A", "B", "Z", "AA", "AB"]
    draws = [seeded_fraction(task_seed(study_seed=1, ranker_id=r, item_id=1), "unblinding") for r in range(1000)]
    assert all(0 <= d < 1 for d in draws) and 0.4 < sum(d < 0.5 for d in draws) / 1000 < 0.6


def test_sample_is_seeded_and_sized():
    ids = list(range(100))
    assert sample_items(ids, size=10, seed=4) == sample_items(list(reversed(ids)), size=10, seed=4)
    assert sample_items(ids, size=10, seed=4) != sample_items(ids, size=10, seed=5)
    assert sorted(sample_items(ids, size=None, seed=4)) == ids
