"""REST API of the kernel: following a background job of any app (its status, running it again)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from portal.jobs import job_retry
from portal.models import Job
from portal.permissions import AUTHENTICATED
from portal.roles import can_follow_job
from portal.serializers import JobSerializer


class JobDetailApi(APIView):
    """A job's status and progress (its creator or an organizer)."""

    required_roles = AUTHENTICATED

    @extend_schema(responses=JobSerializer)
    def get(self, request, job_id):
        job = get_object_or_404(Job, pk=job_id)
        if not can_follow_job(request.user, job):
            return Response({"detail": "Not your job."}, status=status.HTTP_403_FORBIDDEN)
        return Response(JobSerializer(job).data)


class JobRetryApi(APIView):
    """Run a job again that failed for a reason other than its input (its worker died, an internal error)."""

    required_roles = AUTHENTICATED

    @extend_schema(request=None, responses={202: JobSerializer})
    def post(self, request, job_id):
        job = get_object_or_404(Job, pk=job_id)
        if not can_follow_job(request.user, job):
            return Response({"detail": "Not your job."}, status=status.HTTP_403_FORBIDDEN)
        job = job_retry(job=job, by=request.user)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
