"""A run split into slices (pass 1: the submission-wide state; pass 2: slices of items; pass 3: combined) gives
exactly the result of the run in one process, on every folder of fixtures/metric-reference."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from metrics import load_submission_dir, score_submission
from metrics.scorer import ScoringState, combine_slices, score_slice, scoring_state

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "metric-reference"
FOLDERS = sorted(p.name for p in REFERENCE.iterdir() if p.is_dir())


def _bounds(n: int, cuts: tuple[float, ...]) -> list[tuple[int, int]]:
    """Slices ``[start, stop)`` of ``n`` items cut at the given fractions (uneven on purpose)."""
    points = [0, *sorted({round(n * c) for c in cuts}), n]
    return list(zip(points, points[1:], strict=False))


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("cuts", [(), (0.5,), (0.2, 0.9), (0.01, 0.02, 0.6)], ids=["k1", "k2", "k3-uneven", "k4"])
def test_slices_combine_to_the_single_process_result(folder, cuts, encoder, text_metrics):
    sub = load_submission_dir(REFERENCE / folder)
    whole = score_submission(sub.inputs, sub.responses, encoder=encoder, text_metrics=text_metrics)

    # The state travels between workers as JSON: check the round trip is what the slices get.
    state = ScoringState.from_json(
        json.loads(json.dumps(scoring_state(sub.inputs, sub.responses, encoder=encoder).to_json()))
    )
    records = []
    for start, stop in _bounds(state.n_open, cuts):
        part = score_slice(sub.inputs, sub.responses, state, start, stop, encoder=encoder, text_metrics=text_metrics)
        assert len(part) == stop - start
        records += json.loads(json.dumps(part))  # as a slice row stores them
    split = combine_slices(sub.inputs, sub.responses, state, records, encoder=encoder, text_metrics=text_metrics)

    assert _same(split.item_rows(folder), whole.item_rows(folder))
    assert _same(split.summary, whole.summary)
    assert split.notes == whole.notes
    assert split.run == whole.run


def test_missing_slices_are_refused(encoder, text_metrics):
    sub = load_submission_dir(REFERENCE / FOLDERS[0])
    state = scoring_state(sub.inputs, sub.responses, encoder=encoder)
    part = score_slice(sub.inputs, sub.responses, state, 0, state.n_open // 2, encoder=encoder,
                       text_metrics=text_metrics)  # fmt: skip
    if state.n_open > 1:
        with pytest.raises(ValueError, match="slices hold"):
            combine_slices(sub.inputs, sub.responses, state, part)


def test_a_state_of_another_profile_is_refused(encoder, text_metrics):
    sub = load_submission_dir(REFERENCE / FOLDERS[0])
    state = scoring_state(sub.inputs, sub.responses, encoder=encoder)
    with pytest.raises(ValueError, match="profile"):
        score_slice(sub.inputs, sub.responses, state, 0, 1, profile="paper", encoder=encoder, text_metrics=text_metrics)


def test_the_state_is_small_and_names_the_baseline(encoder):
    sub = load_submission_dir(REFERENCE / FOLDERS[0])
    state = scoring_state(sub.inputs, sub.responses, encoder=encoder)
    data = state.to_json()
    assert set(data) == {"profile", "seed", "stopwords_version", "idf_answers", "idf_df", "idf_unseen", "baseline",
                         "baseline_source", "n_open"}  # fmt: skip
    assert data["profile"] == "cliniqlink-2025" and data["seed"] == 0
