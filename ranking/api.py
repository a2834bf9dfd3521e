"""REST API of the ranking app: rankers (next task, blinded task, submit) and organizers (studies, exports)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from portal.errors import DomainError
from portal.roles import Role
from ranking.downloads import export_response, study_export_name
from ranking.models import ReferenceFlag, Study
from ranking.selectors.studies import (
    studies_for_ranker,
    study_list,
    study_progress,
    system_list,
    task_blinded,
    task_for_ranker,
)
from ranking.serializers import (
    BlindedTaskSerializer,
    RankerStudySerializer,
    ReferenceFlagSerializer,
    StudyCreatedSerializer,
    StudyCreateSerializer,
    StudyQuestionSerializer,
    StudySerializer,
    StudyStateSerializer,
    SubmitResultSerializer,
    SubmitSerializer,
    SystemSerializer,
)
from ranking.services.exports import FORMATS, rankings_export_chunks
from ranking.services.feedback import reference_flag_send, reference_flags_detect
from ranking.services.queue import task_next
from ranking.services.studies import study_create, study_state_set
from ranking.services.submissions import IncompleteRanking, task_submit

# --- rankers ----------------------------------------------------------------------------------------------------


class RankerStudyListApi(APIView):
    """Open studies with the caller's own progress."""

    required_roles = (Role.RANKER,)

    @extend_schema(responses=RankerStudySerializer(many=True))
    def get(self, request):
        return Response(RankerStudySerializer(studies_for_ranker(ranker=request.user), many=True).data)


class RankingNextApi(APIView):
    """Lease (or resume) the caller's next question of a study; 204 when none is left for them."""

    required_roles = (Role.RANKER,)

    @extend_schema(
        request=None, responses={200: BlindedTaskSerializer, 204: OpenApiResponse(description="Nothing left")}
    )
    def post(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        task = task_next(study=study, ranker=request.user)
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(BlindedTaskSerializer(task_blinded(task=task)).data)


class RankingTaskDetailApi(APIView):
    """One of the caller's tasks, blinded: slot letters and answer texts only."""

    required_roles = (Role.RANKER,)

    @extend_schema(responses=BlindedTaskSerializer)
    def get(self, request, task_id):
        task = task_for_ranker(task_id=task_id, ranker=request.user)
        return Response(BlindedTaskSerializer(task_blinded(task=task)).data)


class RankingTaskSubmitApi(APIView):
    """Submit a ranking. The ``Idempotency-Key`` header (or body field) makes a retry return the stored result."""

    required_roles = (Role.RANKER,)

    @extend_schema(request=SubmitSerializer, responses={200: SubmitResultSerializer})
    def post(self, request, task_id):
        serializer = SubmitSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            task = task_submit(
                task_id=task_id,
                ranker=request.user,
                answers=data["answers"],
                comment=data["comment"],
                time_spent_ms=data.get("time_spent_ms"),
                idempotency_key=request.headers.get("Idempotency-Key") or data["idempotency_key"],
                unblinding_guess=data["unblinding_guess"],
                nugget_labels=data["nugget_labels"],
                sentence_marks=data["sentence_marks"],
                spans=data["spans"],
            )
        except IncompleteRanking as exc:
            return Response({"detail": str(exc), "code": exc.code, "problems": exc.problems}, status=400)
        return Response(
            SubmitResultSerializer({"task": task.pk, "status": task.status, "submitted_at": task.submitted_at}).data
        )


# --- organizers ------------------------------------------------------------------------------------------------


class SystemListApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=SystemSerializer(many=True))
    def get(self, request):
        return Response(SystemSerializer(system_list(), many=True).data)


class StudyListCreateApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=StudySerializer(many=True))
    def get(self, request):
        return Response(StudySerializer(study_list().prefetch_related("systems"), many=True).data)

    @extend_schema(request=StudyCreateSerializer, responses={201: StudyCreatedSerializer})
    def post(self, request):
        serializer = StudyCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = study_create(**serializer.validated_data, user=request.user)
        study = study_list().get(pk=result.study.pk)
        body = {
            "study": study,
            "included": result.included,
            "excluded": result.excluded,
            "excluded_without_nuggets": result.excluded_without_nuggets,
        }
        return Response(StudyCreatedSerializer(body).data, status=status.HTTP_201_CREATED)


class StudyQuestionListApi(APIView):
    """The study's questions in queue order, each with whether physicians are asked for it and its chance of being
    drawn under a designed sample (null without one): what an estimate made outside the portal needs."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=StudyQuestionSerializer(many=True))
    def get(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        questions = study.questions.select_related("item").order_by("position")
        return Response(StudyQuestionSerializer(questions, many=True).data)


class StudyDetailApi(APIView):
    """A study with its progress; PATCH ``{"state": "open"|"closed"}`` opens or closes it."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=StudySerializer)
    def get(self, request, study_id):
        study = get_object_or_404(study_list(), pk=study_id)
        return Response({**StudySerializer(study).data, "progress": study_progress(study=study)})

    @extend_schema(request=StudyStateSerializer, responses=StudySerializer)
    def patch(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        serializer = StudyStateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        study_state_set(study=study, state=serializer.validated_data["state"], user=request.user)
        return Response(StudySerializer(study_list().get(pk=study.pk)).data)


class StudyExportApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(
        parameters=[
            OpenApiParameter("fmt", str, enum=list(FORMATS), default="csv"),
            OpenApiParameter("identities", bool, default=False),
            OpenApiParameter(
                "blind_systems", bool, default=False, description='Span exports: systems as "system 1", "system 2"….'
            ),
        ],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
    )
    def get(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        fmt = request.query_params.get("fmt", "csv")  # not "format": DRF reserves it for renderers
        if fmt not in FORMATS:
            raise DomainError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
        identities = request.query_params.get("identities") in ("1", "true")
        blind = request.query_params.get("blind_systems") in ("1", "true")
        chunks = rankings_export_chunks(
            study=study, fmt=fmt, identities=identities, blind_systems=blind, user=request.user
        )
        return export_response(chunks, fmt, study_export_name(study, fmt, identities=identities, blind_systems=blind))


class ReferenceFlagListApi(APIView):
    """Questions whose reference answer the rankers judged poorly (refreshed on each call)."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=ReferenceFlagSerializer(many=True))
    def get(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        return Response(ReferenceFlagSerializer(reference_flags_detect(study=study), many=True).data)


class ReferenceFlagSendApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(request=None, responses=ReferenceFlagSerializer)
    def post(self, request, study_id, flag_id):
        flag = get_object_or_404(ReferenceFlag, pk=flag_id, question__study_id=study_id)
        return Response(ReferenceFlagSerializer(reference_flag_send(flag=flag, user=request.user)).data)
