"""A vetting round simulated through the portal's own services, to hold what the release estimate
(:mod:`annotation.services.release_quality`) claims against a truth the portal never sees.

The round is made as an organizer would make one: items imported from a ClinIQLink file (uids unique to the run, so
runs can share a database), a few of them made gold through the gold service (half of them planted errors), reviewers
and adjudicators admitted through the people service, the vetting settings changed through their service. Then it is
driven as people drive it (the order of :mod:`demo.activity`): each reviewer in turn asks the queue for an item and
submits a review, and the adjudicators decide whatever waits for them, until nobody is handed anything and nothing
waits. A reviewer gives the item's truth with their own accuracy, drawn once, and the other verdict otherwise; an
adjudicator the same with theirs. The reliability model is refitted after every batch of reviews, as the periodic task
does. A release is then frozen and the run's own items are counted in it.

The truth of each item is kept here only. The estimate of the wrong items released is computed from the judgements
alone, over this run's items and judgements (so that runs sharing a database do not mix their reviewers' worlds).

The run changes the vetting settings of the whole database and expects a review queue that holds its items only (a
throwaway or a test database): its batch is put first, and an item of another batch, should the queue hand one out,
is given back and that reviewer stops.
"""

from __future__ import annotations

import json
import math
import random
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db.models import Max

from annotation.models import (
    Adjudication,
    Assignment,
    GoldAnswer,
    GoldItem,
    ImportBatch,
    QAItem,
    Release,
    Review,
    VettingConfig,
)
from annotation.qa_types import CLINIQLINK_FILES
from annotation.second_review import Policy
from annotation.services.adjudication import item_adjudicate
from annotation.services.gold import gold_mark
from annotation.services.imports import items_import
from annotation.services.queue import GiveBackReason, assignment_give_back, assignment_next
from annotation.services.release_quality import items_wrong_estimate
from annotation.services.releases import release_freeze
from annotation.services.reliability import reliability_fit
from annotation.services.review import review_submit
from annotation.services.vetting_config import batch_update, vetting_config_update
from annotation.workflow import ItemStatus, Stage, Verdict
from portal.errors import DomainError
from portal.models import User
from portal.roles import Role
from portal.services import person_admit

POLICIES = tuple(Policy.values)
#: The share of the items made gold (2 to 5 % is usual), at least two: one correct, one planted error.
GOLD_SHARE = 0.03
ADJUDICATORS = 2
SAMPLE = Path(settings.BASE_DIR) / "fixtures" / "cliniqlink-sample"
RELEVANCE: dict[str, int] = {Verdict.CORRECT: 5, Verdict.INCORRECT: 4}


@dataclass(frozen=True)
class SimulationSettings:
    """One round: ``items`` to vet (the gold comes on top), of which a ``wrong_share`` is truly wrong; ``reviewers``
    with accuracies uniform in ``accuracy`` (low, high); the ``second_share`` and ``policy`` to set; ``seed`` for every
    draw here (the database's ids and the run's tag make two runs differ all the same)."""

    items: int
    reviewers: int
    wrong_share: float
    accuracy: tuple[float, float]
    second_share: float
    policy: str
    seed: int
    adjudicator_accuracy: float = 0.98


@dataclass
class _Round:
    """What the simulation knows and the portal does not: each item's truth and each person's accuracy."""

    settings: SimulationSettings
    tag: str
    rng: random.Random
    organizer: User
    batch_id: int
    truth: dict[int, str]  # item id -> true verdict (gold items: their expected verdict)
    gold_ids: set[int]
    accuracy: dict[int, float]  # person id -> chance of giving the truth
    reviewers: list[User]
    adjudicators: list[User]
    stopped: set[int] = field(default_factory=set)  # reviewers handed an item of another batch
    reviews_since_fit: int = 0


def simulate_vetting(config: SimulationSettings) -> dict:
    """Run one simulated vetting round on the configured database and report it (see the module's docstring):
    ``{"policy", "items", "gold_items", "reviews", "second_reviews", "adjudications", "judgements", "gold_answers",
    "released", "wrong_released", "unfinished", "release", "estimated_wrong_released": {"mean", "low", "high"}}``,
    every count over this run's items only."""
    rng = random.Random(config.seed)
    tag = f"sim-{config.seed}-{uuid.uuid4().hex[:8]}"
    run = _round_create(config, tag, rng)
    _drive(run)
    release = _freeze(run)
    return _report(run, release)


# -- setting the round up ----------------------------------------------------------------------------------------


