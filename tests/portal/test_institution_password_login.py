"""Passwords switched off for an institution (``Institution.password_login``): its members sign in through single
sign-on only. The password form and the set-password link refuse them, saying so, with the refusal on record; the
hospital sign-in (against the real OpenID Connect server of ``test_sso``) still lets them in; their API tokens keep
working. Organizers switch it on the people page, audited; nobody else can."""

from __future__ import annotations

from typing import Any

import pytest
from allauth.account.forms import default_token_generator
from allauth.account.internal.flows.password_reset import perform_password_reset_login
from allauth.account.utils import user_pk_to_url_str
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client, RequestFactory, override_settings
from rest_framework.test import APIClient

from portal.api_tokens import api_token_create
from portal.models import AuditEntry, Institution, User
from portal.services import person_admit
from tests.portal import test_sso as idp_kit

PASSWORD = "pw-long-4-tests"
OFF_NOTE = f"password: passwords are off for {idp_kit.HOSPITAL}"
# What the person is told (the button's name is sso_settings' default).
OFF_MESSAGE = f"Passwords are off for {idp_kit.HOSPITAL}: sign in with the “Hospital sign-in” button instead."
PEOPLE = "/organize/people/"
OFF_BADGE = '<span class="badge">single sign-on only</span>'


@pytest.fixture(scope="module")
def idp():
    with idp_kit.identity_provider() as server:
        yield server


@pytest.fixture
def hospital(db):
    return Institution.objects.create(name=idp_kit.HOSPITAL, admitted=True, password_login=False)


@pytest.fixture
def sso_named(hospital):
    """Single sign-on configured (its button's name) without an identity provider to answer: enough for the pages
    that only name it."""
    with idp_kit.sso_settings("http://localhost:9"):
        yield


@pytest.fixture
def sso(idp, hospital):
    idp.rewriter.mutate, idp.rewriter.forge = None, False
    with idp_kit.sso_settings(idp.url):
        yield idp


def member(hospital, email="nurse@hospital.example") -> User:
    return person_admit(email=email, institution=hospital, roles=["reviewer"], password=PASSWORD)


def password_sign_in(email: str, password: str = PASSWORD) -> tuple[Client, Any]:
    browser = Client()
    return browser, browser.post("/accounts/login/", {"login": email, "password": password})


def refusals() -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action="login_refused"))


# --- The password form ----------------------------------------------------------------------------------------


def test_the_right_password_is_refused_with_the_sign_in_button_named_and_on_record(sso_named, hospital):
    person = member(hospital)
    browser, response = password_sign_in(person.email)
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    page = browser.get(response["Location"]).content.decode()
    assert OFF_MESSAGE.replace("“", "&ldquo;") in page or OFF_MESSAGE in page
    assert idp_kit.signed_in_as(browser) is None
    [entry] = refusals()
    assert (entry.note, entry.object_type, entry.object_id) == (OFF_NOTE, "sign-in", person.email)
    assert entry.actor is None and (entry.after or {})["email"] == person.email
    assert not AuditEntry.objects.filter(action="login").exists()


def test_the_same_password_signs_in_while_passwords_are_on(sso_named, hospital):
    person = member(hospital)
    Institution.objects.filter(pk=hospital.pk).update(password_login=True)
    browser, response = password_sign_in(person.email)
    assert response.status_code == 302 and response["Location"] == "/"
    assert idp_kit.signed_in_as(browser).pk == person.pk
    assert not refusals() and AuditEntry.objects.get(action="login").note == "password"


def test_a_wrong_password_is_told_nothing_about_the_institution(sso_named, hospital):
    person = member(hospital)
    browser, response = password_sign_in(person.email, "not-the-password-1")
    page = response.content.decode()
    assert response.status_code == 200 and "Passwords are off" not in page
    assert [entry.note for entry in refusals()] == ["password"]


def test_the_next_page_is_kept_for_the_sign_in_button(sso_named, hospital):
    person = member(hospital)
    response = Client().post("/accounts/login/?next=/organize/", {"login": person.email, "password": PASSWORD})
    assert response["Location"] == "/accounts/login/?next=%2Forganize%2F"


def test_without_single_sign_on_the_message_says_to_ask_an_organizer(hospital):
    person = member(hospital)
    with override_settings(PORTAL_SSO=None, SOCIALACCOUNT_PROVIDERS=idp_kit.socialaccount_providers(None)):
        browser, response = password_sign_in(person.email)
        page = browser.get(response["Location"]).content.decode()
    assert "single sign-on is not set up: ask an organizer" in page
    assert idp_kit.signed_in_as(browser) is None


# --- The set-password link ------------------------------------------------------------------------------------


def reset_link(user: User) -> str:
    key = f"{user_pk_to_url_str(user)}-{default_token_generator.make_token(user)}"
    return f"/accounts/password/reset/key/{key}/"


def set_password_from_link(user: User, password: str = "a-new-pass-7731") -> tuple[Client, Any]:
    browser = Client()
    form = browser.get(reset_link(user))
    assert form.status_code == 302  # allauth keeps the key in the session and shows the form at its own address
    return browser, browser.post(form["Location"], {"password1": password, "password2": password})


def test_the_set_password_link_sets_no_password_and_signs_nobody_in(sso_named, hospital):
    person = person_admit(email="invited@hospital.example", institution=hospital, roles=["reviewer"])
    browser, response = set_password_from_link(person)
    assert response.status_code == 200 and "Passwords are off for St Example Hospital" in response.content.decode()
    person.refresh_from_db()
    assert not person.has_usable_password()
    assert idp_kit.signed_in_as(browser) is None


