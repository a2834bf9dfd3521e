"""The physicians' consensus frame of the nugget scores, grouped in plain Python for speed, is the group-by it
replaced: the same keys in the same order, each with :func:`stats.nuggets.consensus_label` of its labels in row
order."""

from __future__ import annotations

import random

import pandas as pd

from evaluation.nuggets import CONSENSUS, _consensus_frame
from stats.nuggets import consensus_label


def _by_pandas(human: pd.DataFrame) -> pd.DataFrame:
    grouped = human.groupby(["item_uid", "system", "nugget_id"], sort=True)["label"]
    out = grouped.agg(lambda s: consensus_label(list(s))).reset_index()
    out["labeller"] = CONSENSUS
    return out


def test_the_consensus_frame_is_the_group_by_it_replaced():
    rng = random.Random(3)
    rows = [
        {
            "item_uid": rng.choice(["q1", "q10", "q2", "é-item", "问题"]),
            "system": rng.choice(["Model B", "model a", "reference"]),
            "nugget_id": rng.choice(["n1", "n2", "n10"]),
            "label": rng.choice(["support", "partial", "not_support"]),
            "labeller": rng.choice(["P1", "P2", "P3"]),
        }
        for _ in range(2000)
    ]
    human = pd.DataFrame(rows)
    mine, theirs = _consensus_frame(human), _by_pandas(human)
    assert len(mine) == len(theirs) > 30
    pd.testing.assert_frame_equal(mine.astype(object), theirs.astype(object))
    empty = _consensus_frame(human.iloc[:0])
    assert empty.empty and list(empty.columns) == ["item_uid", "system", "nugget_id", "label", "labeller"]