def _round_create(config: SimulationSettings, tag: str, rng: random.Random) -> _Round:
    organizer = person_admit(email=f"{tag}-organizer@simulation.portal", institution=None, roles=[Role.ORGANIZER])
    _vetting_settings(config, tag, organizer)
    n_gold = max(2, math.ceil(GOLD_SHARE * config.items))
    truths = [Verdict.INCORRECT if rng.random() < config.wrong_share else Verdict.CORRECT for _ in range(config.items)]
    planted = [Verdict.INCORRECT if n % 2 else Verdict.CORRECT for n in range(n_gold)]
    batch_id, ids = _items_import(tag, config.items + n_gold, organizer)
    gold_ids = ids[config.items :]
    gold_items = QAItem.objects.in_bulk(gold_ids)
    for item_id, verdict in zip(gold_ids, planted, strict=True):
        gold_mark(item=gold_items[item_id], expected_verdict=verdict, by=organizer,
                  planted_error=verdict == Verdict.INCORRECT, note="Simulated gold item.")  # fmt: skip
    _batch_first(batch_id, organizer)
    reviewers = [_person(tag, f"reviewer-{n}", Role.REVIEWER) for n in range(config.reviewers)]
    adjudicators = [_person(tag, f"adjudicator-{n}", Role.ADJUDICATOR) for n in range(ADJUDICATORS)]
    low, high = config.accuracy
    accuracy = {person.pk: rng.uniform(low, high) for person in reviewers}
    accuracy.update({person.pk: config.adjudicator_accuracy for person in adjudicators})
    return _Round(
        settings=config,
        tag=tag,
        rng=rng,
        organizer=organizer,
        batch_id=batch_id,
        truth=dict(zip(ids, truths + planted, strict=True)),
        gold_ids=set(gold_ids),
        accuracy=accuracy,
        reviewers=reviewers,
        adjudicators=adjudicators,
    )


def _vetting_settings(config: SimulationSettings, tag: str, organizer: User) -> None:
    """Second share and policy through the settings' service; the run's tag seeds the second-review draw. The
    adaptive policy's uniform slice is part of the second share: lowered to it where the share is smaller."""
    changes: dict = {"seed": tag, "second_share": config.second_share, "second_review_policy": config.policy}
    if VettingConfig.load().uniform_share > config.second_share:
        changes["uniform_share"] = config.second_share
    vetting_config_update(by=organizer, **changes)


def _items_import(tag: str, n_items: int, organizer: User) -> tuple[int, list[int]]:
    """Import ``n_items`` items made from the public sample (every QA type in turn, uids ``<tag>-<n>``); returns the
    batch and the item ids in the file's order."""
    templates = [record for name in CLINIQLINK_FILES for record in json.loads((SAMPLE / name).read_text())]
    records = []
    for n in range(n_items):
        record = dict(templates[n % len(templates)])
        record["uid"] = f"{tag}-{n:06d}"
        record["question"] = f"{record['question']} (simulated item {n})"
        records.append(record)
    with tempfile.TemporaryDirectory(prefix="simulate-vetting-") as folder:
        path = Path(folder) / f"{tag}.json"
        path.write_text(json.dumps(records))
        result = items_import(paths=[path], user=organizer, batch_name=f"Simulation {tag}")
    if result.batch_id is None:  # every uid carries the run's tag: an import that created nothing is a broken run
        raise DomainError(f"the simulated items of {tag} were not imported", code="import_failed")
    by_uid = dict(QAItem.objects.filter(batch_id=result.batch_id).values_list("uid", "pk"))
    return result.batch_id, [by_uid[record["uid"]] for record in records]


def _batch_first(batch_id: int, organizer: User) -> None:
    top = ImportBatch.objects.exclude(pk=batch_id).aggregate(top=Max("priority"))["top"]
    if top is not None:
        batch_update(batch=ImportBatch.objects.get(pk=batch_id), by=organizer, priority=top + 1)


def _person(tag: str, name: str, role: Role) -> User:
    return person_admit(email=f"{tag}-{name}@simulation.portal", institution=None, roles=[role])


# -- driving it --------------------------------------------------------------------------------------------------


def _drive(run: _Round) -> None:
    """Passes over the reviewers in a shuffled order, one item each, then the adjudications; stops after a pass in
    which nobody was handed anything and nothing waited for an adjudicator."""
    while True:
        handed = 0
        order = [person for person in run.reviewers if person.pk not in run.stopped]
        run.rng.shuffle(order)
        for reviewer in order:
            handed += _review_one(run, reviewer)
        decided = _adjudicate_waiting(run)
        if not handed and not decided:
            return


