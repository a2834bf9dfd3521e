"""What every automatic labeller of a study shares: the rule for a judge's name and the summary of an import.

A *judge* is a model whose labels or scores an organizer imports (nugget labels, per-answer scores, span
detections); the portal's own labellers are the *matcher* and the *consensus*. See docs/architecture.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from evaluation.nuggets import CONSENSUS, MATCHER

#: A judge's name: shown on pages and used in report keys, so plain characters only (no "/" or ":").
JUDGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._()+-]{0,99}")
#: The physicians' pseudonyms look like this ("annotator-1a2b3c4d"): a judge may not pass for one.
PSEUDONYM = re.compile(r"annotator-[0-9a-f]{8}")


@dataclass(frozen=True)
class JudgeImport:
    """What an import of a judges file did: per judge, how many labels (or scores) it stored, and how many earlier
    ones of those judges it replaced. Both judge imports (nugget labels here, per-answer scores in
    :mod:`analytics.judges.scores`) report with it."""

    file: str
    counts: dict[str, int]
    replaced: int
    unit: str = "labels"

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def summary(self) -> str:
        """ "good-llm (12 scores), lengthy (12 scores); 12 earlier scores of these judges replaced"."""
        judges = ", ".join(f"{judge} ({self.count_text(n)})" for judge, n in self.counts.items())
        return judges + (
            f"; {self.count_text(self.replaced, 'earlier ')} of these judges replaced" if self.replaced else ""
        )

    def count_text(self, n: int, adjective: str = "") -> str:
        """ "1 score", "12 earlier scores": the unit is plural ("labels", "scores")."""
        return f"{n:,} {adjective}{self.unit if n != 1 else self.unit.removesuffix('s')}"


def judge_name_problem(judge: str, pseudonyms: set[str], reserved: Iterable[str] = (MATCHER, CONSENSUS)) -> str | None:
    """Why ``judge`` cannot name an imported judge (None: it can). The one rule for judge names, labels and scores
    alike: not a name the portal keeps for its own labellers or metrics (``reserved``), not a physician's pseudonym,
    plain characters only (names appear on pages and in report keys)."""
    if judge in reserved:
        return f"the judge name {judge!r} is reserved for the portal's own labels or metrics"
    if judge in pseudonyms or PSEUDONYM.fullmatch(judge):
        return f"the judge name {judge!r} is a physician's pseudonym; name the judge otherwise"
    if not JUDGE_NAME.fullmatch(judge):
        return f"the judge name {judge!r} may hold only letters, digits, spaces and . _ ( ) + - (up to 100)"
    return None
