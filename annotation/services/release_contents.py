"""What a release (or a rule about to be frozen) holds, in words: the benchmarks there are to choose from, the
preview of a rule's items, and which export format holds which of a release's items.

The ClinIQLink export is the seven files of the ClinIQLink layout: it can hold only the seven ClinIQLink types,
so the items of other benchmarks (PromptCBLUE's "generic" items) in a release are only in the table exports.
That is said on the release page and in a README.txt inside every download, never left to be noticed.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from annotation.models import QAItem, Release
from annotation.qa_types import (
    CLINIQLINK_TYPES,
    DEFAULT_BENCHMARK,
    benchmark_label,
    qa_type_label,
)
from annotation.services.release_card import frozen_with_card
from annotation.services.release_rules import SelectionRule, rule_description
from annotation.services.releases import EXPORT_FORMATS

FORMAT_LABELS = {
    "cliniqlink": "ClinIQLink",
    "csv": "CSV",
    "parquet": "Parquet",
    "jsonl": "JSONL",
}
_CLINIQLINK_TYPE_VALUES = [t.value for t in CLINIQLINK_TYPES]


def benchmark_choices() -> list[tuple[str, str]]:
    """(stored name, label) of every benchmark with items, the default one first even before any import."""
    names = set(QAItem.objects.values_list("benchmark", flat=True).distinct()) | {DEFAULT_BENCHMARK}
    ordered = [DEFAULT_BENCHMARK] + sorted(names - {DEFAULT_BENCHMARK})
    return [(name, benchmark_label(name)) for name in ordered]


@dataclass
class SelectionPreview:
    """The items a rule selects now: how many, per benchmark and type, and the first few of them."""

    count: int
    by_type: list[tuple[str, int]]
    by_benchmark: list[tuple[str, int]]
    items: list[QAItem]

    @property
    def more(self) -> int:
        return self.count - len(self.items)


def selection_preview(selection: SelectionRule, *, limit: int = 25) -> SelectionPreview:
    items = selection.queryset()
    type_counts = dict(items.order_by().values_list("qa_type").annotate(n=Count("id")).values_list("qa_type", "n"))
    bench_counts = items.order_by().values_list("benchmark").annotate(n=Count("id")).values_list("benchmark", "n")
    order = _CLINIQLINK_TYPE_VALUES + sorted(set(type_counts) - set(_CLINIQLINK_TYPE_VALUES))
    return SelectionPreview(
        count=sum(type_counts.values()),
        by_type=[(qa_type_label(t), type_counts[t]) for t in order if t in type_counts],
        by_benchmark=sorted((benchmark_label(b), n) for b, n in bench_counts),
        items=list(items[:limit]),
    )


@dataclass
class ExportCoverage:
    """How many of a release's items one export format holds, and which benchmarks' items it leaves out."""

    fmt: str
    holds: int
    total: int
    left_out: list[tuple[str, int]]  # (benchmark label, items)
    files: list[tuple[str, str]]  # (file name, SHA-256) as recorded in the manifest at freeze

    @property
    def label(self) -> str:
        return FORMAT_LABELS.get(self.fmt, self.fmt)

    @property
    def complete(self) -> bool:
        return self.holds == self.total

    def sentence(self) -> str:
        if self.complete:
            return f"The {self.label} export holds all {self.total} items of the release."
        names = [FORMAT_LABELS[f] for f in EXPORT_FORMATS if f != self.fmt]
        others = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        missing = " and ".join(f"{n} {name} item{'s' if n != 1 else ''}" for name, n in self.left_out)
        return (
            f"The {self.label} export holds {self.holds} of the {self.total} items; {missing} "
            f"{'is' if self.total - self.holds == 1 else 'are'} only in the {others} exports "
            "(the ClinIQLink layout has no file for other benchmarks)."
        )


def release_coverage(release: Release) -> list[ExportCoverage]:
    """Per export format: how many of the release's items its files hold. Computed from the frozen rows, so it
    holds for releases frozen before the benchmark filter existed too."""
    total = release.item_count
    outside = (
        release.items.exclude(qa_type__in=_CLINIQLINK_TYPE_VALUES)
        .order_by()
        .values_list("item__benchmark")
        .annotate(n=Count("id"))
        .values_list("item__benchmark", "n")
    )
    left_out = sorted((benchmark_label(b), n) for b, n in outside)
    coverage = []
    for fmt in EXPORT_FORMATS:
        files = sorted(release.manifests.get(fmt, {}).items())
        if fmt == "cliniqlink":
            coverage.append(ExportCoverage(fmt, total - sum(n for _, n in left_out), total, left_out, files))
        else:
            coverage.append(ExportCoverage(fmt, total, total, [], files))
    return coverage


def export_readme(release: Release, fmt: str) -> str:
    """README.txt of a download: what the release is and what this format holds (the bytes of the data files
    are the manifest's; this file is not in the manifest, it only describes them)."""
    coverage = next(c for c in release_coverage(release) if c.fmt == fmt)
    lines = [
        f"Release {release.label}: {release.item_count} items, frozen {release.created_at:%Y-%m-%d %H:%M %Z}.",
        f"Rule: {rule_description(release.rule)}.",
        coverage.sentence(),
        *(
            ["nuggets.jsonl: the items' validated nuggets at freeze time, one line per item that has them."]
            if release.with_nuggets
            else []
        ),
        (
            "SHA256SUMS lists the data files and the evaluation card (CARD.md) with their SHA-256 (check with: "
            "sha256sum -c SHA256SUMS)."
            if frozen_with_card(release)
            else "SHA256SUMS lists the data files with their SHA-256 (check with: sha256sum -c SHA256SUMS)."
        ),
    ]
    return "\n".join(lines) + "\n"
