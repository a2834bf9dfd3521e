"""Every answer's nugget scores, counted for a whole study at once (``evaluation.nuggets._per_answer``), are
:func:`metrics.nuggets.answer_scores` of each answer: the same numbers, answers in the order they first appear,
the last label of a nugget counting, unlabelled nuggets not_support, the same refusals."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from evaluation.nuggets import _per_answer
from metrics.nuggets import SCORE_NAMES, Nugget, answer_scores

LABELS = ["support", "partial", "not_support"]


def _study(rng: random.Random, *, keys_unique_in_study: bool = False):
    nuggets = {}
    for q in range(25):
        kinds = rng.choice(
            [["vital", "okay", "avoid"], ["okay", "okay"], ["vital", "vital", "okay", "avoid", "avoid"], ["avoid"]]
        )
        prefix = f"q{q}-" if keys_unique_in_study else ""
        nuggets[f"q{q}"] = [Nugget(f"{prefix}n{i}", f"fact {i}", kind) for i, kind in enumerate(kinds, 1)]
    rows, marks = [], {}
    for _ in range(1200):
        uid = rng.choice(sorted(nuggets))
        system, labeller = rng.choice(["model b", "Model A", "reference"]), rng.choice(["P1", "P2", "matcher"])
        nugget = rng.choice(nuggets[uid])
        rows.append((uid, system, nugget.id, rng.choice(LABELS), labeller))
        if rng.random() < 0.3:
            marks[uid, system, labeller] = [rng.random() < 0.4 for _ in range(rng.randint(0, 4))]
    return pd.DataFrame(rows, columns=["item_uid", "system", "nugget_id", "label", "labeller"]), nuggets, marks


def _one_by_one(frame, nuggets, marks):
    by_answer: dict[tuple[str, str, str], dict[str, str]] = {}
    for uid, system, nugget_id, label, labeller in frame.itertuples(index=False):
        by_answer.setdefault((system, labeller, uid), {})[nugget_id] = label
    return [
        (system, labeller, uid, answer_scores(nuggets[uid], given, sentence_marks=marks.get((uid, system, labeller))))
        for (system, labeller, uid), given in by_answer.items()
    ]


@pytest.mark.parametrize(("seed", "keys_unique_in_study"), [(1, False), (2, False), (3, True)])
def test_the_whole_study_at_once_is_every_answer_scored_alone(seed, keys_unique_in_study):
    """Nugget keys repeated in every item ("n1") or unique across the study ("q3-n1")."""
    frame, nuggets, marks = _study(random.Random(seed), keys_unique_in_study=keys_unique_in_study)
    out = _per_answer(frame, nuggets, marks)
    expected = _one_by_one(frame, nuggets, marks)
    assert list(zip(out["system"], out["labeller"], out["item_uid"], strict=True)) == [e[:3] for e in expected]
    for row, (*_, scores) in zip(out.itertuples(index=False), expected, strict=True):
        for name in SCORE_NAMES:
            mine, theirs = getattr(row, name), scores[name]
            assert (math.isnan(mine) and theirs is None) or mine == theirs, (name, mine, theirs)
    # every kind of answer came up: no vital nugget, no avoid nugget, marks with and without sentences
    assert out["vital"].isna().any() and (out["avoid_hits"] == 0).any() and (out["avoid_hits"] > 0).any()
    assert out["avoid_hits"].notna().all()  # a count: an item without avoid nuggets has 0 hits
    assert out["precision"].notna().any() and out["precision"].isna().any()
    assert list(out.columns) == ["system", "labeller", "item_uid", *SCORE_NAMES]


def test_refusals_name_the_nugget_and_the_label():
    nuggets = {"q1": [Nugget("n1", "fact", "vital")]}
    bad_nugget = pd.DataFrame(
        [("q1", "a", "n9", "support", "P1")], columns=["item_uid", "system", "nugget_id", "label", "labeller"]
    )
    with pytest.raises(ValueError, match="'n9', which is not one of this item's nuggets"):
        _per_answer(bad_nugget, nuggets, {})
    bad_label = bad_nugget.assign(nugget_id="n1", label="maybe")
    with pytest.raises(ValueError, match="'maybe' is not one of"):
        _per_answer(bad_label, nuggets, {})
    with pytest.raises(ValueError, match="importance 'urgent'"):
        _per_answer(bad_label.assign(label="support"), {"q1": [Nugget("n1", "fact", "urgent")]}, {})
    assert _per_answer(bad_nugget.iloc[:0], nuggets, {}).empty
