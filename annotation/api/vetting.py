"""REST API of the organizers' vetting oversight: progress, settings, batches, gold items, reassigning an item."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import GoldItem, ImportBatch, QAItem, VettingConfig
from annotation.selectors.review import conflict_of_interest_q
from annotation.selectors.vetting import vetting_progress
from annotation.serializers.vetting import (
    BatchUpdateSerializer,
    GoldRequestSerializer,
    GoldSerializer,
    ReassignRequestSerializer,
    VettingConfigSerializer,
)
from annotation.services.adjudication import item_reassign
from annotation.services.gold import gold_mark
from annotation.services.vetting_config import batch_update, vetting_config_update
from portal.roles import Role
from portal.serializers import validated


class ReassignApi(APIView):
    """Organizers: send an item no adjudicator may decide back to review by people who were never given it
    (``annotation.services.adjudication.item_reassign``). 409 when an adjudicator may decide it or it is held."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(
        request=ReassignRequestSerializer,
        responses=inline_serializer(
            "ItemReassigned", fields={"uid": serializers.CharField(), "status": serializers.CharField()}
        ),
    )
    def post(self, request, uid):
        item = get_object_or_404(QAItem, uid=uid)
        item_reassign(item=item, organizer=request.user, **validated(ReassignRequestSerializer, request))
        return Response({"uid": item.uid, "status": item.status})


class VettingProgressApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=inline_serializer("VettingProgress", fields={"progress": serializers.DictField()}))
    def get(self, request):
        return Response({"progress": vetting_progress()})


class VettingConfigApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=VettingConfigSerializer)
    def get(self, request):
        return Response(VettingConfigSerializer(VettingConfig.load()).data)

    @extend_schema(request=VettingConfigSerializer, responses=VettingConfigSerializer)
    def patch(self, request):
        config = vetting_config_update(by=request.user, **validated(VettingConfigSerializer, request))
        return Response(VettingConfigSerializer(config).data)


class BatchUpdateApi(APIView):
    """Pause / resume a batch or set its priority."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(request=BatchUpdateSerializer, responses=BatchUpdateSerializer)
    def patch(self, request, pk):
        batch = get_object_or_404(ImportBatch, pk=pk)
        batch = batch_update(batch=batch, by=request.user, **validated(BatchUpdateSerializer, request))
        return Response(BatchUpdateSerializer(batch).data)


class GoldListApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=GoldSerializer(many=True))
    def get(self, request):
        # An organizer who also reviews never learns that an item they were given is gold.
        golds = GoldItem.objects.select_related("item").exclude(conflict_of_interest_q(request.user, "item__"))
        return Response(GoldSerializer(golds[:1000], many=True).data)

    @extend_schema(request=GoldRequestSerializer, responses={201: GoldSerializer})
    def post(self, request):
        data = validated(GoldRequestSerializer, request)
        item = get_object_or_404(QAItem, uid=data.pop("uid"))
        gold = gold_mark(item=item, by=request.user, **data)
        return Response(GoldSerializer(gold).data, status=status.HTTP_201_CREATED)
