"""How many items of a release are probably wrong: the vetting labels as the reliability model reads them
(:func:`annotation.services.reliability.vetting_labels`), and :func:`stats.release_error.wrong_items_estimate` over
the release's items.

The estimate reads every judgement in the database by default, not only those on the release's items: a reviewer's
rate of passing wrong items is learnt from everything they reviewed, and the items that were reviewed twice or
adjudicated, whether released or not, are where it shows. Adjudications are the model's seniors; gold answers
anchor it. A release item that nobody judged (an item marked verified outside vetting) cannot be estimated and is
counted apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from annotation.models import Release, ReleaseItem
from annotation.services.reliability import LABELS, WRONG, vetting_labels
from stats.bootstrap import DEFAULT_SEED
from stats.release_error import wrong_items_estimate


def release_wrong_estimate(release: Release) -> dict | None:
    """The number of ``release``'s items whose true verdict is "incorrect": ``{"mean", "low", "high", "items",
    "method"}`` (95 % interval; ``items``: the release items estimated over), with ``"unjudged"`` when some release
    items carry no judgement. None when there are no vetting labels."""
    item_ids = ReleaseItem.objects.filter(release=release).values_list("item_id", flat=True)
    return items_wrong_estimate(list(item_ids))


def items_wrong_estimate(
    item_ids: Iterable[int], *, label_item_ids: Iterable[int] | None = None, seed: int = DEFAULT_SEED
) -> dict | None:
    """As :func:`release_wrong_estimate`, over the items ``item_ids`` (QAItem ids), from the judgements on
    ``label_item_ids`` only when given (a simulated round read apart from the rest of the database)."""
    data = vetting_labels(item_ids=label_item_ids)
    if not data.n_items:
        return None
    code = {item_id: n for n, item_id in enumerate(data.item_ids)}
    wanted = set(item_ids)
    estimated = [code[item_id] for item_id in wanted if item_id in code]
    seniors = [n for n, (_, as_adjudicator) in enumerate(data.worker_keys) if as_adjudicator]
    result = wrong_items_estimate(
        data.items,
        data.workers,
        data.labels,
        n_items=data.n_items,
        n_workers=data.n_workers,
        n_labels=len(LABELS),
        released=estimated,
        wrong_label=WRONG,
        true_labels=data.gold,
        seniors=seniors,
        seed=seed,
    )
    if len(estimated) < len(wanted):
        result["unjudged"] = len(wanted) - len(estimated)
    return result