def _review_one(run: _Round, reviewer: User) -> bool:
    """One "next" and its review (or gold answer); False when the queue handed the reviewer nothing of this run."""
    assignment = assignment_next(reviewer=reviewer, gold_draw=run.rng.random())
    if assignment is None:
        return False
    truth = _truth_of(run, assignment)
    if truth is None:
        assignment_give_back(assignment_id=assignment.pk, reviewer=reviewer, reason=GiveBackReason.OTHER,
                             note="A simulated reviewer takes only the simulation's items.")  # fmt: skip
        run.stopped.add(reviewer.pk)
        return False
    verdict = _judged(run, reviewer, truth)
    review_submit(
        assignment_id=assignment.pk,
        reviewer=reviewer,
        idempotency_key=assignment.idempotency_key,
        verdict=verdict,
        relevance=RELEVANCE[verdict],
    )
    if assignment.stage != Stage.GOLD:
        _count_review(run)
    return True


def _truth_of(run: _Round, assignment: Assignment) -> str | None:
    """The truth of the item handed out: the run's own, or a gold item's known verdict (the gold of an earlier run
    in the same database is offered too); None for another batch's item."""
    if assignment.item_id in run.truth:
        return run.truth[assignment.item_id]
    if assignment.stage == Stage.GOLD:
        return GoldItem.objects.values_list("expected_verdict", flat=True).get(item_id=assignment.item_id)
    return None


def _judged(run: _Round, person: User, truth: str) -> str:
    if run.rng.random() < run.accuracy[person.pk]:
        return truth
    return Verdict.CORRECT if truth == Verdict.INCORRECT else Verdict.INCORRECT


def _count_review(run: _Round) -> None:
    """Refit the reliability model after every ``RELIABILITY_REFIT_EVERY`` reviews, the periodic task's trigger
    (run here at once: a simulated round has no worker to queue the job for)."""
    run.reviews_since_fit += 1
    if run.reviews_since_fit >= settings.RELIABILITY_REFIT_EVERY:
        reliability_fit()
        run.reviews_since_fit = 0


def _adjudicate_waiting(run: _Round) -> int:
    """Decide every item of the run waiting for an adjudicator, the adjudicators in turn; returns how many."""
    waiting = QAItem.objects.filter(batch_id=run.batch_id, status=ItemStatus.IN_ADJUDICATION).order_by("pk")
    decided = 0
    for item in waiting:
        adjudicator = run.adjudicators[decided % len(run.adjudicators)]
        verdict = _judged(run, adjudicator, run.truth[item.pk])
        item_adjudicate(item=item, adjudicator=adjudicator, verdict=verdict, relevance=RELEVANCE[verdict],
                        reason="Simulated adjudication.")  # fmt: skip
        decided += 1
    return decided


# -- the release and the report ----------------------------------------------------------------------------------


def _freeze(run: _Round) -> Release | None:
    """A release by the benchmark's rule; None when nothing qualifies. No rule selects one batch, so in a shared
    database the release holds the other runs' qualifying items too: the report counts this run's only."""
    try:
        return release_freeze(name=f"Simulation {run.tag}", user=run.organizer,
                              note=f"Simulated vetting round {run.tag}.")  # fmt: skip
    except DomainError as refusal:
        if refusal.code == "empty_release":
            return None
        raise


def _report(run: _Round, release: Release | None) -> dict:
    items = QAItem.objects.filter(batch_id=run.batch_id, gold__isnull=True)
    released = list(
        release.items.filter(item__batch_id=run.batch_id).values_list("item_id", flat=True) if release else []
    )
    reviews = Review.objects.filter(item__in=items, stage__in=[Stage.PRIMARY, Stage.SECONDARY])
    adjudications = Adjudication.objects.filter(item__in=items).count()
    counts = {"reviews": reviews.count(), "second_reviews": reviews.filter(stage=Stage.SECONDARY).count()}
    estimate = items_wrong_estimate(released, label_item_ids=_judged_items(run), seed=run.settings.seed)
    return {
        "policy": run.settings.policy,
        "items": run.settings.items,
        "gold_items": len(run.gold_ids),
        **counts,
        "adjudications": adjudications,
        "judgements": counts["reviews"] + adjudications,
        "gold_answers": GoldAnswer.objects.filter(reviewer__in=run.reviewers).count(),
        "released": len(released),
        "wrong_released": sum(run.truth[item_id] == Verdict.INCORRECT for item_id in released),
        "unfinished": items.exclude(status__in=[ItemStatus.VERIFIED, ItemStatus.REJECTED]).count(),
        "release": release.label if release else None,
        "estimated_wrong_released": _interval(estimate),
    }


def _judged_items(run: _Round) -> list[int]:
    """The items whose judgements the estimate reads: the run's own, and the gold its reviewers answered."""
    answered: Iterable[int] = GoldAnswer.objects.filter(reviewer__in=run.reviewers).values_list(
        "gold__item_id", flat=True
    )
    return sorted(set(run.truth) | set(answered))


def _interval(estimate: dict | None) -> dict:
    if estimate is None:
        return {"mean": 0.0, "low": 0.0, "high": 0.0}
    return {key: round(estimate[key], 2) for key in ("mean", "low", "high")}
