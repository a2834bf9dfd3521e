"""Fixtures of the vetting tests: the sample items imported, a vetting config with a known seed."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sample_items(db):
    """The 35 ClinIQLink sample items with their passages, in one batch."""
    from annotation.models import QAItem
    from annotation.services.imports import items_import, sources_import

    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    return list(QAItem.objects.order_by("id"))


@pytest.fixture
def config(db):
    """Vetting settings with no gold mixing, so queue tests are deterministic."""
    from annotation.models import VettingConfig

    cfg = VettingConfig.load()
    cfg.seed, cfg.gold_rate, cfg.second_share, cfg.relevance_gap = "test-seed", 0.0, 0.45, 2
    cfg.save()
    return cfg


@pytest.fixture
def review():
    """Submit a review for an assignment: ``review(assignment, "correct", 5)``."""
    from annotation.services.review import review_submit

    def submit(assignment, verdict="correct", relevance=5, comment="", **kw):
        return review_submit(
            assignment_id=assignment.pk,
            reviewer=assignment.reviewer,
            idempotency_key=assignment.idempotency_key,
            verdict=verdict,
            relevance=relevance,
            comment=comment,
            **kw,
        )

    return submit


def share(cfg, value: float):
    cfg.second_share = value
    cfg.save()
