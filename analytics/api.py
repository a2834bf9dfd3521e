"""Analytics API: request reports and scoring runs (computed by jobs) and read their results."""

from __future__ import annotations

import math
from collections.abc import Callable

from django.db.models import Model
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from analytics.nuggets.board import nugget_board_shown
from analytics.nuggets.matching import nugget_matcher_request
from analytics.serializers import (
    ReportRequestSerializer,
    ReportSerializer,
    ScoringRequestSerializer,
    ScoringRunSerializer,
)
from analytics.services.requests import report_request, scoring_request
from portal.roles import Role
from ranking.models import Study


class _JobCreateApi(APIView):
    """POST: validate the request, let the service record it and queue its job, answer 202 with the record."""

    required_roles = (Role.ORGANIZER,)
    request_serializer: type[serializers.Serializer]
    record_serializer: type[serializers.ModelSerializer]
    service: Callable[..., Model]

    def post(self, request):
        data = self.request_serializer(data=request.data)
        data.is_valid(raise_exception=True)
        record = self.service(user=request.user, **data.validated_data)
        record.refresh_from_db()
        return Response(self.record_serializer(record).data, status=status.HTTP_202_ACCEPTED)


class _JobDetailApi(APIView):
    """GET: one record, with its result once the job has finished."""

    required_roles = (Role.ORGANIZER,)
    record_serializer: type[serializers.ModelSerializer]

    def get(self, request, pk):
        model = self.record_serializer.Meta.model
        return Response(self.record_serializer(get_object_or_404(model, pk=pk)).data)


@extend_schema_view(post=extend_schema(request=ReportRequestSerializer, responses={202: ReportSerializer}))
class ReportCreateApi(_JobCreateApi):
    request_serializer, record_serializer = ReportRequestSerializer, ReportSerializer
    service = staticmethod(report_request)


@extend_schema_view(get=extend_schema(responses=ReportSerializer))
class ReportDetailApi(_JobDetailApi):
    record_serializer = ReportSerializer


@extend_schema_view(post=extend_schema(request=ScoringRequestSerializer, responses={202: ScoringRunSerializer}))
class ScoringRunCreateApi(_JobCreateApi):
    request_serializer, record_serializer = ScoringRequestSerializer, ScoringRunSerializer
    service = staticmethod(scoring_request)


@extend_schema_view(get=extend_schema(responses=ScoringRunSerializer))
class ScoringRunDetailApi(_JobDetailApi):
    record_serializer = ScoringRunSerializer


@extend_schema_view(
    get=extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="A nugget study's scores per system and labeller (means, 95 % intervals, answers), agreement "
        "(physicians' ordinal alpha; each automatic labeller against the physicians' consensus, with the "
        "leave-one-out ceiling) and rank correlations, as on the nugget leaderboard. Labellers: physicians by "
        "pseudonym, consensus, matcher, judges by name. The figures are the stored board: `computed_at` says when, "
        "`changed_since` what physicians or imports changed since, `job` the job computing the next one. Before the "
        "first is computed: 202 with the job computing it (follow it on /api/jobs/ID/).",
    )
)
class NuggetReportApi(APIView):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        study = get_object_or_404(Study, pk=pk)
        state = nugget_board_shown(study, user=request.user)
        if state.board is None:
            return Response(
                {"study": study.pk, "computed_at": None, "job": str(state.job.pk) if state.job else None},
                status=202 if state.computing else 200,
            )
        board = state.board
        return Response(
            {
                "study": study.pk,
                "computed_at": state.computed_at,
                "changed_since": state.changes,
                "job": str(state.job.pk) if state.computing else None,
                **board.summary,
                "reference_systems": board.reference_systems,
                "judges": board.judges,
                "ranking_correlation": _json_figures(board.ranking_correlation),
            }
        )


@extend_schema_view(post=extend_schema(request=None, responses={202: OpenApiTypes.OBJECT}))
class NuggetMatcherRunApi(APIView):
    """POST: queue the matcher on the study (202 with the job id); progress on GET /api/jobs/ID/ or /jobs/ID/."""

    required_roles = (Role.ORGANIZER,)

    def post(self, request, pk):
        job = nugget_matcher_request(study=get_object_or_404(Study, pk=pk), user=request.user)
        return Response({"job": str(job.pk), "params": job.params}, status=status.HTTP_202_ACCEPTED)


def _json_figures(value):
    """Figures for the API in full precision (programs read them; pages round for people), NaN as null."""
    if isinstance(value, dict):
        return {k: _json_figures(v) for k, v in value.items()}
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value
