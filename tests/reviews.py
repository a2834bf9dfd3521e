"""Finished reviews written straight to the database, for tests that need judgements but not the queue."""

from __future__ import annotations

from annotation.models import Assignment, Review


def done_review(item, who, stage: str, verdict: str, relevance: int, *, server_seconds: float = 12.5) -> Review:
    """A finished assignment of ``item`` to ``who`` at ``stage`` and its review."""
    assignment = Assignment.objects.create(
        item=item, reviewer=who, stage=stage, status="done", expires_at=item.created_at
    )
    return Review.objects.create(
        assignment=assignment,
        item=item,
        reviewer=who,
        stage=stage,
        verdict=verdict,
        relevance=relevance,
        server_seconds=server_seconds,
    )
