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
- Above ``threshold`` the item gets a second review; above ``ADJUDICATE_ABOVE`` (the first verdict is more likely
  wrong than right) it goes straight to an adjudicator: one senior judgement instead of a second review that
  would likely disagree and need the adjudicator anyway.
- Before the model knows the first reviewer (no fit yet, or too few of their labels), the item is drawn at the
  uniform rule's share: no worse than uniform.

``threshold`` is set at each fit by :func:`adaptive_threshold` so that the expected number of human judgements
(second reviews, plus the adjudications their disagreements and the straight referrals cause) is no more than the
uniform rule's at ``second_share``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import models

#: A first verdict more likely wrong than right goes straight to an adjudicator.
ADJUDICATE_ABOVE = 0.5
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


def choose(
    *,
    policy: str,
    uniform_draw: bool,
    share_draw: bool,
    error: float | None,
    threshold: float | None,
) -> Choice:
    """What happens after a primary review. ``uniform_draw``: the item is in the random slice of ``uniform_share``
    (adaptive) ; ``share_draw``: it is in the random ``second_share`` (the uniform rule, and the adaptive rule's
    fallback); ``error``: :func:`decision_error` for its first verdict, None when the model does not know the first
    reviewer; ``threshold``: the latest fit's, None before any fit."""
    if policy != Policy.ADAPTIVE:
        return Choice(share_draw, reason=Reason.UNIFORM if share_draw else "")
    if uniform_draw:
        return Choice(True, reason=Reason.UNIFORM)
    if error is None or threshold is None:
        return Choice(share_draw, reason=Reason.NO_MODEL if share_draw else "")
    if error >= ADJUDICATE_ABOVE:
        return Choice(False, straight_to_adjudication=True, reason=Reason.ADJUDICATION)
    if error >= threshold:
        return Choice(True, reason=Reason.MODEL)
    return Choice(False)


def adaptive_threshold(
    errors: np.ndarray, disagreements: np.ndarray, *, second_share: float, uniform_share: float
) -> float:
    """The lowest error threshold whose expected judgements stay within the uniform rule's.

    ``errors`` and ``disagreements`` are, per primary review the model knows, the chance its verdict decides the
    item wrongly and the chance a second reviewer would disagree with it. The uniform rule spends, per item,
    ``second_share`` second reviews plus their disagreements' adjudications; the adaptive rule spends the uniform
    slice's share of the same, one adjudication per item above :data:`ADJUDICATE_ABOVE`, and a second review plus
    its chance of disagreement per chosen item. Items are chosen from the most likely wrong down until the budget
    is spent. Returns ``inf`` when nothing beyond the slice fits the budget (then only the slice is read twice)."""
    errors = np.asarray(errors, dtype=float)
    disagreements = np.asarray(disagreements, dtype=float)
    if not len(errors):
        return float("inf")
    mean_disagreement = float(disagreements.mean())
    budget = second_share * (1.0 + mean_disagreement) - uniform_share * (1.0 + mean_disagreement)
    rest = 1.0 - uniform_share  # the items outside the slice, per item of all
    referred = errors >= ADJUDICATE_ABOVE
    budget -= rest * float(referred.mean())  # one adjudication each
    order = np.argsort(-np.where(referred, -np.inf, errors), kind="stable")
    candidates = order[~referred[order]]
    cost = rest * np.cumsum(1.0 + disagreements[candidates]) / len(errors)
    affordable = int(np.searchsorted(cost, budget, side="right"))
    if affordable == 0:
        return float("inf")
    return float(errors[candidates[affordable - 1]])
