"""The organizer's vetting dashboard: progress as bars with the percentage written out, every setting explained,
the gold items with their statistics, the items and passages without an excerpt; and the item search."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, GoldAnswer, GoldItem, QAItem, SourcePassage
from annotation.services.gold import gold_mark

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_progress_bars_per_batch_type_and_stage_with_percentages(sample_items, organizer_client):
    first_four = [i.pk for i in sample_items if i.qa_type == "true_false"][:4]
    QAItem.objects.filter(pk__in=first_four[:3]).update(status="verified", final_verdict="correct")
    QAItem.objects.filter(pk=first_four[3]).update(status="rejected", final_verdict="incorrect")
    html = organizer_client.get("/organize/vetting/").content.decode()
    total_tf = sum(1 for i in sample_items if i.qa_type == "true_false")
    tf_bar = re.search(r'<div class="share" data-bar="True / false">(.*?)</div>', html, flags=re.S).group(1)
    percent = round(100 * 4 / total_tf)
    assert f'<meter min="0" max="100" value="{percent}"' in tf_bar and f"{percent}% · 4 of {total_tf}" in tf_bar
    batch_percent = round(100 * 4 / 35)
    assert f"{batch_percent}% · 4 of 35" in html
    assert 'data-bar="Primary review"' in html and 'data-bar="Second review"' in html
    assert 'data-bar="Adjudication"' in html
    assert "style=" not in html  # the CSP refuses inline styles: bars are <meter> elements
    partial = organizer_client.get("/organize/vetting/progress/").content.decode()
    assert f"{percent}% · 4 of {total_tf}" in partial
    assert "in_second_review" not in _text(partial)


def test_every_setting_is_explained_in_one_sentence_with_its_value(sample_items, organizer_client, config):
    html = organizer_client.get("/organize/vetting/").content.decode()
    for name in ("seed", "second_share", "relevance_gap", "gold_rate", "gold_min_accuracy", "gold_min_answers"):
        explanation = re.search(rf'id="explain-{name}">(.*?)</span>', html).group(1)
        assert explanation.endswith(".") and len(explanation) > 40
    assert "45% of the items are drawn" in html and "differs by 2 or more" in html


def test_gold_items_with_their_counts_per_type_and_agreement(sample_items, organizer_client, organizer, make_user):
    gold_tf, gold_mc = sample_items[0], next(i for i in sample_items if i.qa_type == "multiple_choice")
    gold = gold_mark(item=gold_tf, expected_verdict="correct", by=organizer)
    gold_mark(item=gold_mc, expected_verdict="incorrect", by=organizer, planted_error=True)
    for n, verdict in enumerate(["correct", "correct", "correct", "incorrect"]):
        reviewer = make_user("reviewer", email=f"r{n}@example.org")
        lease = Assignment.objects.create(
            item=gold_tf, reviewer=reviewer, stage="primary", expires_at=timezone.now() + timedelta(minutes=30)
        )
        GoldAnswer.objects.create(
            assignment=lease, gold=gold, reviewer=reviewer, verdict=verdict, relevance=5,
            is_correct=verdict == "correct", server_seconds=10,
        )  # fmt: skip
    html = organizer_client.get("/organize/vetting/").content.decode()
    text = _text(html)
    assert "2 gold items, 2 handed out; reviewers agreed with the expected verdict in 75% of 4 answers." in text
    assert "True / false 1 1 0" in text and "Multiple choice 1 1 1" in text
    assert "75% (3 of 4)" in text and "(planted error)" in text
    assert GoldItem.objects.count() == 2


def test_items_and_passages_without_an_excerpt_are_listed_with_links(sample_items, organizer_client):
    QAItem.objects.filter(pk=sample_items[0].pk).update(passage=None, paragraph_id="nowhere-<b>1</b>")
    SourcePassage.objects.create(paragraph_id="blank-passage", text="   ")
    html = organizer_client.get("/organize/vetting/").content.decode()
    section = re.search(r'<section class="card" id="missing-excerpts">(.*?)</section>', html, flags=re.S).group(1)
    assert f'href="/items/{sample_items[0].uid}/"' in section
    assert "nowhere-&lt;b&gt;1&lt;/b&gt;" in section and "blank-passage" in section
    missing = QAItem.objects.filter(passage__isnull=True).count()
    assert missing >= 1
    listed = organizer_client.get("/items/?excerpt=missing").content.decode()
    assert f"{missing} found" in listed and sample_items[0].uid in listed
    assert f"{35 - missing} found" in organizer_client.get("/items/?excerpt=present").content.decode()


def test_item_search_finds_substrings_of_question_answer_and_id_and_escapes(sample_items, organizer_client):
    item = sample_items[3]
    QAItem.objects.filter(pk=item.pk).update(question="Which <script>alert(1)</script> drug 100% works?")
    page = organizer_client.get("/items/", {"q": "<script>alert(1)"}).content.decode()
    assert "1 found" in page and item.uid in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "1 found" in organizer_client.get("/items/", {"q": "100%"}).content.decode()
    assert "0 found" in organizer_client.get("/items/", {"q": "1_0%"}).content.decode()  # % and _ are plain
    answer_item = next(i for i in sample_items if i.qa_type == "short_answer")
    QAItem.objects.filter(pk=answer_item.pk).update(answer="Zygomaticofacial nerve block")
    assert answer_item.uid in organizer_client.get("/items/", {"q": "ZYGOMATICOFACIAL"}).content.decode()
    middle = item.uid[2:-2]
    assert item.uid in organizer_client.get("/items/", {"q": middle}).content.decode()


def test_item_search_pages_results(sample_items, organizer_client):
    QAItem.objects.update(question="Shared phrase in every question")
    first = organizer_client.get("/items/", {"q": "shared phrase"}).content.decode()
    assert "35 found" in first
    long_query = organizer_client.get("/items/", {"q": "x" * 500})
    assert long_query.status_code == 200 and "Search: Ensure this value has at most 200" in long_query.content.decode()


def test_shares_and_durations_are_written_for_reading(sample_items, organizer_client, config):
    # Regression: "0.500 (target 0.5)" and "mean — h, median — h" when nothing was resolved.
    text = _text(organizer_client.get("/organize/vetting/").content.decode())
    assert f"(target {round(100 * config.second_share)} %)" in text
    assert "0 resolved" in text and "— h" not in text
