"""The adaptive second review through the real review service: the uniform slice, the model's choice, early stop,
straight to adjudication, the fallback before the model knows a reviewer, the settings' checks, and the agreement
report that leaves the model's choices out. A fit with known figures is stored by hand so each case is decided by
hand-computed Bayes (tests/annotation/test_second_review.py holds the pure rule)."""

from __future__ import annotations

import pytest
from django.test import Client

from analytics.services.reports import report_vetting_agreement
from annotation.models import QAItem, VettingConfig
from annotation.models.reliability import ReliabilityFit, ReviewerReliability
from annotation.second_review import Policy, Reason
from annotation.services.queue import assignment_next
from annotation.services.vetting_config import vetting_config_update
from annotation.workflow import ItemStatus, second_review_selected
from portal.errors import DomainError

pytestmark = pytest.mark.django_db

PRIOR = {"correct": 0.8, "incorrect": 0.2, "cannot_tell": 0.0}
CAREFUL = {
    "correct": {"correct": 0.97, "incorrect": 0.03, "cannot_tell": 0.0},
    "incorrect": {"correct": 0.05, "incorrect": 0.95, "cannot_tell": 0.0},
    "cannot_tell": {"correct": 0.0, "incorrect": 0.0, "cannot_tell": 0.0},
}
CARELESS = {  # passes 60 % of wrong items; their "correct" is wrong 0.12 / 0.84 = 14 % of the time
    "correct": {"correct": 0.9, "incorrect": 0.1, "cannot_tell": 0.0},
    "incorrect": {"correct": 0.6, "incorrect": 0.4, "cannot_tell": 0.0},
    "cannot_tell": {"correct": 0.0, "incorrect": 0.0, "cannot_tell": 0.0},
}


def _fit(figures: dict, *, threshold: float) -> ReliabilityFit:
    fit = ReliabilityFit.objects.create(
        labels=list(PRIOR), prior=PRIOR, prior_by_type={}, n_items=100, n_labels=200, n_reviews_seen=200,
        iterations=10, window=50, seconds=0.1, adaptive_threshold=threshold,
    )  # fmt: skip
    for person, confusion in figures.items():
        ReviewerReliability.objects.create(
            fit=fit, person=person, n_labels=100, accuracy=0.9, accuracy_low=0.8, accuracy_high=0.95,
            confusion=confusion,
        )  # fmt: skip
    return fit


def _adaptive(config, *, uniform_share=0.0, second_share=0.45, adjudicate_above=1.0):
    """The adaptive policy; by default here a picked item goes to a second reviewer (``adjudicate_above`` 1)."""
    config.second_review_policy, config.uniform_share, config.second_share = (
        Policy.ADAPTIVE,
        uniform_share,
        second_share,
    )
    config.adjudicate_above = adjudicate_above
    config.save()


def _first(review, reviewer, verdict="correct"):
    lease = assignment_next(reviewer=reviewer)
    review(lease, verdict, 5 if verdict == "correct" else 2)
    return QAItem.objects.get(pk=lease.item_id)


def test_a_careless_reviewers_pass_is_read_twice_and_a_careful_ones_is_decisive(
    sample_items, config, make_user, review
):
    careful, careless = make_user("reviewer"), make_user("reviewer")
    _adaptive(config)
    _fit({careful: CAREFUL, careless: CARELESS}, threshold=0.1)  # careful "correct": 0.01 / 0.786 = 1.3 %
    trusted = _first(review, careful)
    assert trusted.status == ItemStatus.VERIFIED  # early stop: no second reading
    assert (trusted.second_review, trusted.second_review_reason) == (False, "")
    doubted = _first(review, careless)  # careless "correct": 0.12 / 0.84 = 14 % likely wrong
    assert doubted.status == ItemStatus.IN_SECOND_REVIEW
    assert (doubted.second_review, doubted.second_review_reason) == (True, Reason.MODEL)


