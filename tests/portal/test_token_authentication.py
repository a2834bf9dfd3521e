"""API token authentication: the person and their roles come from one statement; DRF's rules and messages;
the portal's rules (admission, expiry, organizer MFA) on every call."""

from __future__ import annotations

from datetime import timedelta

import pytest
from allauth.mfa.models import Authenticator
from django.utils import timezone
from rest_framework.test import APIClient

from portal.api_tokens import api_token_create
from portal.models import ApiToken

pytestmark = pytest.mark.django_db

PROGRESS = "/api/review/progress/"
ITEMS = "/api/items/"


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _key(user) -> str:
    return api_token_create(user=user, name="tests", mfa_verified=True)[1]


def test_a_valid_token_authenticates_with_the_persons_roles_in_one_query(make_user):
    reviewer = make_user("reviewer")
    client = _client(_key(reviewer))
    client.get(PROGRESS)  # warm-up: connection health check, first-request set-up
    response = client.get(PROGRESS)
    assert response.status_code == 200
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        client.get(PROGRESS)
    auth_queries = [
        q["sql"]
        for q in queries.captured_queries
        if any(t in q["sql"] for t in ("portal_apitoken", "auth_group", "portal_institution", "mfa_authenticator"))
    ]
    assert len(auth_queries) == 1
    # ... and the person is not read again (the institution's id once shadowed the person's institution_id, which
    # Django then fetched with a query of its own on every API request)
    assert not [
        q for q in queries.captured_queries if '"portal_user"' in q["sql"] and "portal_apitoken" not in q["sql"]
    ]


def test_the_person_keeps_their_institution_through_token_authentication(make_user):
    from portal.authentication import TokenAuthentication
    from portal.models import Institution

    reviewer = make_user("reviewer")
    reviewer.institution = Institution.objects.create(name="Elsewhere", admitted=True)
    reviewer.save()
    user, _ = TokenAuthentication().authenticate_credentials(_key(reviewer))
    assert "institution_id" in user.__dict__ and user.institution_id == reviewer.institution_id
    assert user.institution.name == "Elsewhere"
    loner = make_user("reviewer")
    user, _ = TokenAuthentication().authenticate_credentials(_key(loner))
    assert "institution_id" in user.__dict__ and user.institution_id is None


def test_roles_are_read_on_every_request_so_a_revoked_role_takes_effect_at_once(make_user):
    from django.contrib.auth.models import Group

    reviewer = make_user("reviewer")
    client = _client(_key(reviewer))
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
    client = _client(_key(reviewer))
    reviewer.is_active = False
    reviewer.save()
    response = client.get(PROGRESS)
    assert response.status_code == 403
    assert response.json()["detail"] == "User inactive or deleted."


def test_the_token_is_available_as_request_auth(make_user):
    from portal.authentication import TokenAuthentication

    reviewer = make_user("reviewer")
    token, key = api_token_create(user=reviewer, name="tests", mfa_verified=True)
    user, auth = TokenAuthentication().authenticate_credentials(key)
    assert user == reviewer and auth.pk == token.pk and auth.user_id == reviewer.pk
    assert auth.expires_at == ApiToken.objects.get(pk=token.pk).expires_at


def test_only_the_keys_hash_is_stored(make_user):
    token, key = api_token_create(user=make_user("reviewer"), name="tests", mfa_verified=True)
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_hash == ApiToken.hash_of(key) and key not in {stored.key_hash, stored.prefix, stored.name}
    assert stored.prefix == key[:8]


def test_a_token_of_a_person_whose_institution_is_not_admitted_is_refused_in_the_same_query(make_user):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from portal.models import Institution

    reviewer = make_user("reviewer")
    reviewer.institution = Institution.objects.create(name="Elsewhere", admitted=True)
    reviewer.save()
    client = _client(_key(reviewer))
    client.get(PROGRESS)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(PROGRESS).status_code == 200
    assert not any(
        "portal_institution" in q["sql"] and "portal_apitoken" not in q["sql"] for q in queries.captured_queries
    )
    Institution.objects.filter(pk=reviewer.institution_id).update(admitted=False)
    response = client.get(PROGRESS)
    assert response.status_code == 403
    assert response.json()["detail"] == "This person's institution is not admitted to the portal."


def test_a_token_stops_working_when_it_expires(make_user, settings):
    settings.PORTAL_API_TOKEN_DAYS = 30
    reviewer = make_user("reviewer")
    token, key = api_token_create(user=reviewer, name="tests", mfa_verified=True)
    assert token.expires_at - token.created_at == timedelta(days=30)
    client = _client(key)
    assert client.get(PROGRESS).status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(PROGRESS)
    assert response.status_code == 403 and response.json()["detail"].startswith("Token expired")


def test_an_organizers_token_stops_working_when_their_totp_is_removed(organizer, settings):
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    totp = Authenticator.objects.create(user=organizer, type=Authenticator.Type.TOTP, data={"secret": "x"})
    client = _client(_key(organizer))
    assert client.get(ITEMS).status_code == 200
    totp.delete()
    response = client.get(ITEMS)
    assert response.status_code == 403
    assert "authenticator app" in response.json()["detail"]


def test_organizers_create_tokens_only_from_a_session_that_gave_the_second_factor(organizer, settings):
    from portal.errors import NotAllowed

    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    with pytest.raises(NotAllowed):
        api_token_create(user=organizer, name="script", mfa_verified=False)
    assert not ApiToken.objects.exists()
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = False
    assert api_token_create(user=organizer, name="script", mfa_verified=False)[0].pk


def test_a_token_created_without_mfa_does_not_act_for_an_organizer(make_user, settings):
    from django.contrib.auth.models import Group

    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    person = make_user("reviewer")
    Authenticator.objects.create(user=person, type=Authenticator.Type.TOTP, data={"secret": "x"})
    old_key = api_token_create(user=person, name="reviewer script", mfa_verified=False)[1]
    person.groups.add(Group.objects.get(name="organizer"))
    response = _client(old_key).get(ITEMS)
    assert response.status_code == 403 and "created without your authenticator app" in response.json()["detail"]
    assert _client(_key(person)).get(ITEMS).status_code == 200
