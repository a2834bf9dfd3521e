"""What makes a submitted ranking complete and consistent (pure, no Django).

The page's script applies the same rules before sending (so people see what is missing at once), but only this
module decides: a request that bypasses the page is checked here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

HALLUCINATION_KINDS = ("intrinsic", "extrinsic", "other")
# What each kind means, in the words the ranking page shows next to the choice (docs/design.md, ranking).
HALLUCINATION_KIND_MEANINGS = {
    "intrinsic": "contradicts the question or the source passage it was written from",
    "extrinsic": "adds a claim that the question and the source passage neither support nor contradict "
    "(cannot be verified from them), such as an invented study, dose or statistic",
    "other": "any other made-up content, e.g. an invented citation or guideline, or nonsense presented as fact",
}
UNBLINDING_NO_IDEA = "?"


@dataclass(frozen=True)
class FormRules:
    tag_scale: tuple[str, ...]
    ties_allowed: bool = False
    ask_hallucination: bool = False
    ask_harm: bool = False
    ask_unblinding: bool = False
    # Groups of slots whose answers are word for word the same: they may share a rank even without ties_allowed.
    identical: tuple[frozenset[str], ...] = ()


def identical_groups(texts: dict[str, str]) -> list[list[str]]:
    """Slots whose texts are the same once whitespace is trimmed and collapsed, in slot order ({slot: text})."""
    groups: dict[str, list[str]] = {}
    for slot, text in texts.items():
        groups.setdefault(" ".join(str(text).split()), []).append(slot)
    return [sorted(slots) for slots in groups.values() if len(slots) > 1]


@dataclass(frozen=True)
class SlotJudgement:
    slot: str
    rank: int
    tag: str
    hallucination: bool | None = None
    hallucination_kind: str = ""
    harm: bool | None = None


def _as_bool(value) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(value)


def ranking_check(
    *, slots: list[str], answers: dict, rules: FormRules, unblinding_guess: str = ""
) -> tuple[list[SlotJudgement], list[str]]:
    """Validate ``answers`` ({slot: {rank, tag, hallucination, hallucination_kind, harm}}) for the task's ``slots``.

    Returns the parsed judgements and a list of problems (empty when the ranking may be stored). Ranks run from
    1 (best). Without ties they must be exactly 1…n; with ties they must be dense (1, 1, 2 …: no gaps).
    """
    problems: list[str] = []
    if not isinstance(answers, dict):
        return [], ["answers must be an object keyed by answer letter"]
    unknown = sorted(set(answers) - set(slots))
    if unknown:
        problems.append(f"unknown answer(s): {', '.join(unknown)}")
    missing_rank = [s for s in slots if not isinstance(answers.get(s), dict) or answers[s].get("rank") in (None, "")]
    if missing_rank:
        problems.append(f"no rank for answer {', '.join(missing_rank)}")
    missing_tag = [s for s in slots if not isinstance(answers.get(s), dict) or not answers[s].get("tag")]
    if missing_tag:
        problems.append(f"no tag for answer {', '.join(missing_tag)}")
    parsed: list[SlotJudgement] = []
    n = len(slots)
    for slot in slots:
        entry = answers.get(slot)
        if not isinstance(entry, dict) or slot in missing_rank or slot in missing_tag:
            continue
        try:
            rank = int(entry["rank"])
        except (TypeError, ValueError):
            problems.append(f"answer {slot}: rank {entry['rank']!r} is not a whole number")
            continue
        if not 1 <= rank <= n:
            problems.append(f"answer {slot}: rank {rank} is outside 1–{n}")
            continue
        tag = str(entry["tag"])
        if tag not in rules.tag_scale:
            problems.append(f"answer {slot}: tag {tag!r} is not one of {', '.join(rules.tag_scale)}")
            continue
        hallucination, kind, harm = None, "", None
        try:
            if rules.ask_hallucination:
                hallucination = bool(_as_bool(entry.get("hallucination")))
            if rules.ask_harm:
                harm = bool(_as_bool(entry.get("harm")))
        except ValueError:
            problems.append(f"answer {slot}: hallucination and harm must be yes or no")
            continue
        if hallucination:
            kind = str(entry.get("hallucination_kind") or "")
            if kind not in HALLUCINATION_KINDS:
                problems.append(f"answer {slot}: say which kind of hallucination ({', '.join(HALLUCINATION_KINDS)})")
                continue
        parsed.append(SlotJudgement(slot, rank, tag, hallucination, kind, harm))
    if len(parsed) == n and not problems:
        problems.extend(_order_problems(parsed, ties_allowed=rules.ties_allowed, identical=rules.identical))
    problems.extend(unblinding_problems(slots=slots, asked=rules.ask_unblinding, guess=unblinding_guess))
    return parsed, problems


def unblinding_problems(*, slots: Sequence[str], asked: bool, guess: str) -> list[str]:
    """The unblinding check's answer, when the task asks it: a letter of the task, or "cannot tell"."""
    if asked and guess not in (*slots, UNBLINDING_NO_IDEA):
        return ["say which answer you think is the reference (or that you cannot tell)"]
    return []


def _order_problems(
    parsed: list[SlotJudgement], *, ties_allowed: bool, identical: tuple[frozenset[str], ...] = ()
) -> list[str]:
    by_rank: dict[int, list[str]] = {}
    for j in parsed:
        by_rank.setdefault(j.rank, []).append(j.slot)
    if not ties_allowed:
        # A tie is only accepted between answers that are word for word the same.
        dupes = [
            f"rank {r} given to {' and '.join(s)}"
            for r, s in sorted(by_rank.items())
            if len(s) > 1 and not any(set(s) <= group for group in identical)
        ]
        if dupes:
            return [f"ties are not allowed in this study: {'; '.join(dupes)}"]
    ranks = sorted(by_rank)
    if ranks != list(range(1, len(ranks) + 1)):
        return [f"ranks must run 1, 2, 3… without gaps (got {', '.join(map(str, ranks))})"]
    return []


def bottom_half(rank: int, n: int) -> bool:
    """Whether ``rank`` (1 = best) of ``n`` lies strictly in the lower half (the middle of an odd n does not)."""
    return rank > (n + 1) / 2


def reference_judged_poorly(judgements: Sequence[tuple[int, str]], *, n_answers: int, worst_tag: str) -> list[str]:
    """Why the physicians judged a question's reference answer poorly; empty when they did not.

    ``judgements`` holds one (rank, tag) of the reference answer per ranker who submitted the question, out of
    ``n_answers`` answers. The one rule behind the study page's flags and the study report's count of flagged
    questions: a *majority* of the rankers put the reference strictly in the bottom half (:func:`bottom_half`; one
    ranker's placement is an opinion, and the middle rank of an odd count is not "poor"), or *any* ranker gave it
    the worst tag of the scale (a physician calling the gold answer wrong is worth a second look on its own).
    """
    if not judgements:
        return []
    low = sum(bottom_half(rank, n_answers) for rank, _ in judgements)
    bad = sum(tag == worst_tag for _, tag in judgements)
    reasons = []
    if low * 2 > len(judgements):
        reasons.append(f"ranked in the bottom half by {low} of {len(judgements)} rankers")
    if bad:
        reasons.append(f"tagged {worst_tag!r} by {bad} of {len(judgements)} rankers")
    return reasons
