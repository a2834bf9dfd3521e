"""Setting up and opening / closing preference studies."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q

from annotation.models import QAItem, Release, ReleaseItem
from annotation.qa_types import QAType
from annotation.selectors.nuggets import validated_nuggets
from metrics.normalise import clean_response
from metrics.nuggets import split_sentences
from portal.actors import acting_user
from portal.audit import audit_record
from portal.errors import DomainError
from portal.models import User
from portal.numbers import whole_number
from ranking.models import (
    DEFAULT_TAG_SCALE,
    OVERLAP_MAX,
    OVERLAP_MIN,
    Study,
    StudyAnswer,
    StudyQuestion,
    System,
    SystemOutput,
)
from ranking.services.reference import reference_outputs_ensure, reference_system
from ranking.shuffle import sample_items
from ranking.signals import study_closed

_CHUNK = 2000


@dataclass
class StudyCreateResult:
    study: Study
    included: int
    excluded: int
    excluded_without_nuggets: int = 0

    def as_dict(self) -> dict:
        return {
            "study_id": self.study.pk,
            "name": self.study.name,
            "included": self.included,
            "excluded": self.excluded,
            "excluded_without_nuggets": self.excluded_without_nuggets,
        }

    def summary(self) -> str:
        """What the organizer is told after creating the study (page message, command output)."""
        text = (
            f"{self.included} question(s); {self.excluded} item(s) left out because a chosen system had no output "
            "for them"
        )
        if self.study.ask_nuggets:
            text += f"; {self.excluded_without_nuggets} item(s) left out because they have no validated nuggets"
        return text + "."


def _systems_resolve(systems: Iterable[System | int | str]) -> list[System]:
    resolved = []
    for entry in systems:
        if isinstance(entry, System):
            resolved.append(entry)
            continue
        # A whole number is an id ("7"), anything else a name; "¹" is a digit to str.isdigit but no number to int.
        number = whole_number(entry) if isinstance(entry, int) or str(entry).strip().isdecimal() else None
        lookup = {"pk": number} if number is not None else {"name": str(entry).strip()}
        system = System.objects.filter(**lookup).first()
        if system is None:
            raise DomainError(f"unknown system {entry!r}", code="unknown_system")
        resolved.append(system)
    if any(s.is_reference for s in resolved):
        raise DomainError("the reference is added with include_reference, not as a system", code="reference_system")
    if not resolved:
        raise DomainError("choose at least one system", code="no_systems")
    return list({s.pk: s for s in resolved}.values())


def _check_options(
    *,
    name: str,
    overlap: int,
    tag_scale: list[str],
    unblinding_rate: float,
    include_reference: bool,
    n_answers: int,
    qa_types: list[str],
    ask_ranking: bool,
    ask_nuggets: bool,
    ask_hallucination: bool = False,
    ask_harm: bool = False,
    ask_spans: bool = False,
) -> None:
    if not (ask_ranking or ask_nuggets or ask_spans):
        raise DomainError(
            "choose what rankers do: rank the answers, check them against the item's nuggets, mark hallucinated "
            "words, or any combination",
            code="nothing_asked",
        )
    if not name.strip():
        raise DomainError("the study needs a name")
    if Study.objects.filter(name=name.strip()).exists():
        raise DomainError(f"a study named {name.strip()!r} already exists", code="duplicate_name")
    if not OVERLAP_MIN <= overlap <= OVERLAP_MAX:
        raise DomainError(f"rankers per question must be from {OVERLAP_MIN} to {OVERLAP_MAX}")
    if len(tag_scale) < 2 or len(set(tag_scale)) != len(tag_scale) or not all(t.strip() for t in tag_scale):
        raise DomainError("the tag scale needs at least two different, non-empty tags")
    if not 0.0 <= unblinding_rate <= 1.0:
        raise DomainError("the unblinding check rate must lie between 0 and 1")
    if unblinding_rate > 0 and not include_reference:
        raise DomainError("the unblinding check needs the reference answer in the study")
    if not ask_ranking and (ask_hallucination or ask_harm):
        raise DomainError(
            "the hallucination and harm questions are part of the ranking form: also ask rankers to rank the answers",
            code="questions_need_ranking",
        )
    if ask_ranking and n_answers < 2:
        raise DomainError("a question needs at least two answers to rank: add a system or the reference")
    unknown = sorted(set(qa_types) - {t.value for t in QAType})
    if unknown:
        raise DomainError(f"unknown QA type(s): {', '.join(unknown)}")


def study_create(
    *,
    name: str,
    systems: list[System | int | str],
    qa_types: list[str] | None = None,
    sample_size: int | None = None,
    seed: int = 0,
    release_id: int | None = None,
    include_reference: bool = True,
    overlap: int = 3,
    ties_allowed: bool = False,
    tag_scale: list[str] | None = None,
    ask_hallucination: bool = False,
    ask_harm: bool = False,
    show_passage: bool = False,
    unblinding_rate: float = 0.0,
    guidelines: str = "",
    lease_seconds: int = 30 * 60,
    ask_ranking: bool = True,
    ask_nuggets: bool = False,
    ask_spans: bool = False,
    spans_by_character: bool = False,
    user: User | None = None,
) -> StudyCreateResult:
    """Create a study over the items matching the filter that have an output from every chosen system.

    ``ask_ranking``: rankers order the answers; ``ask_nuggets``: they label each answer against the item's
    validated nuggets and mark its wrong or unsupported sentences; ``ask_spans``: they mark each answer's
    hallucinated words (character spans into the frozen text; at least one of the three). A nugget study takes
    only items with a validated nugget list (the rest are counted in ``excluded_without_nuggets``), freezes that
    version on each question and each answer's sentences (:func:`metrics.nuggets.split_sentences`).

    Items are sampled with ``seed`` (``sample_size`` None: all). The answers' texts are frozen into
    :class:`StudyAnswer` rows (``<think>`` blocks removed, as the scorer does), so later re-imports of outputs do
    not change a running study. ``release_id`` restricts the items to that frozen release.
    """
    qa_types = list(qa_types or [])
    tag_scale = [t.strip() for t in (tag_scale or DEFAULT_TAG_SCALE)]
    chosen = _systems_resolve(systems)
    _check_options(
        name=name,
        overlap=overlap,
        tag_scale=tag_scale,
        unblinding_rate=unblinding_rate,
        include_reference=include_reference,
        n_answers=len(chosen) + int(include_reference),
        qa_types=qa_types,
        ask_ranking=ask_ranking,
        ask_nuggets=ask_nuggets,
        ask_hallucination=ask_hallucination,
        ask_harm=ask_harm,
        ask_spans=ask_spans,
    )
    if sample_size is not None and sample_size < 1:
        raise DomainError("the sample size must be at least 1 (or left empty for every item)")
    candidates = QAItem.objects.all()
    if qa_types:
        candidates = candidates.filter(qa_type__in=qa_types)
    if release_id is not None:
        if not Release.objects.filter(pk=release_id).exists():
            raise DomainError(f"no release with id {release_id}")
        candidates = candidates.filter(pk__in=ReleaseItem.objects.filter(release_id=release_id).values("item_id"))
    ids = [s.pk for s in chosen]
    eligible = list(
        candidates.annotate(n=Count("system_outputs", filter=Q(system_outputs__system_id__in=ids)))
        .filter(n=len(ids))
        .values_list("id", flat=True)
    )
    excluded = candidates.count() - len(eligible)
    nugget_sets: dict[int, int] = {}
    without_nuggets = 0
    if ask_nuggets:
        nugget_sets = _validated_nugget_sets(eligible)
        without_nuggets = len(eligible) - len(nugget_sets)
        eligible = [item_id for item_id in eligible if item_id in nugget_sets]
    picked = sample_items(eligible, size=sample_size, seed=seed)
    if not picked:
        if ask_nuggets:
            raise DomainError(
                "no item has both validated nuggets and an output from every chosen system "
                f"({excluded} item(s) lack an output, {without_nuggets} lack validated nuggets)",
                code="no_items",
            )
        raise DomainError(
            f"no item has an output from every chosen system ({excluded} item(s) matched the filter but lack one)",
            code="no_items",
        )
    with transaction.atomic():
        study = Study.objects.create(
            name=name.strip(),
            release_id=release_id,
            seed=seed,
            include_reference=include_reference,
            item_filter={"qa_types": qa_types, "sample_size": sample_size, "seed": seed},
            overlap=overlap,
            ties_allowed=ties_allowed,
            tag_scale=tag_scale,
            ask_hallucination=ask_hallucination,
            ask_harm=ask_harm,
            show_passage=show_passage,
            unblinding_rate=unblinding_rate,
            guidelines=guidelines,
            lease_seconds=lease_seconds,
            ask_ranking=ask_ranking,
            ask_nuggets=ask_nuggets,
            ask_spans=ask_spans,
            spans_by_character=spans_by_character,
            excluded_items=excluded,
            excluded_without_nuggets=without_nuggets,
            created_by=acting_user(user),
        )
        study.systems.set(chosen)
        answer_systems = list(chosen)
        if include_reference:
            reference_outputs_ensure(item_ids=picked)
            answer_systems.append(reference_system())
        # Answers are stored (and enter the keyed shuffle) in system-name order, so the reference is not always the
        # last one: the order before shuffling says nothing either.
        answer_systems.sort(key=lambda system: system.name)
        _questions_create(study=study, item_ids=picked, systems=answer_systems, nugget_sets=nugget_sets)
        audit_record(
            actor=user,
            obj=study,
            action="study_created",
            after={
                "included": len(picked),
                "excluded": excluded,
                "excluded_without_nuggets": without_nuggets,
                "ask_ranking": ask_ranking,
                "ask_nuggets": ask_nuggets,
                "ask_spans": ask_spans,
                "systems": [s.name for s in chosen],
                "include_reference": include_reference,
                "overlap": overlap,
            },
        )
    return StudyCreateResult(
        study=study, included=len(picked), excluded=excluded, excluded_without_nuggets=without_nuggets
    )


def _validated_nugget_sets(item_ids: list[int]) -> dict[int, int]:
    """{item id: id of its validated nugget set} (annotation's rule of which version studies use), for the items
    whose validated list has at least one nugget (a list with none has nothing to check an answer against)."""
    found: dict[int, int] = {}
    for start in range(0, len(item_ids), _CHUNK):
        sets = validated_nuggets(item_ids[start : start + _CHUNK]).items()
        found.update({item_id: s.pk for item_id, s in sets if s.nuggets.all()})  # prefetched: no query per set
    return found


def _questions_create(*, study: Study, item_ids: list[int], systems: list[System], nugget_sets: dict[int, int]) -> None:
    """Questions and their frozen answers; in a nugget study also the nugget version and each answer's sentences."""
    for start in range(0, len(item_ids), _CHUNK):
        chunk = item_ids[start : start + _CHUNK]
        questions = StudyQuestion.objects.bulk_create(
            [
                StudyQuestion(study=study, item_id=item_id, position=start + i, nugget_set_id=nugget_sets.get(item_id))
                for i, item_id in enumerate(chunk)
            ]
        )
        outputs = {
            (o.system_id, o.item_id): o
            for o in SystemOutput.objects.filter(item_id__in=chunk, system__in=systems).only(
                "id", "system_id", "item_id", "response"
            )
        }
        answers = [
            StudyAnswer(
                question=q,
                system=s,
                output=outputs[(s.pk, q.item_id)],
                text=clean_response(outputs[(s.pk, q.item_id)].response),
            )
            for q in questions
            for s in systems
        ]
        if study.ask_nuggets:
            for answer in answers:
                answer.sentences = split_sentences(answer.text)
        StudyAnswer.objects.bulk_create(answers)


def study_state_set(*, study: Study, state: str, user: User | None = None) -> Study:
    """Open or close a study (closed studies hand out no tasks and accept no submissions). Closing announces
    :data:`ranking.signals.study_closed` once it has committed."""
    if state not in Study.State.values:
        raise DomainError(f"unknown state {state!r}")
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.state != state:
            before = locked.state
            locked.state = state
            locked.save(update_fields=["state"])
            audit_record(actor=user, obj=locked, action="study_state", before={"state": before}, after={"state": state})
            if state == Study.State.CLOSED:
                transaction.on_commit(lambda: study_closed.send(sender=Study, study=locked, user=user))
    return locked
