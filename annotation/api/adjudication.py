"""REST API of adjudication: the queue and deciding an item. Other people's judgements are served here only, to
people with the adjudicator role who are not conflicted on the item."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.adjudication import adjudication_queue
from annotation.selectors.review import reviews_visible_to
from annotation.serializers.adjudication import (
    AdjudicationItemSerializer,
    AdjudicationQueueItemSerializer,
    AdjudicationRequestSerializer,
    ItemFinalSerializer,
)
from annotation.serializers.disputes import NoteSerializer
from annotation.services.adjudication import item_adjudicate
from annotation.services.blinding import adjudication_item_open
from annotation.services.disputes import item_issues_reject
from portal.roles import Role
from portal.serializers import validated


class AdjudicationQueueApi(APIView):
    """Adjudicators: the items they may decide. Organizers: the items no adjudicator may decide."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(responses=AdjudicationQueueItemSerializer(many=True))
    def get(self, request):
        queue = adjudication_queue(user=request.user)[:500]
        return Response(AdjudicationQueueItemSerializer(queue, many=True).data)


class AdjudicationItemApi(APIView):
    """GET: the item with every review side by side (un-blinded). POST: record the final judgement.
    403 for anyone conflicted on the item (they reviewed it or were given it to review), for an item not waiting for
    adjudication (``annotation.selectors.adjudication.item_for_adjudication``), and for an organizer on an item an
    adjudicator may decide (``annotation.services.adjudication.decider_check``). Whoever is shown the reviews is
    never given the item to review afterwards (``annotation.selectors.blinding``)."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(responses=AdjudicationItemSerializer)
    def get(self, request, uid):
        item = adjudication_item_open(user=request.user, uid=uid, where="adjudication API")
        payload = {
            "item": item,
            "status": item.status,
            "reviews": reviews_visible_to(request.user, item),
            "disputes": item.disputes.prefetch_related("comments__author"),
            "feedback": item.feedback_notes.all(),
            "adjudications": item.adjudications.all(),
        }
        return Response(AdjudicationItemSerializer(payload).data)

    @extend_schema(request=AdjudicationRequestSerializer, responses={201: ItemFinalSerializer})
    def post(self, request, uid):
        item = adjudication_item_open(user=request.user, uid=uid, where="adjudication API")
        item_adjudicate(item=item, adjudicator=request.user, **validated(AdjudicationRequestSerializer, request))
        item.refresh_from_db()
        return Response(ItemFinalSerializer(item).data, status=status.HTTP_201_CREATED)


class ItemIssuesRejectApi(APIView):
    """Close every open issue of an item without judging it: its open disputes rejected, its open feedback notes
    closed, ``text`` as the resolution (the adjudication page's "close the open issues"). 403 for anyone conflicted
    on the item."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(
        request=NoteSerializer,
        responses=inline_serializer(
            "ItemIssuesClosed",
            fields={
                "uid": serializers.CharField(),
                "status": serializers.CharField(),
                "disputes_rejected": serializers.IntegerField(),
                "feedback_notes_closed": serializers.IntegerField(),
            },
        ),
    )
    def post(self, request, uid):
        item = adjudication_item_open(user=request.user, uid=uid, where="adjudication API")
        note = validated(NoteSerializer, request)["text"]
        disputes, notes = item_issues_reject(item=item, resolver=request.user, note=note)
        item.refresh_from_db()
        return Response(
            {"uid": item.uid, "status": item.status, "disputes_rejected": disputes, "feedback_notes_closed": notes}
        )
