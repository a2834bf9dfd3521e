"""What an organizer should do next, most urgent first: the organizer's home page lists these.

It sits at the top of the stack with the home page: it reads every app, calling their selectors rather than
restating their rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import PurePath

from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from annotation.models import Dispute, QAItem, ReleaseItem
from annotation.qa_types import DEFAULT_BENCHMARK, benchmark_label
from annotation.selectors.adjudication import adjudication_blocked, adjudication_waiting
from annotation.selectors.vetting import items_missing_excerpt
from annotation.services.release_rules import SelectionRule
from annotation.workflow import ItemStatus
from portal.job_kinds import job_kind_label
from portal.models import Job, User
from portal.roles import Role, can_adjudicate


@dataclass(frozen=True)
class FailedJob:
    """A failed job as the home page lists it, each with a way to open it and to dismiss it."""

    pk: str
    title: str
    files: tuple[str, ...]
    created_at: datetime

    @classmethod
    def of(cls, job: Job) -> FailedJob:
        return cls(str(job.pk), job_kind_label(job.kind), tuple(sorted(job_file_names(job))), job.created_at)


@dataclass(frozen=True)
class NextStep:
    text: str
    url: str
    link_text: str
    key: str  # stable name for tests and styling
    jobs: tuple[FailedJob, ...] = ()


FAILED_JOBS_DAYS = 7
FAILED_JOBS_LISTED = 5


def job_file_names(job: Job) -> frozenset[str]:
    """The names of the files a job read, as the person who uploaded them named them."""
    params = job.params if isinstance(job.params, dict) else {}
    displays = params.get("displays")
    if isinstance(displays, dict) and any(displays.values()):
        return frozenset(str(name) for name in displays.values() if name)
    if params.get("display"):  # jobs queued before several files were read at once
        return frozenset({str(params["display"])})
    paths = params.get("paths") or ([params["path"]] if params.get("path") else [])
    return frozenset(PurePath(str(p)).name for p in paths if p)


def failed_jobs_to_mention(*, now) -> list[Job]:
    """Failed jobs of the last days that an organizer has not yet taken note of, newest first.

    A job drops out once an organizer opened it from the home page or dismissed it there (``Job.dismissed_at``), and a
    failed import also once a later import of the same kind succeeded with every file it had failed on: the organizer
    put the file right, and the failure is history."""
    since = now - timedelta(days=FAILED_JOBS_DAYS)
    failed = list(
        Job.objects.filter(status=Job.Status.FAILED, created_at__gte=since, dismissed_at=None).order_by("-created_at")
    )
    imports = [job for job in failed if job.kind.startswith("import_")]
    if not imports:
        return failed
    succeeded = [
        (job.kind, job.created_at, job_file_names(job))
        for job in Job.objects.filter(
            status=Job.Status.SUCCEEDED,
            kind__in={job.kind for job in imports},
            created_at__gt=min(job.created_at for job in imports),
        ).only("kind", "created_at", "params")
    ]

    def redone(job: Job) -> bool:
        names = job_file_names(job)
        return bool(names) and any(
            kind == job.kind and created_at > job.created_at and names <= done for kind, created_at, done in succeeded
        )

    return [job for job in failed if not (job.kind.startswith("import_") and redone(job))]


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def organizer_next_steps(user, *, now=None) -> list[NextStep]:
    """The organizer's open tasks in priority order (only those with something to do):
    failed jobs not yet taken note of, items no adjudicator may decide, items waiting for adjudication, open disputes, items without an
    excerpt, items ready for a release no release holds, nobody to review."""
    now = now or timezone.now()
    steps: list[NextStep] = []

    failed = failed_jobs_to_mention(now=now)
    imports = sum(job.kind.startswith("import_") for job in failed)
    others = len(failed) - imports
    if imports or others:
        parts = [_plural(imports, "import") if imports else "", _plural(others, "other job") if others else ""]
        steps.append(
            NextStep(
                f"{' and '.join(p for p in parts if p)} failed in the last 7 days.",
                f"{reverse('job_list')}?status=failed",
                "See what went wrong",
                "failed_jobs",
                jobs=tuple(FailedJob.of(job) for job in failed[:FAILED_JOBS_LISTED]),
            )
        )

    blocked = adjudication_blocked().count()
    if blocked:
        steps.append(
            NextStep(
                f"{_plural(blocked, 'item')} wait{'s' if blocked == 1 else ''} for adjudication that no adjudicator "
                "may decide (every adjudicator reviewed them): give the adjudicator role to someone who has not.",
                reverse("people"),
                "People and roles",
                "adjudication_blocked",
            )
        )
    waiting = adjudication_waiting().count()
    if waiting:
        url = (
            reverse("adjudication_queue") if can_adjudicate(user) else f"{reverse('item_list')}?status=in_adjudication"
        )
        # One number, split the way "Items by status" beside it counts: held items with an open issue wait too.
        held = adjudication_waiting().filter(status=ItemStatus.HELD).count()
        split = (
            f": {waiting - held} in adjudication and {held} held with an open dispute or feedback note" if held else ""
        )
        steps.append(
            NextStep(
                f"{_plural(waiting, 'item')} wait{'s' if waiting == 1 else ''} for adjudication{split}.",
                url,
                "Open the adjudication queue" if can_adjudicate(user) else "See the items",
                "adjudication_waiting",
            )
        )
    disputes = Dispute.objects.filter(status=Dispute.Status.OPEN).count()
    if disputes:
        steps.append(
            NextStep(
                f"{_plural(disputes, 'dispute')} {'is' if disputes == 1 else 'are'} open.",
                f"{reverse('dispute_all')}?status=open",
                "Open disputes",
                "open_disputes",
            )
        )

    total = QAItem.objects.count()
    if not total:
        steps.append(NextStep("No items yet: import a benchmark.", reverse("import"), "Import items", "no_items"))
    missing = items_missing_excerpt().count()
    if missing:
        steps.append(
            NextStep(
                f"{_plural(missing, 'item')} {'has' if missing == 1 else 'have'} no source excerpt, so reviewers "
                "cannot check them against the textbook: import the source passages.",
                f"{reverse('vetting_dashboard')}#missing-excerpts",
                "See which",
                "missing_excerpts",
            )
        )

    ready = SelectionRule(benchmark=DEFAULT_BENCHMARK).queryset()
    unreleased = ready.exclude(pk__in=ReleaseItem.objects.values("item_id")).count()
    if unreleased:
        name = benchmark_label(DEFAULT_BENCHMARK)
        has_release = ReleaseItem.objects.exists()
        steps.append(
            NextStep(
                (f"{_plural(unreleased, f'{name} item')} passed vetting that no release holds yet: freeze a new version."
                 if has_release else
                 f"No release yet: {_plural(unreleased, f'{name} item')} passed vetting. Freeze one."),
                reverse("release_list"),
                "Freeze a release",
                "release",
            )
        )  # fmt: skip

    reviewers = Q(groups__name=Role.REVIEWER, is_active=True)
    if total and not User.objects.filter(reviewers).exists():
        steps.append(
            NextStep("Nobody can review yet: admit reviewers.", reverse("people"), "People and roles", "no_reviewers")
        )
    return steps
