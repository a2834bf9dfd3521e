"""REST API of disputes and feedback notes: the list one may see, one dispute, its thread, rejecting it.

The same services as the pages, the same rules; the blinding of other people's judgements holds here too."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Dispute
from annotation.selectors.disputes import dispute_for, disputes_visible_to
from annotation.serializers.disputes import DisputeCommentSerializer, DisputeSerializer, NoteSerializer
from annotation.services.blinding import dispute_shown_record
from annotation.services.disputes import dispute_comment_add, dispute_reject
from portal.roles import Role
from portal.serializers import validated

_ANY_VETTING_ROLE = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)


class DisputeListApi(APIView):
    """Reviewers: their own disputes with outcomes. Adjudicators and organizers: all."""

    required_roles = _ANY_VETTING_ROLE

    @extend_schema(responses=DisputeSerializer(many=True))
    def get(self, request):
        disputes = disputes_visible_to(request.user)
        if request.query_params.get("status") in Dispute.Status.values:
            disputes = disputes.filter(status=request.query_params["status"])
        return Response(DisputeSerializer(disputes[:500], many=True).data)


class DisputeDetailApi(APIView):
    required_roles = _ANY_VETTING_ROLE

    @extend_schema(responses=DisputeSerializer)
    def get(self, request, pk):
        dispute = dispute_for(request.user, pk)
        dispute_shown_record(user=request.user, dispute=dispute, with_answer=False, where="dispute API")
        return Response(DisputeSerializer(dispute).data)


class DisputeCommentApi(APIView):
    required_roles = _ANY_VETTING_ROLE

    @extend_schema(request=NoteSerializer, responses={201: DisputeCommentSerializer})
    def post(self, request, pk):
        dispute = dispute_for(request.user, pk)
        comment = dispute_comment_add(
            dispute=dispute, author=request.user, text=validated(NoteSerializer, request)["text"]
        )
        return Response(DisputeCommentSerializer(comment).data, status=status.HTTP_201_CREATED)


class DisputeRejectApi(APIView):
    """Reject a dispute without judging the item (it returns where it was once nothing else is open)."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(request=NoteSerializer, responses=DisputeSerializer)
    def post(self, request, pk):
        dispute = get_object_or_404(Dispute, pk=pk)
        closed = dispute_reject(dispute=dispute, resolver=request.user, note=validated(NoteSerializer, request)["text"])
        return Response(DisputeSerializer(closed).data)
