"""REST API of the vetting workflow: the same services as the pages, the same rules.

Reviewers only ever receive their own assignment and their own review back; other people's judgements are
served by the adjudication endpoints, which need the adjudicator role.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Dispute, GoldItem, ImportBatch, QAItem, VettingConfig
from annotation.selectors.review import (
    adjudication_queue,
    conflict_of_interest_q,
    dispute_for,
    disputes_visible_to,
    item_unblinded_for,
    reviewer_progress,
    reviews_visible_to,
    vetting_progress,
)
from annotation.serializers import review as s
from annotation.services.adjudication import item_adjudicate, item_reassign
from annotation.services.disputes import dispute_comment_add, dispute_file, dispute_reject, feedback_file
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit
from annotation.services.review_drafts import review_draft_clear
from annotation.services.vetting_config import batch_update, vetting_config_update
from portal.roles import Role

_ANY_VETTING_ROLE = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)


def _valid(serializer_class, request):
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ReviewNextApi(APIView):
    """Take the next item (or get the current lease back). 204 when nothing is waiting."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=s.NextRequestSerializer, responses={200: s.AssignmentSerializer, 204: OpenApiResponse()})
    def post(self, request):
        data = _valid(s.NextRequestSerializer, request)
        assignment = assignment_next(reviewer=request.user, qa_type=data["qa_type"])
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(s.AssignmentSerializer(assignment).data)


class ReviewSubmitApi(APIView):
    """Submit the review of your lease. Idempotent: the same key again returns the stored review."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=s.ReviewSubmitSerializer, responses={201: s.OwnReviewSerializer})
    def post(self, request, pk):
        data = _valid(s.ReviewSubmitSerializer, request)
        stored = review_submit(assignment_id=pk, reviewer=request.user, **data)
        return Response(s.OwnReviewSerializer(stored).data, status=status.HTTP_201_CREATED)


class ReviewDisputeApi(APIView):
    """File a dispute instead of a review (ends the lease; the item is held)."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=s.DisputeRequestSerializer, responses={201: s.DisputeSerializer})
    def post(self, request, pk):
        data = _valid(s.DisputeRequestSerializer, request)
        dispute = dispute_file(raised_by=request.user, assignment_id=pk, **data)
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # the lease ended: its draft is done with
        return Response(s.DisputeSerializer(dispute).data, status=status.HTTP_201_CREATED)


class ReviewFeedbackApi(APIView):
    """Leave a feedback note instead of a review (ends the lease; the item is held)."""

    required_roles = (Role.REVIEWER,)

    @extend_schema(request=s.FeedbackRequestSerializer, responses={201: s.FeedbackSerializer})
    def post(self, request, pk):
        data = _valid(s.FeedbackRequestSerializer, request)
        note = feedback_file(author=request.user, assignment_id=pk, **data)
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # the lease ended: its draft is done with
        return Response(s.FeedbackSerializer(note).data, status=status.HTTP_201_CREATED)


class ReviewProgressApi(APIView):
    required_roles = (Role.REVIEWER,)

    @extend_schema(responses=s.ProgressSerializer)
    def get(self, request):
        return Response(s.ProgressSerializer(reviewer_progress(request.user)).data)


class DisputeListApi(APIView):
    """Reviewers: their own disputes with outcomes. Adjudicators and organizers: all."""

    required_roles = _ANY_VETTING_ROLE

    @extend_schema(responses=s.DisputeSerializer(many=True))
    def get(self, request):
        disputes = disputes_visible_to(request.user)
        if request.query_params.get("status") in Dispute.Status.values:
            disputes = disputes.filter(status=request.query_params["status"])
        return Response(s.DisputeSerializer(disputes[:500], many=True).data)


class DisputeDetailApi(APIView):
    required_roles = _ANY_VETTING_ROLE

    @extend_schema(responses=s.DisputeSerializer)
    def get(self, request, pk):
        return Response(s.DisputeSerializer(dispute_for(request.user, pk)).data)


class DisputeCommentApi(APIView):
    required_roles = _ANY_VETTING_ROLE

    @extend_schema(request=s.NoteSerializer, responses={201: s.DisputeCommentSerializer})
    def post(self, request, pk):
        dispute = dispute_for(request.user, pk)
        comment = dispute_comment_add(
            dispute=dispute, author=request.user, text=_valid(s.NoteSerializer, request)["text"]
        )
        return Response(s.DisputeCommentSerializer(comment).data, status=status.HTTP_201_CREATED)


