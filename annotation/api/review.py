"""REST API of one reviewer's work: the next item, the review, a dispute or feedback note on it, own progress. The
same services as the pages, the same rules.

Reviewers only ever receive their own assignment and their own review back; other people's judgements are
served by the adjudication endpoints, which need the adjudicator role.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.review import reviewer_progress
from annotation.serializers.disputes import (
    DisputeRequestSerializer,
    DisputeSerializer,
    FeedbackRequestSerializer,
    FeedbackSerializer,
)
from annotation.serializers.review import (
    AssignmentSerializer,
    GiveBackRequestSerializer,
    GiveBackSerializer,
    NextRequestSerializer,
    OwnReviewSerializer,
    ProgressSerializer,
    ReviewAlreadySentSerializer,
    ReviewAndNextSerializer,
    ReviewSubmitSerializer,
    ReviewThenNextSerializer,
)
from annotation.services.disputes import dispute_file, feedback_file
from annotation.services.queue import assignment_give_back, assignment_next
from annotation.services.review import ReviewAlreadySent, review_submit
from annotation.services.review_drafts import review_draft_clear
from annotation.services.review_edit import answer_own
from portal.roles import Role
from portal.serializers import validated


class ReviewNextApi(APIView):
    """Take the next item (or get the current lease back). 204 when nothing is waiting."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=NextRequestSerializer, responses={200: AssignmentSerializer, 204: OpenApiResponse()})
    def post(self, request):
        data = validated(NextRequestSerializer, request)
        assignment = assignment_next(reviewer=request.user, qa_type=data["qa_type"])
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(AssignmentSerializer(assignment).data)


def _already_sent(request, pk: int, exc: ReviewAlreadySent) -> Response:
    """409: a different review on a lease that already has one. What is stored, and whether (and where) it may still
    be changed; nothing was changed."""
    answer = answer_own(reviewer=request.user, assignment_id=pk)
    change_url = reverse("review_edit", args=[pk]) if answer.editable else None
    detail = str(exc) + (
        f" You can still change the stored review on its page, {change_url}." if change_url else f" {answer.refusal}"
    )
    body = {
        "detail": detail,
        "code": exc.code,
        "stored": OwnReviewSerializer(exc.stored).data,
        "editable": answer.editable,
        "change_url": change_url,
    }
    return Response(body, status=status.HTTP_409_CONFLICT)


_ALREADY_SENT = OpenApiResponse(
    ReviewAlreadySentSerializer, description="A different review was already stored on this lease; nothing changed."
)


class ReviewSubmitApi(APIView):
    """Submit the review of your lease. Idempotent: the same review again (same key) returns the stored review; a
    different one on a lease already answered (a second tab, a changed resend) is refused with 409 and what is
    stored. The verdict cannot_tell needs its ``cannot_tell_reason`` (excerpt, ambiguous, outdated, outside_field),
    and no other verdict takes one (400 either way, nothing stored); outside_field hands the item to another
    reviewer, never back to you."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=ReviewSubmitSerializer, responses={201: OwnReviewSerializer, 409: _ALREADY_SENT})
    def post(self, request, pk):
        data = validated(ReviewSubmitSerializer, request)
        try:
            stored = review_submit(assignment_id=pk, reviewer=request.user, **data)
        except ReviewAlreadySent as exc:
            return _already_sent(request, pk, exc)
        return Response(OwnReviewSerializer(stored).data, status=status.HTTP_201_CREATED)


class ReviewThenNextApi(APIView):
    """Submit the review of your lease and take the next item, in one request (as the review page does).

    Two steps, each its own transaction: the review is stored first (idempotent, as ``review/``), then the next
    lease is taken (as ``review/next/``, with its type filter); so a review is never lost because no item was
    waiting, and a retry with the same key returns the stored review and the same next lease. 201 with both;
    ``next`` is null when nothing is waiting. A different review on a lease already answered: 409 as ``review/``,
    and no lease is taken.
    """

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=ReviewThenNextSerializer, responses={201: ReviewAndNextSerializer, 409: _ALREADY_SENT})
    def post(self, request, pk):
        data = validated(ReviewThenNextSerializer, request)
        qa_type = data.pop("qa_type")
        try:
            stored = review_submit(assignment_id=pk, reviewer=request.user, **data)
        except ReviewAlreadySent as exc:
            return _already_sent(request, pk, exc)
        following = assignment_next(reviewer=request.user, qa_type=qa_type)
        body = {
            "review": OwnReviewSerializer(stored).data,
            "next": AssignmentSerializer(following).data if following is not None else None,
        }
        return Response(body, status=status.HTTP_201_CREATED)


class ReviewDisputeApi(APIView):
    """File a dispute instead of a review (ends the lease; the item is held)."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=DisputeRequestSerializer, responses={201: DisputeSerializer})
    def post(self, request, pk):
        data = validated(DisputeRequestSerializer, request)
        dispute = dispute_file(raised_by=request.user, assignment_id=pk, **data)
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # the lease ended: its draft is done with
        return Response(DisputeSerializer(dispute).data, status=status.HTTP_201_CREATED)


class ReviewFeedbackApi(APIView):
    """Leave a feedback note instead of a review (ends the lease; the item is held)."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=FeedbackRequestSerializer, responses={201: FeedbackSerializer})
    def post(self, request, pk):
        data = validated(FeedbackRequestSerializer, request)
        note = feedback_file(author=request.user, assignment_id=pk, **data)
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # the lease ended: its draft is done with
        return Response(FeedbackSerializer(note).data, status=status.HTTP_201_CREATED)


class ReviewGiveBackApi(APIView):
    """Give the item back without a judgement (reason: outside_field, conflict_of_interest or other, with an optional
    note): the lease ends and the item goes to someone else, never back to you."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=GiveBackRequestSerializer, responses={200: GiveBackSerializer})
    def post(self, request, pk):
        data = validated(GiveBackRequestSerializer, request)
        lease = assignment_give_back(assignment_id=pk, reviewer=request.user, **data)
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # the lease ended: its draft is done with
        return Response(GiveBackSerializer(lease).data)


class ReviewProgressApi(APIView):
    required_roles = (Role.REVIEWER,)

    @extend_schema(responses=ProgressSerializer)
    def get(self, request):
        return Response(ProgressSerializer(reviewer_progress(request.user)).data)
