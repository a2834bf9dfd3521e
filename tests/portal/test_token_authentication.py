"""API token authentication: the person and their roles come from one statement; DRF's rules and messages."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PROGRESS = "/api/review/progress/"


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_valid_token_authenticates_with_the_persons_roles_in_one_query(make_user):
    reviewer = make_user("reviewer")
    key = Token.objects.create(user=reviewer).key
    client = _client(key)
    client.get(PROGRESS)  # warm-up: connection health check, first-request set-up
    response = client.get(PROGRESS)
    assert response.status_code == 200
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        client.get(PROGRESS)
    auth_queries = [
        q["sql"] for q in queries.captured_queries if "authtoken_token" in q["sql"] or "auth_group" in q["sql"]
    ]
    assert len(auth_queries) == 1


def test_roles_are_read_on_every_request_so_a_revoked_role_takes_effect_at_once(make_user):
    from django.contrib.auth.models import Group

    reviewer = make_user("reviewer")
    client = _client(Token.objects.create(user=reviewer).key)
    assert client.get(PROGRESS).status_code == 200
    reviewer.groups.remove(Group.objects.get(name="reviewer"))
    assert client.get(PROGRESS).status_code == 403


def test_an_unknown_token_is_refused_with_drfs_message(make_user):
    response = _client("0" * 40).get(PROGRESS)
    # 403, not 401: session authentication comes first and sends no WWW-Authenticate challenge (DRF's rule).
    assert response.status_code == 403
    assert response.json()["detail"] == "Invalid token."


def test_a_deactivated_persons_token_is_refused(make_user):
    reviewer = make_user("reviewer")
    client = _client(Token.objects.create(user=reviewer).key)
    reviewer.is_active = False
    reviewer.save()
    response = client.get(PROGRESS)
    assert response.status_code == 403
    assert response.json()["detail"] == "User inactive or deleted."


def test_the_token_is_available_as_request_auth(make_user):
    from portal.authentication import TokenAuthentication

    reviewer = make_user("reviewer")
    key = Token.objects.create(user=reviewer).key
    user, token = TokenAuthentication().authenticate_credentials(key)
    assert user == reviewer and token.key == key and token.user_id == reviewer.pk
    assert token.created == Token.objects.get(key=key).created


def test_a_token_of_a_person_whose_institution_is_not_admitted_is_refused_in_the_same_query(make_user):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from portal.models import Institution

    reviewer = make_user("reviewer")
    reviewer.institution = Institution.objects.create(name="Elsewhere", admitted=True)
    reviewer.save()
    client = _client(Token.objects.create(user=reviewer).key)
    client.get(PROGRESS)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(PROGRESS).status_code == 200
    assert not any("portal_institution" in q["sql"] and "authtoken" not in q["sql"] for q in queries.captured_queries)
    Institution.objects.filter(pk=reviewer.institution_id).update(admitted=False)
    response = client.get(PROGRESS)
    assert response.status_code == 403
    assert response.json()["detail"] == "This person's institution is not admitted to the portal."
