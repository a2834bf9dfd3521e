"""The selection rule of a release: which items it takes, checked the same way whatever the door (the releases page,
the API, the ``freeze_release`` command), described in words for pages, and turned into the query of the items."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from annotation.models import QAItem
from annotation.qa_types import QA_TYPE_LABELS, QAType, benchmark_label
from annotation.selectors.disputes import open_issue_q
from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, ItemStatus, Verdict
from portal.errors import DomainError


class RuleError(DomainError):
    """A selection rule parameter that is unknown or has a wrong value; ``field`` names it."""

    code = "invalid_rule"

    def __init__(self, field: str, reason: str):
        super().__init__(f"selection rule, field '{field}': {reason}")
        self.field = field
        self.reason = reason


def _shown(value: object) -> str:
    """A submitted value as the person wrote it (JSON), shortened for a message."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _choices_list(field: str, value: object, allowed: list[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError(field, f"must be a list of names, not {_shown(value)}")
    unknown = [v for v in value if v not in allowed]
    if unknown:
        raise RuleError(field, f"unknown value {_shown(unknown[0])}; use any of {', '.join(allowed)}")
    return list(value)


def _check_statuses(value: object) -> list[str]:
    return _choices_list("statuses", value, list(ItemStatus.values))


def _check_final_verdict(value: object) -> str | None:
    if value is None or (isinstance(value, str) and value in Verdict.values):
        return value
    raise RuleError("final_verdict", f"must be null (any) or one of {', '.join(Verdict.values)}, not {_shown(value)}")


def _check_min_relevance(value: object) -> float | None:
    if value is None:
        return None
    # bool is an int in Python: `true` must not silently mean a minimum relevance of 1.
    if isinstance(value, bool) or not isinstance(value, int | float) or not RELEVANCE_MIN <= value <= RELEVANCE_MAX:
        raise RuleError(
            "min_relevance",
            f"must be null (any) or a number from {RELEVANCE_MIN} to {RELEVANCE_MAX}, not {_shown(value)}",
        )
    return float(value)


def _check_exclude_open_issues(value: object) -> bool:
    if not isinstance(value, bool):
        raise RuleError("exclude_open_issues", f"must be true or false, not {_shown(value)}")
    return value


def _check_qa_types(value: object) -> list[str]:
    return _choices_list("qa_types", value, [t.value for t in QAType])


def _check_benchmark(value: object) -> str | None:
    if value is None or (isinstance(value, str) and 0 < len(value) <= 40):
        return value
    raise RuleError("benchmark", f"must be null (any) or a benchmark name (1 to 40 characters), not {_shown(value)}")


@dataclass
class SelectionRule:
    """Which items a release takes. The defaults are the benchmark's rule: verified correct, final GP
    relevance 5 (after adjudication), no open feedback or dispute. Gold items are never released.

    ``benchmark`` None means every benchmark: that is what rules stored before the filter existed meant, so the
    default stays None here (old releases keep their meaning); the releases page preselects one benchmark.

    :meth:`from_dict` is the one validation of a rule, whatever the door (releases page, API, command line):
    a wrong type, an unknown key or an out-of-range value is a :class:`RuleError` naming the field."""

    statuses: list[str] = field(default_factory=lambda: [ItemStatus.VERIFIED.value])
    final_verdict: str | None = Verdict.CORRECT.value
    min_relevance: float | None = 5.0
    exclude_open_issues: bool = True
    qa_types: list[str] = field(default_factory=list)
    benchmark: str | None = None

    @classmethod
    def from_dict(cls, data: dict | None) -> SelectionRule:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RuleError("rule", f"must be an object of parameters, not {_shown(data)}")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise RuleError(unknown[0], f"unknown parameter; the parameters are {', '.join(cls.__dataclass_fields__)}")
        return cls(**{name: _CHECKS[name](value) for name, value in data.items()})

    def describe(self) -> str:
        """The rule in words, for pages."""
        parts = [
            # Always said, either way: a release of one benchmark must not read like one of all of them.
            f"benchmark {benchmark_label(self.benchmark)} only" if self.benchmark else "all benchmarks",
            "status " + " or ".join(ItemStatus(s).label.lower() for s in self.statuses)
            if self.statuses
            else "any status",
            f"final verdict {Verdict(self.final_verdict).label.lower()}" if self.final_verdict else "any verdict",
            f"final GP relevance at least {self.min_relevance:g}"
            if self.min_relevance is not None
            else "any GP relevance",
            "items with open feedback or disputes held out"
            if self.exclude_open_issues
            else "items with open feedback or disputes included",
            "QA types " + ", ".join(QA_TYPE_LABELS[QAType(t)] for t in self.qa_types)
            if self.qa_types
            else "all QA types",
        ]
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def queryset(self) -> QuerySet[QAItem]:
        items = QAItem.objects.filter(gold__isnull=True)
        if self.statuses:
            items = items.filter(status__in=self.statuses)
        if self.final_verdict:
            items = items.filter(final_verdict=self.final_verdict)
        if self.min_relevance is not None:
            items = items.filter(final_relevance__gte=self.min_relevance)
        if self.qa_types:
            items = items.filter(qa_type__in=self.qa_types)
        if self.benchmark:
            items = items.filter(benchmark=self.benchmark)
        if self.exclude_open_issues:
            items = items.exclude(open_issue_q())
        return items.order_by("id")


# Each parameter's check: takes the stored JSON value, returns the checked one or raises RuleError.
_CHECKS: dict[str, Callable[[object], Any]] = {
    "statuses": _check_statuses,
    "final_verdict": _check_final_verdict,
    "min_relevance": _check_min_relevance,
    "exclude_open_issues": _check_exclude_open_issues,
    "qa_types": _check_qa_types,
    "benchmark": _check_benchmark,
}


def rule_description(rule: dict) -> str:
    """A stored rule in words; one stored before rules were checked, and no longer valid, is shown as stored."""
    try:
        return SelectionRule.from_dict(rule).describe()
    except RuleError:
        return f"as stored: {_shown(rule)}"
