"""The nugget report and the matcher over the API: organizers only, figures as on the page."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from portal.models import Job
from ranking.models import Study
from tests.analytics.nugget_rows import hand_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(organizer):
    client = APIClient()
    client.force_authenticate(organizer)
    return client


def test_report_has_the_hand_computed_figures(api, make_user, django_capture_on_commit_callbacks):
    made = hand_study(make_user)
    url = reverse("api_nugget_report", args=[made.study.pk])
    with django_capture_on_commit_callbacks(execute=True):  # the worker runs the job the first request queued
        first = api.get(url)
    assert first.status_code == 202 and first.json()["computed_at"] is None
    assert Job.objects.get(pk=first.json()["job"]).status == Job.Status.SUCCEEDED
    body = api.get(url).json()
    assert body["computed_at"] and body["changed_since"] == [] and body["job"] is None
    assert body["systems"]["SYS-A"]["consensus"]["all"] == 0.75
    # full precision (machine-readable output carries the figure, pages round it): 49/60 is 0.8166…, not 0.8167
    assert body["agreement"]["human_alpha"]["value"] == pytest.approx(49 / 60, rel=1e-12)
    assert body["judges"] == [] and body["reference_systems"] == []


def test_rank_correlations_are_given_in_full_precision():
    from analytics.api import _json_figures

    figures = {"matcher": {"all": {"spearman": 0.123456789, "kendall_tau_b": float("nan"), "n": 3, "note": None}}}
    assert _json_figures(figures) == {
        "matcher": {"all": {"spearman": 0.123456789, "kendall_tau_b": None, "n": 3, "note": None}}
    }


def test_matcher_start_answers_202_and_refuses_a_study_without_nuggets(api, make_user):
    made = hand_study(make_user)
    response = api.post(reverse("api_nugget_matcher", args=[made.study.pk]))
    assert response.status_code == 202
    assert Job.objects.get(pk=response.json()["job"]).kind == "nugget_matcher"
    plain = Study.objects.create(name="plain")
    refused = api.post(reverse("api_nugget_matcher", args=[plain.pk]))
    assert refused.status_code == 400 and "no questions with validated nuggets" in refused.content.decode()


@pytest.mark.parametrize("role", ["ranker", "reviewer"])
def test_other_roles_are_refused(make_user, role):
    made = hand_study(make_user)
    client = APIClient()
    client.force_authenticate(make_user(role))
    assert client.get(reverse("api_nugget_report", args=[made.study.pk])).status_code == 403
    assert client.post(reverse("api_nugget_matcher", args=[made.study.pk])).status_code == 403


def test_schema_still_generates(organizer_client):
    response = organizer_client.get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/studies/{id}/nuggets/" in response.content