def test_the_set_password_link_works_while_passwords_are_on(sso_named, hospital):
    Institution.objects.filter(pk=hospital.pk).update(password_login=True)
    person = person_admit(email="invited@hospital.example", institution=hospital, roles=["reviewer"])
    browser, response = set_password_from_link(person)
    assert response.status_code == 302
    person.refresh_from_db()
    assert person.check_password("a-new-pass-7731") and idp_kit.signed_in_as(browser).pk == person.pk


def test_the_sign_in_after_a_password_reset_is_refused(sso_named, hospital):
    # ACCOUNT_LOGIN_ON_PASSWORD_RESET signs a person in once a link set their password: were one set, that sign-in
    # meets the same rule as the password form.
    person = member(hospital)
    request = RequestFactory().post("/accounts/password/reset/key/done/")
    request.session = SessionStore()
    request._messages = FallbackStorage(request)  # type: ignore[attr-defined]  # as MessageMiddleware does
    response = perform_password_reset_login(request, person, email=person.email)
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in request.session
    assert [str(message) for message in get_messages(request)] == [OFF_MESSAGE]
    assert [entry.note for entry in refusals()] == [OFF_NOTE]


# --- Single sign-on and API tokens ----------------------------------------------------------------------------


def test_single_sign_on_still_signs_a_new_member_in(sso):
    browser, response = idp_kit.sign_in(sso, "sub-new", idp_kit.person_claims("new@hospital.example", "seniors"))
    assert response.status_code == 302 and response["Location"] == "/"
    person = idp_kit.signed_in_as(browser)
    assert person is not None and person.institution.name == idp_kit.HOSPITAL
    assert AuditEntry.objects.get(action="login", object_id=str(person.pk)).note == "sso"
    assert not refusals()


def test_single_sign_on_signs_in_a_member_whose_password_is_refused(sso, hospital):
    person = member(hospital, email="linked@hospital.example")
    browser, _ = idp_kit.sign_in(sso, "sub-linked", idp_kit.person_claims(person.email, "med-students"))
    assert idp_kit.signed_in_as(browser).pk == person.pk
    _, refused = password_sign_in(person.email)
    assert refused["Location"] == "/accounts/login/" and [entry.note for entry in refusals()] == [OFF_NOTE]


def test_a_members_api_token_keeps_working(hospital):
    person = member(hospital)
    key = api_token_create(user=person, name="script", mfa_verified=False)[1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/review/progress/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-key")
    assert client.get("/api/review/progress/").status_code in (401, 403)


# --- The switch on the people page -----------------------------------------------------------------------------


def switch(client: Client, institution: Institution, action: str):
    return client.post(PEOPLE, {"institution": institution.pk, "institution_action": action}, follow=True)


def test_an_organizer_switches_passwords_off_and_on_audited(sso_named, organizer_client, organizer, hospital):
    Institution.objects.filter(pk=hospital.pk).update(password_login=True)
    hospital.refresh_from_db()
    page = organizer_client.get(PEOPLE).content.decode()
    assert 'value="passwords_off"' in page and OFF_BADGE not in page

    page = switch(organizer_client, hospital, "passwords_off").content.decode()
    hospital.refresh_from_db()
    assert not hospital.password_login
    assert "passwords are off: its members sign in through single sign-on" in page
    assert OFF_BADGE in page and 'value="passwords_on"' in page
    off = AuditEntry.objects.get(action="institution_passwords_off")
    assert (off.actor_id, off.object_type, off.object_id) == (organizer.pk, "portal.institution", str(hospital.pk))
    assert (off.before, off.after) == ({"password_login": True}, {"password_login": False})

    switch(organizer_client, hospital, "passwords_off")  # already off: nothing changes, nothing recorded
    assert AuditEntry.objects.filter(action="institution_passwords_off").count() == 1

    switch(organizer_client, hospital, "passwords_on")
    hospital.refresh_from_db()
    assert hospital.password_login
    on = AuditEntry.objects.get(action="institution_passwords_on")
    assert on.actor_id == organizer.pk and (on.before, on.after) == (
        {"password_login": False},
        {"password_login": True},
    )


def test_passwords_cannot_go_off_while_single_sign_on_is_not_set_up(organizer_client, hospital):
    Institution.objects.filter(pk=hospital.pk).update(password_login=True)
    with override_settings(PORTAL_SSO=None):
        page = switch(organizer_client, hospital, "passwords_off").content.decode()
    hospital.refresh_from_db()
    assert hospital.password_login and "Single sign-on is not set up" in page
    assert not AuditEntry.objects.filter(action__startswith="institution_passwords").exists()


@pytest.mark.parametrize("role", ["reviewer", "adjudicator", "ranker"])
def test_nobody_but_an_organizer_can_switch_passwords(sso_named, make_user, hospital, role):
    Institution.objects.filter(pk=hospital.pk).update(password_login=True)
    client = Client()
    client.force_login(make_user(role))
    response = client.post(PEOPLE, {"institution": hospital.pk, "institution_action": "passwords_off"})
    assert response.status_code == 403
    hospital.refresh_from_db()
    assert hospital.password_login
    assert not AuditEntry.objects.filter(action__startswith="institution_passwords").exists()
