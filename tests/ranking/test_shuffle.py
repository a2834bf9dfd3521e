"""Per-ranker shuffles: keyed by the study's secret, reproducible with it, independent between rankers, no position
bias (pure, no database)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from scipy.stats import chisquare

from ranking.shuffle import new_shuffle_secret, permutation, sample_items, seeded_fraction, slot_letter, task_seed

ROOT = Path(__file__).resolve().parents[2]
# Fixed secrets, so the statistical tests below give the same result on every run.
SECRETS = ["5e" * 32, "a1" * 32, "0f3c" * 16]
SECRET = SECRETS[0]


def _uniform(counts: list[int]) -> bool:
    """The check a position-biased shuffle must fail: chi-square against uniform and no slot off by 30 %."""
    expected = sum(counts) / len(counts)
    return chisquare(counts).pvalue > 0.001 and all(0.7 * expected < c < 1.3 * expected for c in counts)


def test_same_secret_and_ids_give_the_same_seed_and_permutation():
    """Organizers reproduce any ranker's order from the study's secret."""
    seed = task_seed(secret=SECRET, ranker_id=3, item_id=42)
    assert seed == task_seed(secret=SECRET, ranker_id=3, item_id=42)
    assert permutation(8, seed) == permutation(8, seed)
    assert sorted(permutation(8, seed)) == list(range(8))


def test_the_secret_keys_the_seed():
    seeds = {task_seed(secret=secret, ranker_id=3, item_id=42) for secret in SECRETS}
    assert len(seeds) == len(SECRETS)
    fresh = {new_shuffle_secret() for _ in range(20)}
    assert len(fresh) == 20 and all(len(bytes.fromhex(s)) == 32 for s in fresh)


def test_reference_slot_is_uniform_over_600_rankers():
    """One item, six answers, the reference stored last: over 600 rankers its presented slot is uniform."""
    n, reference = 6, 5
    for secret in SECRETS:
        slots = Counter(
            permutation(n, task_seed(secret=secret, ranker_id=r, item_id=77)).index(reference) for r in range(600)
        )
        assert _uniform([slots[p] for p in range(n)]), (secret, slots)
    # the check has teeth: a shuffle that leaves the reference in place a third of the time fails it
    biased = Counter(
        reference if r % 3 == 0 else permutation(n, task_seed(secret=SECRET, ranker_id=r, item_id=77)).index(reference)
        for r in range(600)
    )
    assert not _uniform([biased[p] for p in range(n)])


def test_seed_is_stable_across_processes():
    """hash() is salted per process; the seed must not be."""
    code = f"from ranking.shuffle import task_seed, permutation; s = task_seed(secret='{SECRET}', ranker_id=3, item_id=42); print(s, permutation(8, s))"
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
    orders = {tuple(permutation(6, task_seed(secret=SECRET, ranker_id=r, item_id=5))) for r in range(40)}
    assert len(orders) > 30  # 720 possible orders: 40 rankers almost never collide much
    first = [permutation(6, task_seed(secret=SECRET, ranker_id=r, item_id=5))[0] for r in range(600)]
    second = [permutation(6, task_seed(secret=SECRET, ranker_id=r + 1, item_id=5))[0] for r in range(600)]
    same = sum(a == b for a, b in zip(first, second, strict=True)) / 600
    assert 0.08 < same < 0.26  # independent: agree about 1/6 of the time


def test_reference_position_has_no_bias_over_2000_seeds():
    n = 8
    reference = n - 1  # the reference answer is created last; the shuffle must spread it evenly
    where = Counter(
        permutation(n, task_seed(secret=SECRETS[s % 3], ranker_id=9, item_id=s)).index(reference) for s in range(2000)
    )
    counts = [where[p] for p in range(n)]
    assert _uniform(counts), counts


def test_every_position_is_uniform_for_every_answer():
    n = 4
    table = Counter()
    for s in range(2000):
        for position, answer in enumerate(permutation(n, task_seed(secret=SECRET, ranker_id=s, item_id=1))):
            table[(answer, position)] += 1
    for answer in range(n):
        assert chisquare([table[(answer, p)] for p in range(n)]).pvalue > 0.001


def test_slot_letters_and_fraction():
    assert [slot_letter(i) for i in (0, 1, 25, 26, 27)] == ["A", "B", "Z", "AA", "AB"]
    draws = [seeded_fraction(task_seed(secret=SECRET, ranker_id=r, item_id=1), "unblinding") for r in range(1000)]
    assert all(0 <= d < 1 for d in draws) and 0.4 < sum(d < 0.5 for d in draws) / 1000 < 0.6


def test_sample_is_seeded_and_sized():
    ids = list(range(100))
    assert sample_items(ids, size=10, seed=4) == sample_items(list(reversed(ids)), size=10, seed=4)
    assert sample_items(ids, size=10, seed=4) != sample_items(ids, size=10, seed=5)
    assert sorted(sample_items(ids, size=None, seed=4)) == ids
