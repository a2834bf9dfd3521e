"""The evaluation card of a release (CARD.md): frozen through the real services, it states the counts per QA type
and benchmark, the double-review share, the agreement between first and second reviewers (the figure ``stats``
gives on the same reviews), the guideline versions, the checksum and the estimate of wrong items or its absence;
every export folder holds it, hashed in the manifest; the checksum still covers the data files only; a release
frozen before cards keeps its bytes; the release page shows the card with every typed character escaped."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
import yaml
from django.db import transaction

from annotation.models import GuidelineVersion, QAItem, Release, ReleaseItem, Review
from annotation.qa_types import qa_type_label
from annotation.services import releases as releases_service
from annotation.services.adjudication import item_adjudicate
from annotation.services.imports import items_import
from annotation.services.queue import assignment_next
from annotation.services.release_card import CARD_FILE, card_split, release_card
from annotation.services.release_snapshot import release_entries
from annotation.services.releases import EXPORT_FORMATS, _write, release_export, release_freeze, release_verify
from annotation.workflow import CannotTellReason, Stage, Verdict
from stats.agreement import krippendorff_alpha
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
RULE = {"statuses": ["verified", "rejected"], "final_verdict": None, "min_relevance": None}
# (first review, second review) of the five items reviewed twice; the last two disagree on the verdict and are
# adjudicated. Verdict alpha by hand (Krippendorff 2011, nominal; c correct, i incorrect, t cannot tell): coincidences
# o_cc = 4, o_ii = 2, o_ci = o_ic = 1, o_ct = o_tc = 1, so n_c = 6, n_i = 3, n_t = 1, n = 10, and
# alpha = 1 - (n - 1) * 4 / (2 * (n_c n_i + n_c n_t + n_i n_t)) = 1 - 36 / 54 = 1/3.
PAIRS = [
    (("correct", 5), ("correct", 5)),
    (("correct", 4), ("correct", 5)),
    (("incorrect", 2), ("incorrect", 3)),
    (("correct", 5), ("incorrect", 5)),
    (("cannot_tell", 3), ("correct", 3)),
]
VERDICT_ALPHA_BY_HAND = 1 / 3
QUALITY = {"mean": 2.2, "low": 0.6, "high": 4.4, "method": "Dawid-Skene posteriors.", "items": 8}


def _vet(config, make_user, review) -> None:
    """Five items reviewed twice (two adjudicated), one reviewed once, then two PromptCBLUE items verified."""
    config.second_share = 1.0
    config.save()
    first, second = make_user("reviewer"), make_user("reviewer")
    for (verdict_a, relevance_a), (verdict_b, relevance_b) in PAIRS:
        a = assignment_next(reviewer=first)
        review(a, verdict_a, relevance_a, **_reason(verdict_a))
        b = assignment_next(reviewer=second)
        assert b.item_id == a.item_id
        review(b, verdict_b, relevance_b, **_reason(verdict_b))
        if verdict_a != verdict_b:
            item = QAItem.objects.get(pk=a.item_id)
            item_adjudicate(
                item=item, adjudicator=make_user("adjudicator"), verdict="correct", relevance=5, reason="p. 3"
            )
    config.second_share = 0.0
    config.save()
    review(assignment_next(reviewer=first), "correct", 5)
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    chinese = QAItem.objects.filter(benchmark="promptcblue").order_by("id").values_list("pk", flat=True)[:2]
    QAItem.objects.filter(pk__in=list(chinese)).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )


def _reason(verdict: str) -> dict:
    return {"cannot_tell_reason": CannotTellReason.AMBIGUOUS} if verdict == Verdict.CANNOT_TELL else {}


@pytest.fixture
def vetted(sample_items, config, make_user, review):
    _vet(config, make_user, review)


@pytest.fixture
def release(vetted, organizer):
    return release_freeze(name="carded", rule=RULE, user=organizer, note="First public cut.")


def _reviews(release: Release) -> pd.DataFrame:
    rows = Review.objects.filter(
        item__release_entries__release=release, stage__in=[Stage.PRIMARY, Stage.SECONDARY]
    ).values_list("item_id", "reviewer_id", "verdict", "relevance", "guideline_id")
    return pd.DataFrame(list(rows), columns=["item", "annotator", "verdict", "relevance", "guideline"])


def _alpha(frame: pd.DataFrame, column: str, level: str, values: list):
    ratings = frame.rename(columns={column: "value"})[["item", "annotator", "value"]]
    return krippendorff_alpha(ratings, level=level, values=values, n_resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED)


def _reference_alpha(frame: pd.DataFrame, column: str, level: str, values: list) -> float:
    """The GPL ``krippendorff`` package on the same reviews (a reliability matrix: reviewers x items)."""
    code = {value: n for n, value in enumerate(values)}
    matrix = frame.pivot(index="annotator", columns="item", values=column).map(
        lambda v: np.nan if pd.isna(v) else code[v]
    )
    return krippendorff.alpha(
        reliability_data=matrix.to_numpy(dtype=float), level_of_measurement=level, value_domain=list(range(len(values)))
    )


def _row(*cells) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _section(card: str, heading: str) -> str:
    start = card.index(heading)
    following = re.search(r"^#{2,3} ", card[start + len(heading) :], flags=re.MULTILINE)
    return card[start : start + len(heading) + following.start()] if following else card[start:]


def test_the_card_states_counts_share_agreement_guidelines_and_checksum(release):
    card = release.report["card"]
    assert release_card(release) == card
    assert release.item_count == 8

    types = Counter(release.items.values_list("qa_type", flat=True))
    twice = Counter(release.items.filter(review_count__gte=2).values_list("qa_type", flat=True))
    for qa_type, n in types.items():
        assert _row(qa_type_label(qa_type), n, twice[qa_type]) in card
    assert _row("**Total**", "**8**", "**5**") in card
    assert _row("ClinIQLink", 6) in card and _row("PromptCBLUE", 2) in card
    # Five of the eight items were reviewed twice: 62.5 %.
    assert "5 of the 8 items (62.5 %) were reviewed independently twice" in card

    reviews = _reviews(release)
    assert len(reviews) == 11  # five pairs and one single review
    verdict = _alpha(reviews, "verdict", "nominal", ["correct", "incorrect", "cannot_tell"])
    relevance = _alpha(reviews, "relevance", "ordinal", [1, 2, 3, 4, 5])
    assert verdict.value == pytest.approx(VERDICT_ALPHA_BY_HAND)
    assert verdict.value == pytest.approx(
        _reference_alpha(reviews, "verdict", "nominal", ["correct", "incorrect", "cannot_tell"])
    )
    assert relevance.value == pytest.approx(_reference_alpha(reviews, "relevance", "ordinal", [1, 2, 3, 4, 5]))
    assert _row("Verdict (nominal)", "0.33", f"{verdict.ci_low:.2f} to {verdict.ci_high:.2f}", 5) in card
    assert (
        _row(
            "GP relevance 1 to 5 (ordinal)",
            f"{relevance.value:.2f}",
            f"{relevance.ci_low:.2f} to {relevance.ci_high:.2f}",
            5,
        )
        in card
    )
    assert "from 11 reviews by 2 reviewers" in card

    per_version = Counter(reviews["guideline"])
    assert None not in per_version  # the shipped guidelines cover every ClinIQLink type
    for version in GuidelineVersion.objects.filter(pk__in=list(per_version)):
        assert _row(version.title, version.number, per_version[version.pk]) in card

    assert release.checksum in card
    assert "First public cut." in card
    # the freeze's own estimate from the judgements (annotation.services.release_quality), stated as stored
    quality = release.report["quality"]
    assert quality["items"] + quality.get("unjudged", 0) == release.item_count
    assert f"About {round(quality['mean'])} of the {quality['items']} items are probably wrong" in card


def test_the_front_matter_parses_with_the_hub_keys(release):
    front, body = card_split(release.report["card"])
    meta = yaml.safe_load(front)
    assert meta["license"] == "other"
    assert meta["language"] == ["en", "zh"]
    assert meta["task_categories"] == ["question-answering"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["pretty_name"] == "carded v1"
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "items.parquet"}]}]
    for heading in ("Dataset summary", "How the items were vetted", "Composition", "Quality", "Known limitations",
                    "How to load", "Citation / provenance"):  # fmt: skip
        assert re.search(rf"^## {re.escape(heading)}$", body, flags=re.MULTILINE), heading
    assert "\n### Estimated wrong items\n" in body
    assert "\n---\n\n# carded v1\n\n## Dataset summary\n" in release.report["card"]


def test_no_stored_keys_or_python_values_in_the_card_body(release):
    _, body = card_split(release.report["card"])  # the front matter's keys are the Hub's own
    prose = re.sub(r"```.*?```|`[^`]*`", "", body, flags=re.DOTALL)
    assert re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", prose) == []
    assert re.findall(r"\bNone\b|\bnan\b|\{'|'\}|\[\]|\{\}", prose) == []


def _freeze_with_quality(monkeypatch, quality, name):
    monkeypatch.setattr(releases_service, "items_wrong_estimate", lambda item_ids: quality)
    return release_freeze(name=name, rule=RULE)


def test_a_release_frozen_before_estimates_says_so(release):
    from annotation.services.release_card import _wrong_items

    report = {key: value for key, value in release.report.items() if key != "quality"}
    assert _wrong_items(report, release.item_count).startswith("Not estimated: this release was frozen before")


def test_the_estimate_of_wrong_items_is_stated_with_its_interval(vetted, monkeypatch):
    card = _freeze_with_quality(monkeypatch, QUALITY, "estimated").report["card"]
    wrong = _section(card, "### Estimated wrong items")
    # 0.6 of 8 items is 7.5 %, 4.4 of 8 is 55.0 %
    assert "About 2 of the 8 items are probably wrong (95 % interval 1 to 4 items, 7.5 % to 55.0 % of them)" in wrong
    assert "How: Dawid-Skene posteriors." in wrong


@pytest.mark.parametrize(
    "quality",
    [
        None,
        {"mean": 3.4, "low": 4, "high": 7, "method": "x", "items": 8},
        {"mean": 0.1},
        {"mean": 3, "low": 1, "high": 9, "method": "x", "items": 8},
    ],  # fmt: skip
)
def test_an_estimate_that_could_not_be_computed_is_said_so_without_a_figure(vetted, monkeypatch, quality):
    wrong = _section(_freeze_with_quality(monkeypatch, quality, "unread").report["card"], "### Estimated wrong items")
    assert "could not be computed for this release" in wrong
    assert "%" not in wrong


def test_every_export_folder_holds_the_card_hashed_in_its_manifest(release, tmp_path):
    card = release.report["card"].encode()
    for fmt in EXPORT_FORMATS:
        names = {path.name for path in release_export(release=release, fmt=fmt, out_dir=tmp_path / fmt)}
        assert CARD_FILE in names
        assert (tmp_path / fmt / CARD_FILE).read_bytes() == card
        assert release.manifests[fmt][CARD_FILE] == hashlib.sha256(card).hexdigest()
        assert release_verify(release=release, folder=tmp_path / fmt, fmt=fmt) == []


def test_an_export_written_again_holds_the_same_card_and_bytes(release, tmp_path, settings):
    shutil.rmtree(Path(settings.RELEASE_FILES_DIR) / str(release.pk))  # the kept files lost: written afresh
    for fmt in EXPORT_FORMATS:
        paths = release_export(release=release, fmt=fmt, out_dir=tmp_path / fmt)
        assert sorted(path.name for path in paths) == sorted(release.manifests[fmt])
        assert release_verify(release=release, folder=tmp_path / fmt, fmt=fmt) == []


def test_the_checksum_covers_the_data_files_only(release, tmp_path):
    folder = tmp_path / "cliniqlink"
    release_export(release=release, fmt="cliniqlink", out_dir=folder)
    lines = "".join(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n"
        for path in sorted(folder.iterdir())
        if path.name != CARD_FILE
    )
    assert release.checksum == hashlib.sha256(lines.encode()).hexdigest()


def test_a_second_freeze_of_the_same_items_is_still_refused_though_cards_differ(release):
    from portal.errors import Conflict

    with pytest.raises(Conflict):
        release_freeze(name="carded", rule=RULE, note="another note, same items")


def _old_release(new: Release, folder: Path) -> Release:
    """The release ``new`` as the code before cards froze it: its data files only (Parquet with JSON text), its
    checksum over the ClinIQLink manifest, a report without a card."""
    entries = release_entries(new)
    manifests = {}
    for fmt in EXPORT_FORMATS:
        paths = _write(fmt, entries, folder / fmt, csv_cells=new.csv_cells, typed_parquet=False)
        manifests[fmt] = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in paths}
    lines = "".join(f"{digest}  {name}\n" for name, digest in sorted(manifests["cliniqlink"].items()))
    report = {key: value for key, value in new.report.items() if key not in ("card", "card_facts")}
    with transaction.atomic():
        old = Release.objects.create(
            name="before-cards", version=1, rule=new.rule, item_count=new.item_count, manifests=manifests,
            checksum=hashlib.sha256(lines.encode()).hexdigest(), report=report, created_by=new.created_by,
        )  # fmt: skip
        ReleaseItem.objects.bulk_create(ReleaseItem(release=old, **entry) for entry in entries)
        Release.objects.filter(pk=old.pk).update(frozen=True)
    old.refresh_from_db()
    return old


def test_a_release_frozen_before_cards_keeps_its_checksum_and_bytes(release, tmp_path):
    old = _old_release(release, tmp_path / "then")
    # The card changed nothing the checksum covers: the same items give the same checksum as before cards.
    assert old.checksum == release.checksum
    for fmt in EXPORT_FORMATS:
        paths = release_export(release=old, fmt=fmt, out_dir=tmp_path / "now" / fmt)
        assert sorted(path.name for path in paths) == sorted(old.manifests[fmt])  # no card, Parquet as it was
        assert release_verify(release=old, folder=tmp_path / "now" / fmt, fmt=fmt) == []
    card = release_card(old)
    assert "frozen before cards existed" in card and "no manifest lists it" in card
    assert "5 of the 8 items (62.5 %) were reviewed independently twice" in card
    assert yaml.safe_load(card_split(card)[0])["language"] == ["en", "zh"]  # read from the frozen records


def test_the_release_page_shows_the_card_with_typed_text_escaped(vetted, organizer_client, organizer):
    organizer.first_name, organizer.last_name = "<b>Eve</b>", "[x](javascript:alert(2))"
    organizer.save()
    note = "<script>alert(1)</script>\n<img src=x onerror=alert(3)> [click](javascript:alert(4))\n# not a heading"
    release = release_freeze(name="hostile", rule=RULE, user=organizer, note=note)
    page = organizer_client.get(f"/releases/{release.label}/").content.decode()
    card_html = page[page.index('id="release-card"') :]
    assert "<h2>Quality</h2>" in card_html and "<table>" in card_html
    assert "<script>alert(1)" not in page and "<img src=x" not in page and "<b>Eve" not in page
    assert 'href="javascript' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card_html
    assert "&lt;b&gt;Eve&lt;/b&gt;" in card_html
    assert "<h1>not a heading" not in card_html and "# not a heading" in card_html
    assert '<pre id="release-card-front">' in card_html and "pretty_name: &quot;hostile v1&quot;" in card_html


def test_the_page_of_a_release_frozen_before_cards_says_its_card_is_written_now(release, organizer_client, tmp_path):
    old = _old_release(release, tmp_path / "then")
    page = organizer_client.get(f"/releases/{old.label}/").content.decode()
    assert "frozen before cards existed" in page and "is in none of its downloads" in page
