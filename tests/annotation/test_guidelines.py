"""Reviewer guidelines: append-only versions, the current-version rule, the version each review records, the
export column, safe markdown, the acknowledgement before the first item, and organizer-only pages."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest
from django.db import IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone

from annotation.guideline_defaults import default_guidelines
from annotation.models import Assignment, FeedbackNote, GuidelineAcknowledgement, GuidelineVersion
from annotation.qa_types import CLINIQLINK_TYPES
from annotation.selectors.guidelines import (
    guideline_acknowledgement_due,
    guideline_current,
    guideline_set_signature,
    guidelines_current_set,
)
from annotation.services.guidelines import guideline_defaults_ensure, guideline_version_create
from annotation.services.judgement_exports import judgements_export
from annotation.services.queue import assignment_next
from portal.errors import Conflict, DomainError

pytestmark = pytest.mark.django_db

HOSTILE = '# Rule\n\n<script>alert("guideline")</script> <img src=x onerror=alert(1)>\n\n[click](javascript:alert(1))'


@pytest.fixture
def defaults(db):
    guideline_defaults_ensure()
    return default_guidelines()


def _new_version(organizer, qa_type="true_false", text="Version two text.", based_on=None, benchmark="cliniqlink"):
    return guideline_version_create(
        benchmark=benchmark, qa_type=qa_type, text=text, author=organizer, change_note="clearer", based_on=based_on
    )


# --- defaults and versioning ---------------------------------------------------------------------------------


def test_shipped_guidelines_cover_the_seven_cliniqlink_types_and_promptcblue(defaults):
    assert set(defaults) == {("cliniqlink", t.value) for t in CLINIQLINK_TYPES} | {("promptcblue", "generic")}
    for benchmark, qa_type in defaults:
        current = guideline_current(benchmark=benchmark, qa_type=qa_type)
        assert current.number == 1 and current.author is None and "Excerpt missing" in current.text
    assert "answer `False` is a *correct item*" in defaults[("cliniqlink", "true_false")]
    assert "false answer on purpose" in defaults[("cliniqlink", "short_inverse")]
    assert guideline_defaults_ensure() == 0  # idempotent: nothing is added twice


def test_a_new_version_is_appended_and_the_old_one_kept(defaults, organizer):
    v1 = guideline_current(benchmark="cliniqlink", qa_type="true_false")
    v2 = _new_version(organizer, based_on=1)
    assert (v2.number, v2.author, v2.change_note) == (2, organizer, "clearer")
    assert guideline_current(benchmark="cliniqlink", qa_type="true_false") == v2
    v1.refresh_from_db()
    assert v1.text == defaults[("cliniqlink", "true_false")]
    assert list(
        GuidelineVersion.objects.filter(benchmark="cliniqlink", qa_type="true_false").values_list("number", flat=True)
    ) == [2, 1]
    # other types are untouched
    assert guideline_current(benchmark="cliniqlink", qa_type="list").number == 1


@pytest.mark.parametrize(
    "statement", ["UPDATE annotation_guidelineversion SET text = 'x'", "DELETE FROM annotation_guidelineversion"]
)
def test_the_database_refuses_to_change_or_delete_a_stored_version(defaults, statement):
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    assert GuidelineVersion.objects.filter(text="x").count() == 0


def test_current_version_as_of_a_moment(defaults, organizer):
    before = timezone.now()
    _new_version(organizer)
    assert guideline_current(benchmark="cliniqlink", qa_type="true_false", at=before).number == 1
    assert guideline_current(benchmark="cliniqlink", qa_type="true_false").number == 2
    assert guideline_current(benchmark="cliniqlink", qa_type="true_false", at=before - timedelta(days=3650)) is None
    assert guideline_current(benchmark="no-such-benchmark", qa_type="generic") is None


def test_a_version_saved_meanwhile_is_not_overwritten(defaults, organizer, make_user):
    _new_version(make_user("organizer"), based_on=1)
    with pytest.raises(Conflict, match="Version 2 .* while you were writing"):
        _new_version(organizer, text="my edit of version 1", based_on=1)
    assert guideline_current(benchmark="cliniqlink", qa_type="true_false").text == "Version two text."


def test_a_version_based_on_one_that_never_existed_is_refused(db, organizer):
    # A guideline with no version yet (a new benchmark), and a form claiming to start from version 1: refused as a
    # conflict (the page shows the form again), not a server error.
    with pytest.raises(Conflict, match="has no version 1"):
        _new_version(organizer, benchmark="newbench", based_on=1)
    assert guideline_current(benchmark="newbench", qa_type="true_false") is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "   "}, "text: write the guideline"),
        ({"qa_type": "essay"}, "QA type: unknown"),
        ({"benchmark": "bad name!"}, "benchmark:"),
        ({"text": "nul \x00 here"}, "text:"),
    ],
)
def test_bad_input_is_refused_naming_the_field(defaults, organizer, kwargs, message):
    before = GuidelineVersion.objects.count()
    with pytest.raises(DomainError, match=message):
        _new_version(organizer, **kwargs)
    assert GuidelineVersion.objects.count() == before


def test_identical_text_is_not_a_new_version(defaults, organizer):
    with pytest.raises(DomainError, match="identical to version 1"):
        _new_version(organizer, text=defaults[("cliniqlink", "true_false")])


# --- reviews record their version; the export shows it -------------------------------------------------------


def test_review_records_the_version_current_when_the_item_was_handed_out(
    defaults, sample_items, config, reviewer, organizer, review
):
    assignment = assignment_next(reviewer=reviewer, qa_type="true_false")
    # saved during the reviewer's hold: applies from the next item on, so the page and the record agree
    v2 = _new_version(organizer)
    stored = review(assignment, "correct", 5)
    assert stored.guideline.number == 1 and stored.guideline.qa_type == "true_false"
    following = assignment_next(reviewer=reviewer, qa_type="true_false")
    assert review(following, "incorrect", 4).guideline == v2


def test_a_leases_guideline_is_found_in_one_query_without_loading_the_item(
    defaults, sample_items, config, reviewer, organizer
):
    from django.test.utils import CaptureQueriesContext

    from annotation.selectors.guidelines import guideline_for_assignment

    handed_out = assignment_next(reviewer=reviewer, qa_type="true_false")
    _new_version(organizer)  # saved during the hold: not the lease's
    bare = Assignment.objects.get(pk=handed_out.pk)  # as the submit reads it: the item not loaded
    with CaptureQueriesContext(connection) as queries:
        found = guideline_for_assignment(bare)
    assert len(queries.captured_queries) == 1 and '"question"' not in queries.captured_queries[0]["sql"]
    loaded = Assignment.objects.select_related("item").get(pk=handed_out.pk)
    assert found == guideline_for_assignment(loaded) and found.number == 1 and found.qa_type == "true_false"


def test_the_api_hands_out_an_item_with_the_guideline_its_review_will_record(
    defaults, sample_items, config, reviewer, organizer
):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(reviewer)
    body = api.post("/api/review/next/", {"qa_type": "true_false"}, format="json").json()
    assert (
        body["guideline"]["number"] == 1
        and body["guideline"]["text"] == guideline_current(benchmark="cliniqlink", qa_type="true_false").text
    )
    _new_version(organizer)  # saved during the hold: the open lease keeps the version it was handed out with
    again = api.post("/api/review/next/", {"qa_type": "true_false"}, format="json").json()
    assert again["id"] == body["id"] and again["guideline"]["number"] == 1


def test_judgement_export_has_the_guideline_version_column(
    defaults, sample_items, config, reviewer, organizer, review, tmp_path
):
    config.second_share = 0.0
    config.save()
    first = review(assignment_next(reviewer=reviewer, qa_type="list"), "correct", 5)
    _new_version(organizer, qa_type="list", text="List rules, version 2.")
    second = review(assignment_next(reviewer=reviewer, qa_type="list"), "incorrect", 3)
    table = pd.read_csv(judgements_export(fmt="csv", out_dir=tmp_path)[0], dtype=str)
    assert "guideline_version" in table.columns
    # Rows come in item order; the seeded queue order decides which item was reviewed first.
    version_by_verdict = dict(zip(table["verdict"], table["guideline_version"], strict=True))
    assert (first.verdict, second.verdict) == ("correct", "incorrect")
    assert version_by_verdict == {"correct": "1", "incorrect": "2"}
    raw = (tmp_path / "judgements.csv").read_text()
    assert ",1," in raw and ".0," not in raw  # whole numbers, not 1.0


# --- safe markdown -------------------------------------------------------------------------------------------


def test_markdown_is_rendered_and_raw_html_escaped_on_every_page(
    defaults, sample_items, config, organizer, make_user, client
):
    _new_version(organizer, text=HOSTILE + "\n\n- **bold** item")
    person = make_user("reviewer")
    assignment = assignment_next(reviewer=person, qa_type="true_false")
    pages = []
    client.force_login(person)
    pages.append(client.get(reverse("review_assignment", args=[assignment.pk])).content.decode())
    pages.append(client.get(reverse("review_next")).content.decode())
    pages.append(client.get(reverse("guidelines")).content.decode())
    client.force_login(organizer)
    pages.append(client.get(reverse("guideline_edit", args=["cliniqlink", "true_false"])).content.decode())
    for html in pages:
        assert '<script>alert("guideline")' not in html and "<img src=x" not in html
        assert 'href="javascript:' not in html
        assert "&lt;script&gt;alert(&quot;guideline&quot;)&lt;/script&gt;" in html
        assert "<strong>bold</strong>" in html


# --- the review start page: read before the first item -------------------------------------------------------


def test_next_item_needs_the_guidelines_read_tick_once_per_set(
    defaults, sample_items, config, reviewer, organizer, client
):
    client.force_login(reviewer)
    page = client.get(reverse("review_next")).content.decode()
    assert 'name="guidelines_read"' in page and "Before your first item" in page
    refused = client.post(reverse("review_next"), {"qa_type": "list"})
    assert refused.status_code == 302 and refused["Location"] == reverse("review_next") + "?qa_type=list"
    assert not Assignment.objects.filter(reviewer=reviewer).exists()
    signature = guideline_set_signature(guidelines_current_set())
    taken = client.post(reverse("review_next"), {"guidelines_read": "on", "guideline_set": signature})
    assert "/review/" in taken["Location"] and Assignment.objects.filter(reviewer=reviewer).count() == 1
    ack = GuidelineAcknowledgement.objects.get(reviewer=reviewer)
    assert ack.versions.count() == len(defaults)
    assert not guideline_acknowledgement_due(reviewer)
    assert 'name="guidelines_read"' not in client.get(reverse("review_next")).content.decode()
    # a new version of one type: asked once more, and that type is marked new
    _new_version(organizer, qa_type="multi_hop", text="Multi-hop, version 2.")
    assert guideline_acknowledgement_due(reviewer)
    page = client.get(reverse("review_next")).content.decode()
    assert 'name="guidelines_read"' in page and "changed since you last confirmed" in page
    entries = page.split('<details class="guideline-entry"')[1:]
    assert [e.split('"')[1] for e in entries if "new to you" in e] == ["guideline-cliniqlink-multi_hop"]
    # a tick given on the page of the old set is not taken for the new one
    stale = client.post(reverse("review_next"), {"guidelines_read": "on", "guideline_set": signature}, follow=True)
    assert "changed while you were reading" in stale.content.decode()
    assert GuidelineAcknowledgement.objects.filter(reviewer=reviewer).count() == 1


def test_review_page_shows_the_items_guideline_beside_it(defaults, sample_items, config, reviewer, client):
    assignment = assignment_next(reviewer=reviewer, qa_type="short_inverse")
    client.force_login(reviewer)
    html = client.get(reverse("review_assignment", args=[assignment.pk])).content.decode()
    assert 'id="guideline-panel"' in html and "Guidelines: Short inverse" in html and "version 1" in html
    assert "false answer on purpose" in html and "new to you" in html
    # the lease end in a <time> element the page's script shows in the viewer's time zone (UTC text as fallback)
    assert f'datetime="{assignment.expires_at.isoformat()}"' in html and "data-local-time" in html


def test_start_page_lists_own_feedback_notes_with_their_outcome(defaults, sample_items, reviewer, make_user, client):
    other = make_user("reviewer")
    FeedbackNote.objects.create(item=sample_items[0], author=reviewer, text="Typo in option B.")
    FeedbackNote.objects.create(
        item=sample_items[1], author=reviewer, text="Unclear question.", status="closed", response="Reworded, thanks."
    )
    FeedbackNote.objects.create(item=sample_items[2], author=other, text="SOMEONE-ELSES-NOTE")
    client.force_login(reviewer)
    html = client.get(reverse("review_next")).content.decode()
    section = html[html.index('id="my-feedback"') :]
    assert "Typo in option B." in section and "Waiting for an adjudicator" in section
    assert "Reworded, thanks." in section and "SOMEONE-ELSES-NOTE" not in html


# --- organizer pages -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "url", "expected"),
    [
        ("organizer", "/organize/guidelines/", 200),
        ("organizer", "/organize/guidelines/cliniqlink/true_false/", 200),
        ("organizer", "/organize/guidelines/cliniqlink/essay/", 404),
        ("organizer", "/organize/guidelines/nobench/true_false/", 404),
        ("reviewer", "/organize/guidelines/", 403),
        ("adjudicator", "/organize/guidelines/cliniqlink/true_false/", 403),
        ("ranker", "/organize/guidelines/", 403),
        ("reviewer", "/guidelines/", 200),
        ("adjudicator", "/guidelines/", 200),
        ("ranker", "/guidelines/", 403),
    ],
)
def test_guideline_pages_by_role(defaults, client, make_user, role, url, expected):
    client.force_login(make_user(role))
    response = client.get(url)
    assert response.status_code == expected
    if expected == 403:
        assert 'class="topbar"' in response.content.decode()  # the portal's styled refusal, not a bare page


def test_reviewer_cannot_post_a_version(defaults, client, reviewer):
    client.force_login(reviewer)
    response = client.post("/organize/guidelines/cliniqlink/true_false/", {"text": "mine", "based_on": "1"})
    assert response.status_code == 403
    assert guideline_current(benchmark="cliniqlink", qa_type="true_false").number == 1


def test_organizer_writes_a_version_and_sees_the_history(defaults, organizer_client, organizer):
    url = "/organize/guidelines/cliniqlink/multiple_choice/"
    page = organizer_client.get(url).content.decode()
    assert "Write version 2" in page and 'name="based_on" value="1"' in page
    response = organizer_client.post(url, {"text": "MC rules v2", "change_note": "shorter", "based_on": "1"})
    assert response.status_code == 302
    page = organizer_client.get(url).content.decode()
    assert "Version 2" in page and "Version 1" in page and "What changed: shorter" in page
    assert str(organizer) in page and "Shipped with the portal" in page
    listing = organizer_client.get("/organize/guidelines/").content.decode()
    assert "Multiple choice" in listing and "Short inverse" in listing
    # stale form: refused, the text kept, nothing stored
    again = organizer_client.post(url, {"text": "late edit", "change_note": "", "based_on": "1"})
    assert again.status_code == 409 and "late edit" in again.content.decode()
    assert guideline_current(benchmark="cliniqlink", qa_type="multiple_choice").number == 2
    assert 'name="based_on" value="2"' in again.content.decode()  # saving again, after comparing, is accepted
    assert organizer_client.post(url, {"text": "late edit", "change_note": "", "based_on": "2"}).status_code == 302
    assert guideline_current(benchmark="cliniqlink", qa_type="multiple_choice").text == "late edit"
    empty = organizer_client.post(url, {"text": "", "change_note": "", "based_on": "3"})
    assert empty.status_code == 400 and "This field is required" in empty.content.decode()


def test_a_lease_records_its_guideline_and_the_submit_reads_no_guideline_version(
    defaults, sample_items, config, reviewer, organizer
):
    from django.test.utils import CaptureQueriesContext

    from annotation.services.review import review_submit

    handed_out = assignment_next(reviewer=reviewer, qa_type="true_false")
    first = handed_out.guideline
    assert first is not None and first.qa_type == "true_false"
    _new_version(organizer)  # saved during the hold: the lease keeps the one it was handed out with
    with CaptureQueriesContext(connection) as queries:
        stored = review_submit(
            assignment_id=handed_out.pk,
            reviewer=reviewer,
            idempotency_key=handed_out.idempotency_key,
            verdict="correct",
            relevance=5,
        )
    assert not [q for q in queries.captured_queries if "annotation_guidelineversion" in q["sql"]]
    assert stored.guideline_id == first.pk
