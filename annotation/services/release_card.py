"""The evaluation card of a release (``CARD.md``): what a frozen release holds and how far its vetting can be
trusted, in the Hugging Face dataset-card layout (YAML front matter, then Markdown sections).

The card is written once, at freeze time, from what the freeze saw: the items, their reviews, the guideline
versions those reviews were made under and the release's own row. Its text is stored with the release
(``Release.report["card"]``, the figures it states under ``report["card_facts"]``) and written into every export
folder, hashed in each format's manifest like every other file. Stored rather than written again at each export:
a later change of this module's wording must not change the bytes of a released file, and the reviews behind the
figures may change after the freeze (an item sent back to review gets new ones).

A release frozen before cards existed has neither: :func:`release_card` writes its card from the frozen items and
the reviews as they are now, and says so; its exports stay exactly the files its manifest lists.

Nothing a person typed reaches the card unescaped (:func:`_inline`): the release page renders the card with raw
HTML shown as text (:mod:`annotation.guideline_markdown`), and so does the Hub.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from django.utils import timezone

from annotation.models import GuidelineVersion, QAItem, Release
from annotation.qa_types import CLINIQLINK_TYPES, QAType, benchmark_label, qa_type_label
from annotation.selectors.review import judging_reviews
from annotation.services.release_rules import rule_description
from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, RELEVANCE_VALUES, Verdict
from stats.agreement import krippendorff_alpha
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.results import StatResult

CARD_FILE = "CARD.md"

#: The Hub's size bins (``size_categories``): the upper bound of each and its name.
_SIZE_BINS = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))
_SIZE_LARGEST = "n>1M"

#: A character of the CJK Unified Ideographs block (and its extension A): an item whose question has one is Chinese.
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")

#: Characters with a meaning in Markdown (or raw HTML) that a person's text may hold; each is written escaped.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~&])")

_CLINIQLINK_TYPE_VALUES = frozenset(t.value for t in CLINIQLINK_TYPES)


class CardItem(NamedTuple):
    """What the card reads of one frozen item."""

    item_id: int
    benchmark: str
    qa_type: str
    review_count: int
    question: str


# ------------------------------------------------------------------------------------------------ the figures


def card_facts(items: Sequence[CardItem], *, at_freeze: bool) -> dict[str, Any]:
    """The figures a card states, JSON-ready: counts per QA type and benchmark, the double-review share, the
    agreement between the items' independent reviewers, the guideline versions of their reviews, the languages.

    ``at_freeze``: whether the figures are taken by the freeze (stored with the release) or later, for a release
    frozen before cards existed (the card says which)."""
    ids = [item.item_id for item in items]
    # The reviews the vetting agreement report counts (analytics.selectors.vetting_ratings): a reviewer who could
    # not tell because the item is outside their field did not judge it.
    reviews = list(
        judging_reviews()
        .filter(item_id__in=ids)
        .order_by("item_id", "created_at")
        .values_list("item_id", "reviewer_id", "verdict", "relevance", "guideline_id")
    )
    by_type: dict[str, dict[str, int]] = {}
    for item in items:
        row = by_type.setdefault(item.qa_type, {"items": 0, "double": 0})
        row["items"] += 1
        row["double"] += item.review_count >= 2
    return {
        "at_freeze": at_freeze,
        "items": len(items),
        "double_reviewed": sum(item.review_count >= 2 for item in items),
        "by_type": by_type,
        "by_benchmark": dict(Counter(item.benchmark for item in items)),
        "languages": _languages(item.question for item in items),
        "agreement": _agreement(reviews),
        "guidelines": _guideline_counts(Counter(guideline for *_, guideline in reviews)),
    }


def card_items_of_entries(entries: Sequence[Mapping[str, Any]]) -> list[CardItem]:
    """The card's view of a freeze's snapshot entries (records as parsed JSON)."""
    benchmarks = dict(
        QAItem.objects.filter(pk__in=[entry["item_id"] for entry in entries]).values_list("pk", "benchmark")
    )
    return [
        CardItem(
            entry["item_id"],
            benchmarks[entry["item_id"]],
            entry["qa_type"],
            entry["review_count"],
            _question(entry["record"].get("question"), entry["record"].get("input")),
        )
        for entry in entries
    ]


def card_items_of_release(release: Release) -> list[CardItem]:
    """The card's view of a stored release's items."""
    rows = release.items.order_by("position").values_list(
        "item_id", "item__benchmark", "qa_type", "review_count", "record__question", "record__input"
    )
    return [
        CardItem(item_id, benchmark, qa_type, review_count, _question(question, input_text))
        for item_id, benchmark, qa_type, review_count, question, input_text in rows
    ]


def _question(question: object, input_text: object) -> str:
    """The question as asked: a ClinIQLink ``question``, or a PromptCBLUE ``input``."""
    for text in (question, input_text):
        if isinstance(text, str):
            return text
    return ""


def _languages(questions: Iterable[str]) -> list[str]:
    """ISO 639-1 codes of the languages the items are asked in: ``zh`` for a question with a CJK ideograph,
    ``en`` otherwise (the portal's two benchmarks are English and Chinese)."""
    found = {"zh" if _CJK.search(question) else "en" for question in questions}
    return [code for code in ("en", "zh") if code in found]


def _agreement(reviews: Sequence[tuple[int, int, str, int, int | None]]) -> dict[str, Any]:
    """Krippendorff's alpha between the independent reviewers of the items: verdict (nominal) and GP relevance
    (ordinal), each with its percentile bootstrap 95 % interval over items, as the vetting agreement report computes
    them. Reviews set aside when an item was sent back to review count, as there."""
    frame = pd.DataFrame(
        [(item, reviewer, verdict, relevance) for item, reviewer, verdict, relevance, _ in reviews],
        columns=["item", "annotator", "verdict", "relevance"],
    )
    verdicts = frame.rename(columns={"verdict": "value"})[["item", "annotator", "value"]]
    relevance = frame.rename(columns={"relevance": "value"})[["item", "annotator", "value"]]
    resampling = {"n_resamples": DEFAULT_RESAMPLES, "seed": DEFAULT_SEED}
    return {
        "verdict": krippendorff_alpha(verdicts, level="nominal", values=Verdict.values, **resampling).to_dict(),
        "relevance": krippendorff_alpha(
            relevance, level="ordinal", values=list(RELEVANCE_VALUES), **resampling
        ).to_dict(),
        "reviews": len(frame),
        "reviewers": int(frame["annotator"].nunique()),
        "resamples": DEFAULT_RESAMPLES,
    }


def _guideline_counts(counts: Mapping[int | None, int]) -> list[dict[str, Any]]:
    """Per guideline version the reviews were made under: what it is for, its number, how many reviews; reviews
    made before any guideline existed for their item last (version None)."""
    versions = GuidelineVersion.objects.filter(pk__in=[pk for pk in counts if pk is not None])
    order = {t.value: n for n, t in enumerate(QAType)}
    rows = [
        {"title": v.title, "number": v.number, "reviews": counts[v.pk]}
        for v in sorted(versions, key=lambda v: (v.benchmark != "cliniqlink", v.benchmark, order.get(v.qa_type, 99)))
    ]
    if counts.get(None):
        rows.append({"title": None, "number": None, "reviews": counts[None]})
    return rows


# ------------------------------------------------------------------------------------------------ the card


def release_card(release: Release) -> str:
    """The card of ``release``: the one stored at freeze time, or, for a release frozen before cards existed, one
    written now from its frozen items and the reviews as they are now (and saying so)."""
    stored = (release.report or {}).get("card")
    if isinstance(stored, str):
        return stored
    return card_markdown(release)


def card_markdown(release: Release, *, at: datetime | None = None) -> str:
    """The card's Markdown, from the release's row and the figures stored with it (taken now when there are none).

    ``release`` may be unsaved (the freeze writes the card before the row exists); ``at``: when it was frozen
    (default: the row's time, else now)."""
    report = release.report or {}
    facts = report.get("card_facts") or card_facts(card_items_of_release(release), at_freeze=False)
    frozen_at = at or release.created_at or timezone.now()
    sections = [
        _front_matter(release, facts),
        f"# {_inline(_pretty_name(release))}",
        _summary(release, facts),
        _vetting(release, facts),
        _composition(facts),
        _quality(facts, report),
        _limitations(release, facts),
        _how_to_load(release),
        _provenance(release, facts, frozen_at),
    ]
    return "\n\n".join(sections) + "\n"


def frozen_with_card(release: Release) -> bool:
    """Whether ``release`` was frozen with its card (``CARD.md`` in its manifests, so in every export).

    Such a release's Parquet also keeps lists of text as lists and whole numbers as integers
    (:func:`annotation.exporters.tables.table_frame`, ``typed``); one frozen before cards holds JSON text and floats,
    the bytes its manifest recorded, and is written that way again. Cards and the typed Parquet came together, so
    the card in a manifest says which Parquet a release has."""
    return any(CARD_FILE in files for files in release.manifests.values())


def card_write(text: str, folder: Path) -> Path:
    """Write ``CARD.md`` into ``folder`` (UTF-8, ``\\n`` line ends: the same bytes on every system)."""
    path = folder / CARD_FILE
    path.write_text(text, encoding="utf-8", newline="\n")
    return path


def card_split(text: str) -> tuple[str, str]:
    """The card's YAML front matter (without its ``---`` lines) and its Markdown body after the title, for the
    release page: it shows the first as written and renders the second under its own heading."""
    front, body = "", text
    if text.startswith("---\n"):
        matter, separator, rest = text[4:].partition("\n---\n")
        if separator:
            front, body = matter, rest.lstrip("\n")
    if body.startswith("# "):
        body = body.partition("\n")[2].lstrip("\n")
    return front, body


def _pretty_name(release: Release) -> str:
    return f"{release.name} v{release.version}"


def _front_matter(release: Release, facts: Mapping[str, Any]) -> str:
    # Written by hand (PyYAML is a development tool here); every string is JSON-quoted, which YAML reads as is.
    languages = facts["languages"] or ["en"]
    lines = [
        "---",
        "license: other",
        "language:",
        *(f"- {code}" for code in languages),
        "task_categories:",
        "- question-answering",
        "size_categories:",
        f"- {_size_category(facts['items'])}",
        f"pretty_name: {json.dumps(_pretty_name(release))}",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: test",
        "    path: items.parquet",
        "---",
    ]
    return "\n".join(lines)


def _size_category(n: int) -> str:
    return next((name for bound, name in _SIZE_BINS if n < bound), _SIZE_LARGEST)


def _summary(release: Release, facts: Mapping[str, Any]) -> str:
    benchmarks = ", ".join(
        f"{_inline(benchmark_label(name))}: {_count(n)}" for name, n in _ordered_benchmarks(facts["by_benchmark"])
    )
    lines = [
        "## Dataset summary",
        "",
        f"Release `{release.label}`: {_count(facts['items'])} question-answer items ({benchmarks}), each vetted by "
        "reviewers and frozen unchanged. Every export holds the same items: the ClinIQLink seven-file layout "
        "(ClinIQLink's seven QA types only), CSV, Parquet and JSONL, one row per item.",
    ]
    if release.note:
        lines += ["", "The organizers' note:", ""] + [f"> {_inline(line)}" for line in release.note.splitlines()]
    return "\n".join(lines)


def _vetting(release: Release, facts: Mapping[str, Any]) -> str:
    lines = [
        "## How the items were vetted",
        "",
        "A reviewer judged each item (against its cited source passage, where it has one: verdict correct, incorrect "
        "or cannot tell) and rated how "
        f"relevant it is to a general practitioner ({RELEVANCE_MIN} to {RELEVANCE_MAX}), under the written guideline "
        "of its benchmark and QA type. A share of the items was drawn for a second, independent review; an "
        "adjudicator decided every disagreement.",
        "",
        f"The release took every item that met its rule: {_inline(rule_description(release.rule))}.",
        "",
        "The guideline versions the reviews of these items were made under:",
        "",
        "| Guideline | Version | Reviews |",
        "| --- | ---: | ---: |",
    ]
    for row in facts["guidelines"]:
        if row["number"] is None:
            lines.append(f"| none yet (before the first guideline) | | {_count(row['reviews'])} |")
        else:
            lines.append(f"| {_inline(row['title'])} | {row['number']} | {_count(row['reviews'])} |")
    if not facts["guidelines"]:
        lines.append("| no reviews | | 0 |")
    return "\n".join(lines)


def _composition(facts: Mapping[str, Any]) -> str:
    lines = [
        "## Composition",
        "",
        "| QA type | Items | Reviewed twice |",
        "| --- | ---: | ---: |",
    ]
    for qa_type, row in _ordered_types(facts["by_type"]):
        lines.append(f"| {_inline(qa_type_label(qa_type))} | {_count(row['items'])} | {_count(row['double'])} |")
    lines.append(f"| **Total** | **{_count(facts['items'])}** | **{_count(facts['double_reviewed'])}** |")
    lines += ["", "| Benchmark | Items |", "| --- | ---: |"]
    for name, n in _ordered_benchmarks(facts["by_benchmark"]):
        lines.append(f"| {_inline(benchmark_label(name))} | {_count(n)} |")
    return "\n".join(lines)


def _quality(facts: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    agreement = facts["agreement"]
    when = (
        "at freeze time"
        if facts["at_freeze"]
        else "when this card was written (the release was frozen before cards existed)"
    )
    lines = [
        "## Quality",
        "",
        f"**Double review.** {_count(facts['double_reviewed'])} of the {_count(facts['items'])} items "
        f"({_percent(facts['double_reviewed'], facts['items'])}) were reviewed independently twice.",
        "",
        "**Agreement between first and second reviewers** on these items: Krippendorff's alpha over the items "
        f"reviewed twice, from {_count(agreement['reviews'])} reviews by {_count(agreement['reviewers'])} reviewers "
        f"as they stood {when}; 95 % percentile bootstrap interval over items "
        f"({_count(agreement['resamples'])} resamples).",
        "",
        "| Judgement | Alpha | 95 % interval | Items reviewed twice |",
        "| --- | ---: | --- | ---: |",
        _alpha_row("Verdict (nominal)", StatResult.from_dict(agreement["verdict"])),
        _alpha_row(
            f"GP relevance {RELEVANCE_MIN} to {RELEVANCE_MAX} (ordinal)", StatResult.from_dict(agreement["relevance"])
        ),
        "",
        "### Estimated wrong items",
        "",
        _wrong_items(report, facts["items"]),
    ]
    return "\n".join(lines)


def _alpha_row(label: str, result: StatResult) -> str:
    if result.value is None:
        reason = _inline(result.undefined_reason or "undefined")
        return f"| {label} | not defined: {reason} | | {_count(result.n_items)} |"
    interval = f"{result.ci_low:.2f} to {result.ci_high:.2f}" if result.ci else "none (too few items)"
    return f"| {label} | {result.value:.2f} | {interval} | {_count(result.n_items)} |"


#: The keys of the estimate of wrong items stored at freeze time (``report["quality"]``).
_QUALITY_NUMBERS = ("mean", "low", "high")


def _wrong_items(report: Mapping[str, Any], n_items: int) -> str:
    """What the freeze estimated of the number of wrong items (``annotation.services.release_quality``), or why
    there is no estimate; never a figure of its own. The estimate counts items: ``mean`` and the 95 % interval
    ``low`` to ``high`` among the ``items`` release items it was made over, by ``method``; ``unjudged`` release
    items carried no judgement to estimate from."""
    if "quality" not in report:
        return "Not estimated: this release was frozen before the portal estimated how many of its items are wrong."
    quality = report["quality"]
    if not _readable_quality(quality):
        return "Not estimated: the number of wrong items could not be computed for this release."
    mean, low, high = (float(quality[key]) for key in _QUALITY_NUMBERS)
    over = int(quality["items"])
    unjudged = quality.get("unjudged")
    apart = (
        f" {_count(int(unjudged))} release items carry no judgement and are not in the estimate."
        if isinstance(unjudged, int) and unjudged
        else ""
    )
    return (
        f"About {_count(round(mean))} of the {_count(over)} items are probably wrong (95 % interval "
        f"{_count(round(low))} to {_count(round(high))} items, {_share(low / over if over else 0.0)} to "
        f"{_share(high / over if over else 0.0)} of them). How: {_inline(str(quality['method']))}{apart}"
    )


def _readable_quality(quality: object) -> bool:
    """Whether ``quality`` is an estimate the card can state: counts 0 ≤ low ≤ mean ≤ high ≤ items, a method."""
    if not isinstance(quality, Mapping):
        return False
    count = quality.get("items")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return False
    numbers = [quality.get(key) for key in _QUALITY_NUMBERS]
    if not all(isinstance(value, int | float) and not isinstance(value, bool) for value in numbers):
        return False
    mean, low, high = (float(value) for value in numbers)  # type: ignore[arg-type]
    return 0 <= low <= mean <= high <= count and isinstance(quality.get("method"), str)


def _limitations(release: Release, facts: Mapping[str, Any]) -> str:
    single = facts["items"] - facts["double_reviewed"]
    outside = sum(row["items"] for qa_type, row in facts["by_type"].items() if qa_type not in _CLINIQLINK_TYPE_VALUES)
    points = [
        f"{_count(single)} of the {_count(facts['items'])} items had no second, independent review: no agreement "
        "figure covers them."
        if single
        else "Every item was reviewed independently twice.",
        "Agreement is measured on the items reviewed twice only; with few such items its interval is wide.",
        "The figures describe the vetting as it stood when they were taken: disputes, feedback or reviews after "
        "that are not in this release.",
        "Reviewers judged each item against its cited source passage; an item can be faithful to a source that is "
        "itself dated or wrong.",
    ]
    if outside:
        points.append(
            f"The ClinIQLink layout has no file for other benchmarks: {_count(outside)} items are only in the CSV, "
            "Parquet and JSONL exports."
        )
    points.append(
        "A column holding text for some items and lists for others (the answer, when list questions are released "
        "beside other types) is JSON text in every cell of the CSV and Parquet files; decode it with a JSON parser."
    )
    return "\n".join(["## Known limitations", "", *(f"- {point}" for point in points)])


def _how_to_load(release: Release) -> str:
    return "\n".join(
        [
            "## How to load",
            "",
            "The Parquet export (`items.parquet`) loads with the Hugging Face `datasets` library, one row per item "
            "with the columns of the CSV; lists of text (options, reasoning steps) are lists:",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            'items = load_dataset("parquet", data_files={"test": "items.parquet"}, split="test")',
            "```",
            "",
            'The CSV and JSONL exports load the same way (`"csv"`, `"json"`); the ClinIQLink files are read by '
            "the ClinIQLink harness unchanged. To publish on the Hub, put `items.parquet` beside this card renamed "
            "`README.md`: its front matter names the file as the test split.",
        ]
    )


def _provenance(release: Release, facts: Mapping[str, Any], frozen_at: datetime) -> str:
    # The name only, never the email address a nameless account would show: the card is meant to be published.
    frozen_by = release.created_by.get_full_name() if release.created_by else ""
    who = f" by {_inline(frozen_by)}" if frozen_by else ""
    later = (
        []
        if facts["at_freeze"]
        else [
            "- This card was written after the freeze, for a release frozen before cards existed: it is not one of "
            "the release's files and no manifest lists it."
        ]
    )
    return "\n".join(
        [
            "## Citation / provenance",
            "",
            f"Cite as: {_inline(_pretty_name(release))}, release `{release.label}`, SHA-256 `{release.checksum}`.",
            "",
            f"- Frozen{who} on {frozen_at.astimezone(UTC):%Y-%m-%d} (UTC) as `{release.label}`; "
            "a release never changes.",
            f"- Checksum: `{release.checksum}`, the SHA-256 of the ClinIQLink export's data files listed as "
            "`sha256sum` lines (digest, two spaces, name; sorted by name). This card is not part of it.",
            "- Every export folder's manifest (`SHA256SUMS` in a download) lists each of its files with its SHA-256"
            f"{', this card included' if facts['at_freeze'] else ''}. Check a copy with `sha256sum -c SHA256SUMS`.",
            *later,
        ]
    )


# ------------------------------------------------------------------------------------------------ words


def _inline(text: str) -> str:
    """A person's text (a release note, a name) as Markdown that means only the text: every character Markdown or
    HTML would read as syntax is backslash-escaped, so nothing typed becomes a link, a tag or a heading."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _count(n: int) -> str:
    return f"{n:,}"


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "none"


def _share(value: float) -> str:
    return f"{100 * value:.1f} %"


def _ordered_types(by_type: Mapping[str, Any]) -> list[tuple[str, Any]]:
    order = {t.value: n for n, t in enumerate(QAType)}
    return sorted(by_type.items(), key=lambda pair: (order.get(pair[0], len(order)), pair[0]))


def _ordered_benchmarks(by_benchmark: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(by_benchmark.items(), key=lambda pair: (pair[0] != "cliniqlink", pair[0]))