def test_a_verdict_more_likely_wrong_than_right_goes_straight_to_an_adjudicator(
    sample_items, config, make_user, review
):
    careless = make_user("reviewer")
    _adaptive(config, adjudicate_above=0.5)
    _fit({careless: CARELESS}, threshold=0.04)
    # careless "incorrect": 0.8·0.1 / (0.8·0.1 + 0.2·0.4) = 0.5 likely wrong; as a rejection it risks the release
    # EXCLUSION_WEIGHT · 0.5 = 0.05, above the threshold
    item = _first(review, careless, verdict="incorrect")
    assert item.status == ItemStatus.IN_ADJUDICATION and item.second_review_reason == Reason.ADJUDICATION
    adjudicator = make_user("adjudicator")
    client = Client()
    client.force_login(adjudicator)
    page = client.get("/adjudicate/").content.decode()
    assert "The reliability model doubts the first verdict" in page


def test_by_default_every_picked_item_goes_straight_to_an_adjudicator(sample_items, config, make_user, review):
    careful, careless = make_user("reviewer"), make_user("reviewer")
    _adaptive(config, adjudicate_above=VettingConfig._meta.get_field("adjudicate_above").default)
    _fit({careful: CAREFUL, careless: CARELESS}, threshold=0.1)
    doubted = _first(review, careless)  # careless "correct": 14 % likely wrong, picked
    assert doubted.status == ItemStatus.IN_ADJUDICATION
    assert (doubted.second_review, doubted.second_review_reason) == (False, Reason.ADJUDICATION)
    assert _first(review, careful).status == ItemStatus.VERIFIED  # not picked: decisive as before


def test_the_uniform_slice_is_read_twice_whatever_the_model_says(sample_items, config, make_user, review):
    careful = make_user("reviewer")
    _adaptive(config, uniform_share=1.0, second_share=1.0)
    _fit({careful: CAREFUL}, threshold=0.9)
    item = _first(review, careful)
    assert item.status == ItemStatus.IN_SECOND_REVIEW and item.second_review_reason == Reason.UNIFORM


def test_before_the_model_knows_a_reviewer_the_uniform_share_is_drawn(sample_items, config, make_user, review):
    newcomer = make_user("reviewer")
    _adaptive(config, uniform_share=0.0, second_share=0.45)
    results = [_first(review, newcomer) for _ in range(12)]  # no fit at all yet
    for item in results:
        drawn = second_review_selected(seed=config.seed, uid=item.uid, share=0.45)
        assert item.second_review == drawn
        assert item.second_review_reason == (Reason.NO_MODEL if drawn else "")
    assert any(item.second_review for item in results) and not all(item.second_review for item in results)


def test_the_uniform_policy_draws_as_before(sample_items, config, make_user, review):
    reviewer = make_user("reviewer")
    _fit({reviewer: CARELESS}, threshold=0.0)  # a fit changes nothing under the uniform policy
    for _ in range(10):
        item = _first(review, reviewer)
        drawn = second_review_selected(seed=config.seed, uid=item.uid, share=config.second_share)
        assert item.second_review == drawn and item.second_review_reason == (Reason.UNIFORM if drawn else "")


def test_the_settings_refuse_a_uniform_slice_larger_than_the_second_share_and_unknown_policies(config, organizer):
    with pytest.raises(DomainError, match="uniform_share cannot be more than second_share"):
        vetting_config_update(by=organizer, second_review_policy="adaptive", uniform_share=0.5, second_share=0.4)
    with pytest.raises(DomainError, match="second_review_policy must be one of"):
        vetting_config_update(by=organizer, second_review_policy="clever")
    config = vetting_config_update(by=organizer, second_review_policy="adaptive", uniform_share=0.1)
    assert config.second_review_policy == "adaptive" and config.uniform_share == 0.1


def test_the_agreement_report_measures_agreement_on_random_draws_only(sample_items, config, make_user, review):
    careless, second = make_user("reviewer"), make_user("reviewer")
    _adaptive(config)
    _fit({careless: CARELESS}, threshold=0.1)
    doubted = _first(review, careless)
    assert doubted.second_review_reason == Reason.MODEL
    lease = assignment_next(reviewer=second)
    assert lease.item_id == doubted.pk
    review(lease, "incorrect", 2)  # a disagreement, on an item chosen for being doubtful
    result = report_vetting_agreement(n_resamples=50)
    assert result["sample"]["items_left_out"] == 1 and "left out" in result["sample"]["text"]
    assert result["overall"]["n_reviews"] == 0  # the doubted item's two reviews are not in the figures
