"""Which items get a second review (pure: no database).

**Uniform** (ClinIQLink's rule): a reproducible random share of items (``second_share``), whoever reviewed them
first. **Adaptive**: the second opinion goes where it is expected to change the release.

- A uniform slice stays: a reproducible random ``uniform_share`` of items is always read twice, whatever the model
  says, so that agreement between reviewers is measured on items nobody chose (the agreement report reads that
  slice only, and says so).
- Every other item is judged by the **chance that its first verdict decides it wrongly**, from the reliability
  model (``annotation.services.reliability``): the item's QA type's prior over the true verdict (its base rate of
  wrong items) and the first reviewer's confusion matrix on that type (their overall one while they have few
  labels of it). "correct" from a reviewer who often passes wrong items on a type with many of them is likely
  wrong; "correct" from a careful reviewer on a clean type is decisive and needs no second reading (early stop).
- Items are ranked by their **release risk**: the chance that the first verdict decides them wrongly, weighed by
  what a wrong decision does to the release. A "correct" that is wrong lets a wrong item into the benchmark, where
  it misleads every model scored on it; an "incorrect" or "cannot tell" that is wrong only keeps a good item out,
  so it weighs :data:`EXCLUSION_WEIGHT` as much. (Unweighted, a careless reviewer's "incorrect" verdicts, likely
  wrong on a mostly correct set, took the budget, and the second readings rescued good items instead of catching
  wrong ones: more items released, and more wrong ones among them, than the uniform rule.)
- Above ``threshold`` the item gets a second look, and the vetting settings' ``adjudicate_above`` says whose: an
  adjudicator's, straight, when the first verdict is at least that likely wrong, else a second reviewer's. Counted
  in human judgements, straight adjudication is the better buy whenever adjudicators are more accurate than a second
  reviewer: a second review catches a wrong first verdict only when it disagrees *and* the adjudicator then sides
  with it, and costs the second review plus, when they disagree, the adjudication; a straight referral costs one
  judgement and catches it at the adjudicator's accuracy. So by default (:data:`DEFAULT_ADJUDICATE_ABOVE` = 0) every
  item the model picks goes to an adjudicator; a team whose adjudicators are few raises it (0.5: only verdicts more
  likely wrong than right; 1: never, second reviewers read them all). The uniform slice is read by second
  reviewers either way: the agreement figures rest on it.
- Before the model knows the first reviewer (no fit yet, or too few of their labels), the item is drawn at the
  uniform rule's share: no worse than uniform.

``threshold`` is set at each fit by :func:`adaptive_threshold` so that the expected number of human judgements
(second reviews, plus the adjudications their disagreements cause, and the straight referrals) is no more than the
uniform rule's at ``second_share`` (with a margin, :data:`SPEND_SHARE`). A straight referral costs one judgement where a second review costs one plus its
chance of disagreement, so with referrals the same budget reads more items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import models

from annotation.workflow import Verdict

#: A picked first verdict at least this likely wrong goes straight to an adjudicator (the vetting settings'
#: ``adjudicate_above``, this by default: every picked item; see the module docstring).
DEFAULT_ADJUDICATE_ABOVE = 0.0
#: The weight of a first verdict that keeps the item out of the release, against one that lets it in (1).
EXCLUSION_WEIGHT = 0.1
#: The share of the uniform rule's expected judgements the adaptive rule plans to spend: the plan holds on average,
#: and a round's disagreements vary around it, so planning the whole budget let some rounds spend a little more than
#: the uniform rule did on the same items (up to 2 % in the simulation); the adaptive rule must never spend more.
SPEND_SHARE = 0.95
#: Labels a reviewer needs on a QA type before their confusion on that type is used (else their overall one).
MIN_TYPE_LABELS = 20
#: Labels a reviewer needs in a fit before the adaptive rule trusts their confusion at all.
MIN_LABELS = 10


class Policy(models.TextChoices):
    UNIFORM = "uniform", "Uniform: a random share of items"
    ADAPTIVE = "adaptive", "Adaptive: where a second opinion is expected to change the release"


class Reason(models.TextChoices):
    """Why an item was (or was not) read twice, stored on the item."""

    UNIFORM = "uniform", "drawn at random (the uniform slice)"
    MODEL = "model", "chosen by the reliability model"
    NO_MODEL = "no_model", "drawn at random (the model did not know the first reviewer yet)"
    ADJUDICATION = "adjudication", "sent straight to an adjudicator by the reliability model"


@dataclass(frozen=True)
class Threshold:
    """Where the adaptive rule's budget ends: items riskier than ``value`` are read twice, and of the items exactly at
    it (a tie: one reviewer's verdict on one QA type reads the same for all their items) a reproducible random
    ``tie_share``."""

    value: float
    tie_share: float = 0.0


@dataclass(frozen=True)
class Choice:
    second_review: bool
    straight_to_adjudication: bool = False
    reason: str = ""


def reader_confusion(
    overall: tuple[int, dict] | None, on_type: tuple[int, dict] | None
) -> dict[str, dict[str, float]] | None:
    """Which confusion matrix reads a first reviewer's verdict: theirs on the item's QA type once they have
    :data:`MIN_TYPE_LABELS` labels of it, else their overall one once they have :data:`MIN_LABELS`, else none
    (the model does not know them yet). Each argument is (labels, confusion) or None."""
    if on_type is not None and on_type[0] >= MIN_TYPE_LABELS:
        return on_type[1]
    if overall is not None and overall[0] >= MIN_LABELS:
        return overall[1]
    return None


def truth_given(first: str, prior: dict[str, float], confusion: dict[str, dict[str, float]]) -> dict[str, float] | None:
    """The item's true verdict after its first reviewer said ``first``: Bayes over the truths, P(truth = k) ·
    P(first | truth = k), from the QA type's ``prior`` and the reviewer's ``confusion[true][given]``. None when the
    model has never seen this reviewer give this verdict (nothing says how to read it)."""
    joint = {truth: prior.get(truth, 0.0) * confusion.get(truth, {}).get(first, 0.0) for truth in prior}
    total = sum(joint.values())
    if total <= 0:
        return None
    return {truth: weight / total for truth, weight in joint.items()}


def decision_error(first: str, prior: dict[str, float], confusion: dict[str, dict[str, float]]) -> float:
    """The chance that the item's true verdict is not ``first`` (1 when the verdict cannot be read)."""
    truth = truth_given(first, prior, confusion)
    return 1.0 if truth is None else 1.0 - truth.get(first, 0.0)


def disagreement_chance(
    first: str, prior: dict[str, float], confusion: dict[str, dict[str, float]], typical: dict[str, dict[str, float]]
) -> float:
    """The chance that a second reviewer reading as the ``typical`` one does gives another verdict than ``first``."""
    truth = truth_given(first, prior, confusion)
    if truth is None:
        return 1.0
    return 1.0 - sum(weight * typical.get(k, {}).get(first, 0.0) for k, weight in truth.items())


def release_risk(first: str, error: float) -> float:
    """What a first verdict's ``error`` (:func:`decision_error`) risks for the release: all of it when the verdict
    lets the item in, :data:`EXCLUSION_WEIGHT` of it when the verdict keeps the item out."""
    return error if first == Verdict.CORRECT else EXCLUSION_WEIGHT * error


def choose(
    *,
    policy: str,
    uniform_draw: bool,
    share_draw: bool,
    first: str,
    error: float | None,
    threshold: float | None,
    tie_draw: bool = False,
    adjudicate_above: float = DEFAULT_ADJUDICATE_ABOVE,
) -> Choice:
    """What happens after a primary review that said ``first``. ``uniform_draw``: the item is in the random slice of
    ``uniform_share`` (adaptive) ; ``share_draw``: it is in the random ``second_share`` (the uniform rule, and the
    adaptive rule's fallback); ``error``: :func:`decision_error` for its first verdict, None when the model does not
    know the first reviewer; ``threshold``: the latest fit's, on :func:`release_risk`, None before any fit;
    ``tie_draw``: the item is in the random share of the items exactly at the threshold (:class:`Threshold`);
    ``adjudicate_above``: a picked verdict at least this likely wrong goes straight to an adjudicator."""
    if policy != Policy.ADAPTIVE:
        return Choice(share_draw, reason=Reason.UNIFORM if share_draw else "")
    if uniform_draw:
        return Choice(True, reason=Reason.UNIFORM)
    if error is None or threshold is None:
        return Choice(share_draw, reason=Reason.NO_MODEL if share_draw else "")
    risk = release_risk(first, error)
    if risk < threshold or (risk == threshold and not tie_draw):
        return Choice(False)
    if error >= adjudicate_above:
        return Choice(False, straight_to_adjudication=True, reason=Reason.ADJUDICATION)
    return Choice(True, reason=Reason.MODEL)


def adaptive_threshold(
    risks: np.ndarray,
    errors: np.ndarray,
    disagreements: np.ndarray,
    *,
    second_share: float,
    uniform_share: float,
    adjudicate_above: float = DEFAULT_ADJUDICATE_ABOVE,
) -> Threshold:
    """Where the expected judgements of the items chosen reach the uniform rule's.

    ``risks``, ``errors`` and ``disagreements`` are, per primary review the model knows, its :func:`release_risk`,
    the chance its verdict decides the item wrongly and the chance a second reviewer would disagree with it. The
    uniform rule spends, per item, ``second_share`` second reviews plus their disagreements' adjudications
    (:data:`SPEND_SHARE` of it is planned); the
    adaptive rule spends the uniform slice's share of the same and, per item it chooses, one adjudication (a first
    verdict at least ``adjudicate_above`` likely wrong) or a second review plus its chance of disagreement. Items are chosen
    from the riskiest down until the budget is spent. Many items share a risk, so the budget usually ends inside a
    tie: the threshold is that tie's risk, and its ``tie_share`` the part of the tie that still fits (taking the
    whole tie could overspend by as many judgements as it holds; leaving it out, underspend as much). ``-inf``
    when every item fits."""
    risks = np.asarray(risks, dtype=float)
    errors = np.asarray(errors, dtype=float)
    disagreements = np.asarray(disagreements, dtype=float)
    if not len(risks):
        return Threshold(-float("inf"))
    mean_disagreement = float(disagreements.mean())
    budget = max(SPEND_SHARE * second_share - uniform_share, 0.0) * (1.0 + mean_disagreement)
    rest = 1.0 - uniform_share  # the items outside the slice, per item of all
    spend = np.where(errors >= adjudicate_above, 1.0, 1.0 + disagreements)
    order = np.argsort(-risks, kind="stable")
    cost = rest * np.cumsum(spend[order]) / len(risks)
    affordable = int(np.searchsorted(cost, budget, side="right"))
    if affordable == len(risks):
        return Threshold(-float("inf"))
    edge = float(risks[order[affordable]])
    in_tie = risks == edge
    taken = int(np.count_nonzero(risks[order[:affordable]] == edge))
    return Threshold(edge, taken / int(np.count_nonzero(in_tie)))
