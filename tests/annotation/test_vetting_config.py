"""The organizer's vetting settings: every range is checked by the service, whichever door the change comes through."""

from __future__ import annotations

import pytest

from annotation.models import VettingConfig
from annotation.services.vetting_config import vetting_config_update
from annotation.workflow import GOLD_MIN_ANSWERS_MAX, RELEVANCE_GAP_MAX
from portal.errors import DomainError


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"gold_min_answers": 0}, "from 1 to 1000"),
        ({"gold_min_answers": GOLD_MIN_ANSWERS_MAX + 1}, "from 1 to 1000"),
        ({"gold_min_answers": 70000}, "from 1 to 1000"),  # would not fit the column (a DataError, or wrapped)
        ({"relevance_gap": 0}, "from 1 to 4"),
        ({"relevance_gap": RELEVANCE_GAP_MAX + 1}, "from 1 to 4"),
        ({"second_share": 1.5}, "between 0 and 1"),
        ({"seed": "  "}, "cannot be empty"),
    ],
)
def test_out_of_range_settings_are_refused_and_nothing_changes(organizer, changes, message):
    before = VettingConfig.load()
    with pytest.raises(DomainError, match=message):
        vetting_config_update(by=organizer, **changes)
    after = VettingConfig.load()
    assert (after.gold_min_answers, after.relevance_gap, after.second_share, after.seed) == (
        before.gold_min_answers,
        before.relevance_gap,
        before.second_share,
        before.seed,
    )


def test_the_ends_of_each_range_are_accepted(organizer):
    config = vetting_config_update(by=organizer, gold_min_answers=GOLD_MIN_ANSWERS_MAX, relevance_gap=RELEVANCE_GAP_MAX)
    config.refresh_from_db()
    assert (config.gold_min_answers, config.relevance_gap) == (1000, 4)
