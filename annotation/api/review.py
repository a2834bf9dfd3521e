"""REST API of one reviewer's work: the next item, the review, a dispute or feedback note on it, own progress. The
same services as the pages, the same rules.

Reviewers only ever receive their own assignment and their own review back; other people's judgements are
served by the adjudication endpoints, which need the adjudicator role.
"""

from __future__ import annotations

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
    NextRequestSerializer,
    OwnReviewSerializer,
    ProgressSerializer,
    ReviewAndNextSerializer,
    ReviewSubmitSerializer,
    ReviewThenNextSerializer,
)
from annotation.services.disputes import dispute_file, feedback_file
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit
from annotation.services.review_drafts import review_draft_clear
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


class ReviewSubmitApi(APIView):
    """Submit the review of your lease. Idempotent: the same key again returns the stored review."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=ReviewSubmitSerializer, responses={201: OwnReviewSerializer})
    def post(self, request, pk):
        data = validated(ReviewSubmitSerializer, request)
        stored = review_submit(assignment_id=pk, reviewer=request.user, **data)
        return Response(OwnReviewSerializer(stored).data, status=status.HTTP_201_CREATED)


class ReviewThenNextApi(APIView):
    """Submit the review of your lease and take the next item, in one request (as the review page does).

    Two steps, each its own transaction: the review is stored first (idempotent, as ``review/``), then the next
    lease is taken (as ``review/next/``, with its type filter); so a review is never lost because no item was
    waiting, and a retry with the same key returns the stored review and the same next lease. 201 with both;
    ``next`` is null when nothing is waiting.
    """

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=ReviewThenNextSerializer, responses={201: ReviewAndNextSerializer})
    def post(self, request, pk):
        data = validated(ReviewThenNextSerializer, request)
        qa_type = data.pop("qa_type")
        stored = review_submit(assignment_id=pk, reviewer=request.user, **data)
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


class ReviewProgressApi(APIView):
    required_roles = (Role.REVIEWER,)

    @extend_schema(responses=ProgressSerializer)
    def get(self, request):
        return Response(ProgressSerializer(reviewer_progress(request.user)).data)
