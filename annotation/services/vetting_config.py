"""Organizer settings of the vetting workflow: the singleton config, batch pause and priority."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from annotation.models import ImportBatch, VettingConfig
from annotation.second_review import Policy
from annotation.workflow import GOLD_MIN_ANSWERS_MAX, GOLD_MIN_ANSWERS_MIN, RELEVANCE_GAP_MAX, RELEVANCE_GAP_MIN
from portal.audit import audit_record
from portal.errors import DomainError
from portal.models import User

_FIELDS = (
    "seed", "second_share", "second_review_policy", "uniform_share", "adjudicate_above", "relevance_gap", "gold_rate",
    "gold_min_accuracy", "gold_min_answers",
)  # fmt: skip


def vetting_config_update(*, by: User, **changes: Any) -> VettingConfig:
    """Change vetting settings. Items already drawn keep their draw: the seed only affects later primary reviews."""
    unknown = set(changes) - set(_FIELDS)
    if unknown:
        raise DomainError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    if "second_review_policy" in changes and changes["second_review_policy"] not in Policy.values:
        raise DomainError(f"second_review_policy must be one of {', '.join(Policy.values)}", code="invalid_policy")
    for name in ("second_share", "uniform_share", "adjudicate_above", "gold_rate", "gold_min_accuracy"):
        if name in changes and not 0 <= float(changes[name]) <= 1:
            raise DomainError(f"{name} must be between 0 and 1", code="invalid_share")
    if "relevance_gap" in changes and not RELEVANCE_GAP_MIN <= int(changes["relevance_gap"]) <= RELEVANCE_GAP_MAX:
        raise DomainError(f"relevance_gap must be from {RELEVANCE_GAP_MIN} to {RELEVANCE_GAP_MAX}", code="invalid_gap")
    if "gold_min_answers" in changes and not (
        GOLD_MIN_ANSWERS_MIN <= int(changes["gold_min_answers"]) <= GOLD_MIN_ANSWERS_MAX
    ):
        raise DomainError(
            f"gold_min_answers must be from {GOLD_MIN_ANSWERS_MIN} to {GOLD_MIN_ANSWERS_MAX}", code="invalid_count"
        )
    if "seed" in changes and not str(changes["seed"]).strip():
        raise DomainError("the seed cannot be empty", code="invalid_seed")
    with transaction.atomic():
        config = VettingConfig.load()
        config = VettingConfig.objects.select_for_update().get(pk=config.pk)
        before = {f: getattr(config, f) for f in _FIELDS}
        if float(changes.get("uniform_share", config.uniform_share)) > float(
            changes.get("second_share", config.second_share)
        ):
            raise DomainError(
                "uniform_share cannot be more than second_share: the uniform slice is part of the second reviews",
                code="invalid_share",
            )
        for name, value in changes.items():
            setattr(config, name, value)
        config.updated_by = by
        config.save()
        audit_record(
            actor=by,
            obj=config,
            action="vetting_config_changed",
            before=before,
            after={f: getattr(config, f) for f in _FIELDS},
        )
    return config


def batch_update(
    *, batch: ImportBatch, by: User, paused: bool | None = None, priority: int | None = None
) -> ImportBatch:
    """Pause / resume a batch or set its priority (higher is reviewed first)."""
    before = {"paused": batch.paused, "priority": batch.priority}
    if paused is not None:
        batch.paused = bool(paused)
    if priority is not None:
        batch.priority = int(priority)
    batch.save(update_fields=["paused", "priority"])
    audit_record(
        actor=by,
        obj=batch,
        action="batch_updated",
        before=before,
        after={"paused": batch.paused, "priority": batch.priority},
    )
    return batch
