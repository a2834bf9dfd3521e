"""A reviewer who cannot tell says why (the excerpt is missing or wrong, the question is ambiguous, the medicine is
outdated, outside my field): the reason is required with "cannot tell" and refused with any other verdict, in the
service, on the review page, over the API and when a review is changed; nothing is stored when it is refused."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, GoldAnswer, QAItem, Review, ReviewRevision
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.review_drafts import review_draft_clean
from annotation.services.review_edit import answer_edit
from annotation.workflow import CannotTellReason, ItemStatus, cannot_tell_reason_problem
from portal.errors import DomainError
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

READ_GUIDELINES = {"guidelines_read": "on"}
REASONS = ["excerpt", "ambiguous", "outdated", "outside_field"]


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _nothing_stored(lease: Assignment) -> None:
    """The lease is still live, its item still waits for this review, and no review or answer exists."""
    lease.refresh_from_db()
    assert lease.status == Assignment.Status.ACTIVE
    assert QAItem.objects.get(pk=lease.item_id).status == ItemStatus.IN_REVIEW
    assert not Review.objects.filter(assignment=lease).exists()
    assert not GoldAnswer.objects.filter(assignment=lease).exists()
    assert not AuditEntry.objects.filter(action="review_created").exists()


# --- the rule (pure) -------------------------------------------------------------------------------------------


def test_the_reasons_are_the_four_the_reviewers_are_offered():
    assert CannotTellReason.values == REASONS
    assert CannotTellReason.labels == [
        "The excerpt is missing or wrong",
        "The question is ambiguous",
        "The medicine is outdated",
        "Outside my field",
    ]


@pytest.mark.parametrize(
    ("verdict", "reason", "fits"),
    [
        *[("cannot_tell", reason, True) for reason in REASONS],
        ("cannot_tell", "", False),
        ("cannot_tell", "bored", False),
        ("correct", "", True),
        ("incorrect", "", True),
        ("correct", "excerpt", False),
        ("incorrect", "outside_field", False),
    ],
)
def test_a_reason_is_required_with_cannot_tell_and_refused_with_any_other_verdict(verdict, reason, fits):
    assert (cannot_tell_reason_problem(verdict=verdict, reason=reason) == "") is fits


def test_the_refusals_say_what_to_do():
    missing = cannot_tell_reason_problem(verdict="cannot_tell", reason="")
    assert missing.startswith("Say why you cannot tell") and "outside my field" in missing
    extra = cannot_tell_reason_problem(verdict="correct", reason="excerpt")
    assert "only with “Cannot tell from the source”" in extra


# --- the service ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["excerpt", "ambiguous", "outdated"])
def test_the_service_stores_the_reason_with_cannot_tell(sample_items, config, reviewer, review, reason):
    lease = assignment_next(reviewer=reviewer)
    stored = review(lease, "cannot_tell", 3, cannot_tell_reason=reason)
    row = Review.objects.get(assignment=lease)
    assert stored.pk == row.pk and (row.verdict, row.cannot_tell_reason) == ("cannot_tell", reason)
    assert row.superseded_at is None  # a fixable reason is a judgement: it routes the item as "cannot tell" did
    assert AuditEntry.objects.get(action="review_created").after["cannot_tell_reason"] == reason


@pytest.mark.parametrize(("verdict", "reason"), [("cannot_tell", ""), ("correct", "excerpt"), ("cannot_tell", "x")])
def test_the_service_refuses_a_missing_or_misplaced_reason_and_stores_nothing(
    sample_items, config, reviewer, review, verdict, reason
):
    lease = assignment_next(reviewer=reviewer)
    with pytest.raises(DomainError) as refused:
        review(lease, verdict, 3, cannot_tell_reason=reason)
    assert refused.value.code == "invalid_cannot_tell_reason" and refused.value.http_status == 400
    _nothing_stored(lease)


def test_a_gold_answer_keeps_its_reason_and_is_refused_the_same_way(sample_items, config, organizer, make_user, review):
    gold_mark(item=sample_items[0], expected_verdict="cannot_tell", by=organizer)
    config.gold_rate = 1.0
    config.save()
    lease = assignment_next(reviewer=make_user("reviewer"), gold_draw=0.0)
    assert lease.stage == "gold"
    with pytest.raises(DomainError):
        review(lease, "cannot_tell", 3)
    assert not GoldAnswer.objects.exists()
    answer = review(lease, "cannot_tell", 3, cannot_tell_reason="outside_field")
    assert isinstance(answer, GoldAnswer) and answer.cannot_tell_reason == "outside_field"
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.SUBMITTED  # never touches its item


def test_the_same_review_sent_again_is_a_retry_and_another_reason_is_a_different_review(
    sample_items, config, reviewer, review
):
    from annotation.services.review import ReviewAlreadySent

    lease = assignment_next(reviewer=reviewer)
    first = review(lease, "cannot_tell", 2, cannot_tell_reason="ambiguous")
    assert review(lease, "cannot_tell", 2, cannot_tell_reason="ambiguous").pk == first.pk
    with pytest.raises(ReviewAlreadySent) as sent:
        review(lease, "cannot_tell", 2, cannot_tell_reason="outdated")
    assert "Cannot tell from the source (the question is ambiguous)" in str(sent.value)
    assert Review.objects.get().cannot_tell_reason == "ambiguous"


# --- the review page ----------------------------------------------------------------------------------------------


def _page_lease(client, user) -> Assignment:
    client.force_login(user)
    client.post(reverse("review_next"), READ_GUIDELINES)
    return Assignment.objects.get(reviewer=user, status=Assignment.Status.ACTIVE)


def _form(lease: Assignment, **fields) -> dict:
    return {"idempotency_key": str(lease.idempotency_key), "relevance": "3", "comment": "", **fields}


def test_the_page_offers_the_reasons_as_a_radio_group_hidden_until_cannot_tell(client, sample_items, config, reviewer):
    lease = _page_lease(client, reviewer)
    page = client.get(reverse("review_assignment", args=[lease.pk])).content.decode()
    fieldset = page[page.index('<fieldset id="cannot-tell-reason"') :]
    fieldset = fieldset[: fieldset.index("</fieldset>")]
    assert fieldset.startswith('<fieldset id="cannot-tell-reason" class="cannot-tell-reason" hidden disabled>')
    for value, label in CannotTellReason.choices:
        assert f'type="radio" name="cannot_tell_reason" value="{value}" id="reason-{value}"' in fieldset
        assert label in fieldset
    assert "<script>" not in page and " style=" not in page  # the CSP: static files only


def test_the_page_refuses_cannot_tell_without_a_reason_and_shows_the_reasons(client, sample_items, config, reviewer):
    lease = _page_lease(client, reviewer)
    response = client.post(reverse("review_assignment", args=[lease.pk]), _form(lease, verdict="cannot_tell"))
    assert response.status_code == 400
    page = response.content.decode()
    assert "Say why you cannot tell" in page
    # Shown this time (the verdict sent was "cannot tell"), with the verdict kept.
    assert '<fieldset id="cannot-tell-reason" class="cannot-tell-reason">' in page
    assert 'value="cannot_tell" id="verdict-cannot_tell"\n              checked' in page
    _nothing_stored(lease)


def test_the_page_refuses_a_reason_with_another_verdict(client, sample_items, config, reviewer):
    lease = _page_lease(client, reviewer)
    form = _form(lease, verdict="correct", cannot_tell_reason="outdated")
    response = client.post(reverse("review_assignment", args=[lease.pk]), form)
    assert response.status_code == 400 and "A reason is given only with" in response.content.decode()
    _nothing_stored(lease)


def test_the_page_stores_cannot_tell_with_its_reason_and_opens_the_next_item(client, sample_items, config, reviewer):
    lease = _page_lease(client, reviewer)
    form = _form(lease, verdict="cannot_tell", cannot_tell_reason="excerpt")
    response = client.post(reverse("review_assignment", args=[lease.pk]), form)
    assert response.status_code == 302
    assert Review.objects.get(assignment=lease).cannot_tell_reason == "excerpt"
    assert Assignment.objects.filter(reviewer=reviewer, status=Assignment.Status.ACTIVE).exclude(pk=lease.pk).exists()


# --- the API ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["api_review_submit", "api_review_then_next"])
def test_the_api_requires_the_reason_with_cannot_tell_and_refuses_it_otherwise(
    sample_items, config, reviewer, endpoint
):
    lease = assignment_next(reviewer=reviewer)
    url = reverse(endpoint, args=[lease.pk])
    body = {"idempotency_key": str(lease.idempotency_key), "relevance": 4}
    missing = _api(reviewer).post(url, {**body, "verdict": "cannot_tell"}, format="json")
    assert missing.status_code == 400 and "Say why you cannot tell" in str(missing.json())
    misplaced = _api(reviewer).post(url, {**body, "verdict": "correct", "cannot_tell_reason": "excerpt"}, format="json")
    assert misplaced.status_code == 400 and "only with" in str(misplaced.json())
    unknown = _api(reviewer).post(url, {**body, "verdict": "cannot_tell", "cannot_tell_reason": "x"}, format="json")
    assert unknown.status_code == 400
    _nothing_stored(lease)
    stored = _api(reviewer).post(
        url, {**body, "verdict": "cannot_tell", "cannot_tell_reason": "outdated"}, format="json"
    )
    assert stored.status_code == 201
    answer = stored.json().get("review", stored.json())
    assert (answer["verdict"], answer["cannot_tell_reason"]) == ("cannot_tell", "outdated")
    assert Review.objects.get(assignment=lease).cannot_tell_reason == "outdated"


def test_the_api_answers_an_empty_reason_for_other_verdicts(sample_items, config, reviewer):
    lease = assignment_next(reviewer=reviewer)
    body = {"idempotency_key": str(lease.idempotency_key), "relevance": 4, "verdict": "correct"}
    answer = _api(reviewer).post(reverse("api_review_submit", args=[lease.pk]), body, format="json")
    assert answer.status_code == 201 and answer.json()["cannot_tell_reason"] == ""


def test_the_api_schema_documents_the_reason(sample_items, reviewer):
    schema = _api(reviewer).get("/api/schema/?format=json").json()
    field = schema["components"]["schemas"]["ReviewSubmitRequest"]["properties"]["cannot_tell_reason"]
    assert "required with the verdict cannot_tell" in str(schema["components"]["schemas"])
    assert field and "cannot_tell_reason" in schema["components"]["schemas"]["OwnReview"]["properties"]


# --- changing one's review, and the draft ----------------------------------------------------------------------


def test_a_change_to_cannot_tell_needs_its_reason_and_the_earlier_reason_is_kept(
    sample_items, config, reviewer, review
):
    config.second_share = 1.0  # waits for a second reviewer nobody was given: still changeable
    config.save()
    lease = assignment_next(reviewer=reviewer)
    review(lease, "cannot_tell", 3, cannot_tell_reason="ambiguous")
    with pytest.raises(DomainError):
        answer_edit(reviewer=reviewer, assignment_id=lease.pk, verdict="cannot_tell", relevance=3)
    with pytest.raises(DomainError):
        answer_edit(reviewer=reviewer, assignment_id=lease.pk, verdict="correct", relevance=3, cannot_tell_reason="x")
    assert not ReviewRevision.objects.exists()
    answer_edit(
        reviewer=reviewer, assignment_id=lease.pk, verdict="cannot_tell", relevance=3, cannot_tell_reason="outdated"
    )
    row = Review.objects.get(assignment=lease)
    assert row.cannot_tell_reason == "outdated"
    assert ReviewRevision.objects.get(review=row).cannot_tell_reason == "ambiguous"
    answer_edit(reviewer=reviewer, assignment_id=lease.pk, verdict="correct", relevance=3)
    row.refresh_from_db()
    assert (row.verdict, row.cannot_tell_reason) == ("correct", "")
    entry = AuditEntry.objects.filter(action="review_edited").order_by("pk").last()
    assert entry.before["cannot_tell_reason"] == "outdated" and "cannot_tell_reason" not in entry.after


def test_the_edit_page_refuses_cannot_tell_without_a_reason(client, sample_items, config, reviewer, review):
    config.second_share = 0.0
    config.save()
    lease = assignment_next(reviewer=reviewer)
    review(lease, "correct", 3)
    client.force_login(reviewer)
    url = reverse("review_edit", args=[lease.pk])
    refused = client.post(url, {"verdict": "cannot_tell", "relevance": "3"})
    assert refused.status_code == 400 and "Say why you cannot tell" in refused.content.decode()
    assert Review.objects.get(assignment=lease).verdict == "correct"
    changed = client.post(url, {"verdict": "cannot_tell", "cannot_tell_reason": "excerpt", "relevance": "3"})
    assert changed.status_code == 302
    assert Review.objects.get(assignment=lease).cannot_tell_reason == "excerpt"
    mine = client.get(reverse("review_mine")).content.decode()
    assert "The excerpt is missing or wrong" in mine


def test_the_draft_keeps_the_reason_and_refuses_an_unknown_one():
    assert review_draft_clean({"verdict": "cannot_tell", "reason": "outdated"})["reason"] == "outdated"
    assert review_draft_clean({"verdict": "correct"})["reason"] == ""
    with pytest.raises(DomainError):
        review_draft_clean({"verdict": "cannot_tell", "reason": "bored"})


# --- the migration --------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_reviews_stored_before_the_reason_existed_are_kept_without_one(sample_items, config, reviewer):
    """An earlier "cannot tell" review has no reason: the migration keeps it (the database refuses a reason only
    with another verdict, never its absence), and back and forth the column comes and goes."""
    lease = assignment_next(reviewer=reviewer)
    executor = MigrationExecutor(connection)
    executor.migrate([("annotation", "0016_item_exposure")])
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_review (assignment_id, item_id, reviewer_id, stage, verdict, relevance, comment,"
            " server_seconds, created_at) VALUES (%s, %s, %s, 'primary', 'cannot_tell', 3, '', 1.0, now())",
            [lease.pk, lease.item_id, reviewer.pk],
        )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    old = Review.objects.get(assignment=lease)
    assert (old.verdict, old.cannot_tell_reason) == ("cannot_tell", "")
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.filter(pk=old.pk).update(verdict="correct", cannot_tell_reason="excerpt")
