"""Writing reviewer guidelines: a new version (never an overwrite), the shipped defaults, acknowledgements."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from annotation.guideline_defaults import DEFAULT_CHANGE_NOTE, default_guidelines
from annotation.models import GuidelineAcknowledgement, GuidelineVersion
from annotation.qa_types import QAType
from annotation.selectors.guidelines import (
    guideline_current,
    guideline_set_signature,
    guidelines_current_set,
    type_label,
)
from portal.audit import audit_record
from portal.errors import Conflict, DomainError
from portal.models import User
from portal.parsers import refused_character

TEXT_MAX_CHARS = 50_000
BENCHMARK_MAX_CHARS = 40


def guideline_version_create(
    *, benchmark: str, qa_type: str, text: str, author: User, change_note: str = "", based_on: int | None = None
) -> GuidelineVersion:
    """Store a new version of the guideline of (``benchmark``, ``qa_type``) with the next number.

    ``based_on`` is the version number the author started from (0: there was none): if someone saved another
    version meanwhile, nothing is stored and the author is told, so nobody's text silently replaces another's.
    The same text as the current version is refused too (a version must change something)."""
    benchmark, text, change_note = benchmark.strip(), text.replace("\r\n", "\n").strip(), change_note.strip()
    if (
        not benchmark
        or len(benchmark) > BENCHMARK_MAX_CHARS
        or not benchmark.replace("-", "").replace("_", "").isalnum()
    ):
        raise DomainError("benchmark: letters, digits, - and _ only, at most 40 characters", code="invalid_benchmark")
    if qa_type not in QAType.__members__.values():
        raise DomainError(f"QA type: unknown type “{qa_type}”", code="invalid_qa_type")
    if not text:
        raise DomainError("text: write the guideline (it is empty)", code="invalid_text")
    if len(text) > TEXT_MAX_CHARS:
        raise DomainError(f"text: at most {TEXT_MAX_CHARS:,} characters", code="invalid_text")
    if len(change_note) > 300:
        raise DomainError("change note: at most 300 characters", code="invalid_change_note")
    for field, value in (("text", text), ("change note", change_note)):
        if why := refused_character(value):
            raise DomainError(f"{field}: {why}", code="invalid_text")
    try:
        with transaction.atomic():
            current = guideline_current(benchmark=benchmark, qa_type=qa_type)
            number = current.number if current else 0
            if based_on is not None and based_on != number:
                if current is None:
                    # A form from another benchmark's page, or edited by hand: there is nothing it could be based on.
                    raise Conflict(
                        f"This guideline has no version {based_on} (it has none yet); nothing was stored. Your text is "
                        "still in the form: save it again to make it version 1.",
                        code="guideline_changed",
                    )
                raise Conflict(
                    f"Version {number} of this guideline was saved by {current.author_label} while you were writing; "
                    "nothing was stored. Your text is still in the form: compare it with the new version and save "
                    "again.",
                    code="guideline_changed",
                )
            if current and current.text.strip() == text:
                raise DomainError(f"text: identical to version {number}; nothing to store", code="guideline_unchanged")
            version = GuidelineVersion.objects.create(
                benchmark=benchmark,
                qa_type=qa_type,
                number=number + 1,
                text=text,
                change_note=change_note,
                author=author,
            )
            audit_record(
                actor=author,
                obj=version,
                action="guideline_version_created",
                after={"benchmark": benchmark, "qa_type": qa_type, "number": version.number},
            )
    except IntegrityError:
        # Two authors saved the same next number at the same moment: the unique constraint kept one of them.
        raise Conflict(
            f"Another version of the {type_label(qa_type)} guideline was saved at the same moment; nothing was "
            "stored. Reload and compare.",
            code="guideline_changed",
        ) from None
    return version


def guideline_defaults_ensure() -> int:
    """Store the shipped guideline as version 1 of every (benchmark, type) that has none yet; returns how many.

    Safe to call on every request that needs guidelines and from several processes at once (a pair stored by
    someone else meanwhile is skipped by the unique constraint). Existing guidelines are never touched."""
    defaults = default_guidelines()
    present = set(GuidelineVersion.objects.values_list("benchmark", "qa_type").distinct().order_by())
    missing = [pair for pair in defaults if pair not in present]
    if not missing:
        return 0
    created = GuidelineVersion.objects.bulk_create(
        [
            GuidelineVersion(benchmark=b, qa_type=t, number=1, text=defaults[(b, t)], change_note=DEFAULT_CHANGE_NOTE)
            for b, t in missing
        ],
        ignore_conflicts=True,
    )
    return len(created)


def guideline_set_acknowledge(*, reviewer: User, signature: str | None = None) -> GuidelineAcknowledgement | None:
    """Record that ``reviewer`` read the current set of guidelines.

    ``signature`` names the set the page showed them: if a version was saved since, nothing is recorded and the
    reviewer is asked to read the new set (the caller shows it again)."""
    versions = guidelines_current_set()
    if not versions:
        return None
    current = guideline_set_signature(versions)
    if signature and signature != current:
        raise Conflict(
            "The guidelines changed while you were reading them. The new versions are marked below; please read "
            "them and confirm again.",
            code="guidelines_changed",
        )
    with transaction.atomic():
        ack, created = GuidelineAcknowledgement.objects.get_or_create(reviewer=reviewer, signature=current)
        if created:
            ack.versions.set(versions)
    return ack
