"""What an organizer should do next, most urgent first: the organizer's home page lists these.

It sits at the top of the stack with the home page: it reads every app, calling their selectors rather than
restating their rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from annotation.models import Dispute, QAItem, ReleaseItem
from annotation.qa_types import DEFAULT_BENCHMARK, benchmark_label
from annotation.selectors.adjudication import adjudication_blocked, adjudication_waiting
from annotation.services.release_rules import SelectionRule
from annotation.workflow import ItemStatus
from portal.models import Job, User
from portal.roles import Role, can_adjudicate


@dataclass(frozen=True)
class NextStep:
    text: str
    url: str
    link_text: str
    key: str  # stable name for tests and styling


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def organizer_next_steps(user, *, now=None) -> list[NextStep]:
    """The organizer's open tasks in priority order (only those with something to do):
    failed jobs, items no adjudicator may decide, items waiting for adjudication, open disputes, items without an
    excerpt, items ready for a release no release holds, nobody to review."""
    now = now or timezone.now()
    steps: list[NextStep] = []

    failed = Job.objects.filter(status=Job.Status.FAILED, created_at__gte=now - timedelta(days=7))
    imports = failed.filter(kind__startswith="import_").count()
    others = failed.count() - imports
    if imports or others:
        parts = [_plural(imports, "import") if imports else "", _plural(others, "other job") if others else ""]
        steps.append(
            NextStep(
                f"{' and '.join(p for p in parts if p)} failed in the last 7 days.",
                f"{reverse('job_list')}?status=failed",
                "See what went wrong",
                "failed_jobs",
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
    missing = QAItem.objects.filter(passage__isnull=True).count()
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
