"""REST API of adjudication: the queue and deciding an item. Other people's judgements are served here only, to
people with the adjudicator role who are not conflicted on the item."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.selectors.adjudication import adjudication_queue
from annotation.selectors.review import item_unblinded_for, reviews_visible_to
from annotation.serializers.adjudication import (
    AdjudicationItemSerializer,
    AdjudicationQueueItemSerializer,
    AdjudicationRequestSerializer,
    ItemFinalSerializer,
)
from annotation.services.adjudication import item_adjudicate
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
    403 for anyone conflicted on the item (they reviewed it or were given it to review), and for an organizer on an
    item an adjudicator may decide (``annotation.services.adjudication.decider_check``)."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    @extend_schema(responses=AdjudicationItemSerializer)
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
        return Response(AdjudicationItemSerializer(payload).data)

    @extend_schema(request=AdjudicationRequestSerializer, responses={201: ItemFinalSerializer})
    def post(self, request, uid):
        item = item_unblinded_for(request.user, uid)
        item_adjudicate(item=item, adjudicator=request.user, **validated(AdjudicationRequestSerializer, request))
        item.refresh_from_db()
        return Response(ItemFinalSerializer(item).data, status=status.HTTP_201_CREATED)
