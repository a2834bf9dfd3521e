"""What analytics does when a lower layer announces something it cannot call analytics for (``ranking.signals``)."""

from __future__ import annotations

from analytics.models import SpanDetector
from analytics.nuggets.board import nugget_board_refresh
from analytics.nuggets.selectors import nugget_questions
from analytics.spans.detectors import span_leaderboard_refresh


def boards_after_close(sender, *, study, user=None, **kwargs) -> None:
    """A closed study's judgements are final: its stored boards (the nugget leaderboard, the detector leaderboard)
    are computed again from all of them, so the organizer opens current figures, not "changed since"."""
    if study.ask_nuggets and nugget_questions(study).exists():
        nugget_board_refresh(study=study, user=user)
    if study.ask_spans and SpanDetector.objects.filter(study=study).exists():
        span_leaderboard_refresh(study=study, user=user)