class DisputeRejectApi(APIView):
    """Reject a dispute without judging the item (it returns where it was once nothing else is open)."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(request=s.NoteSerializer, responses=s.DisputeSerializer)
    def post(self, request, pk):
        dispute = get_object_or_404(Dispute, pk=pk)
        closed = dispute_reject(dispute=dispute, resolver=request.user, note=_valid(s.NoteSerializer, request)["text"])
        return Response(s.DisputeSerializer(closed).data)


class AdjudicationQueueApi(APIView):
    """Adjudicators: the items they may decide. Organizers: the items no adjudicator may decide."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(responses=s.AdjudicationQueueItemSerializer(many=True))
    def get(self, request):
        queue = adjudication_queue(user=request.user)[:500]
        return Response(s.AdjudicationQueueItemSerializer(queue, many=True).data)


class AdjudicationItemApi(APIView):
    """GET: the item with every review side by side (un-blinded). POST: record the final judgement.
    403 for anyone conflicted on the item (they reviewed it or were given it to review), and for an organizer on an
    item an adjudicator may decide (``annotation.services.adjudication.decider_check``)."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(responses=s.AdjudicationItemSerializer)
    def get(self, request, uid):
        item = item_unblinded_for(request.user, uid)
        payload = {
            "item": item,
            "status": item.status,
            "reviews": reviews_visible_to(request.user, item),
            "disputes": item.disputes.prefetch_related("comments__author"),
            "feedback": item.feedback_notes.all(),
            "adjudications": item.adjudications.all(),
        }
        return Response(s.AdjudicationItemSerializer(payload).data)

    @extend_schema(request=s.AdjudicationRequestSerializer, responses={201: s.ItemFinalSerializer})
    def post(self, request, uid):
        item = item_unblinded_for(request.user, uid)
        item_adjudicate(item=item, adjudicator=request.user, **_valid(s.AdjudicationRequestSerializer, request))
        item.refresh_from_db()
        return Response(s.ItemFinalSerializer(item).data, status=status.HTTP_201_CREATED)


class ReassignApi(APIView):
    """Organizers: send an item no adjudicator may decide back to review by people who were never given it
    (``annotation.services.adjudication.item_reassign``). 409 when an adjudicator may decide it or it is held."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(
        request=s.ReassignRequestSerializer,
        responses=inline_serializer(
            "ItemReassigned", fields={"uid": serializers.CharField(), "status": serializers.CharField()}
        ),
    )
    def post(self, request, uid):
        item = get_object_or_404(QAItem, uid=uid)
        item_reassign(item=item, organizer=request.user, **_valid(s.ReassignRequestSerializer, request))
        return Response({"uid": item.uid, "status": item.status})


class VettingProgressApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=inline_serializer("VettingProgress", fields={"progress": serializers.DictField()}))
    def get(self, request):
        return Response({"progress": vetting_progress()})


class VettingConfigApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=s.VettingConfigSerializer)
    def get(self, request):
        return Response(s.VettingConfigSerializer(VettingConfig.load()).data)

    @extend_schema(request=s.VettingConfigSerializer, responses=s.VettingConfigSerializer)
    def patch(self, request):
        config = vetting_config_update(by=request.user, **_valid(s.VettingConfigSerializer, request))
        return Response(s.VettingConfigSerializer(config).data)


class BatchUpdateApi(APIView):
    """Pause / resume a batch or set its priority."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(request=s.BatchUpdateSerializer, responses=s.BatchUpdateSerializer)
    def patch(self, request, pk):
        batch = get_object_or_404(ImportBatch, pk=pk)
        batch = batch_update(batch=batch, by=request.user, **_valid(s.BatchUpdateSerializer, request))
        return Response(s.BatchUpdateSerializer(batch).data)


class GoldListApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=s.GoldSerializer(many=True))
    def get(self, request):
        # An organizer who also reviews never learns that an item they were given is gold.
        golds = GoldItem.objects.select_related("item").exclude(conflict_of_interest_q(request.user, "item__"))
        return Response(s.GoldSerializer(golds[:1000], many=True).data)

    @extend_schema(request=s.GoldRequestSerializer, responses={201: s.GoldSerializer})
    def post(self, request):
        data = _valid(s.GoldRequestSerializer, request)
        item = get_object_or_404(QAItem, uid=data.pop("uid"))
        gold = gold_mark(item=item, by=request.user, **data)
        return Response(s.GoldSerializer(gold).data, status=status.HTTP_201_CREATED)
