"""Usability F22: the invitation link says "set your password" (not "change") and signs the person in once it is
set, through the normal sign-in: an organizer with an authenticator app is still asked for a code, and a person
whose institution is not admitted is still refused."""

from __future__ import annotations

import pytest
from allauth.mfa.models import Authenticator
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from portal.models import Institution, User

PASSWORD = "a-new-long-pass-42"


@pytest.fixture(autouse=True)
def clean_cache():
    cache.clear()


def _invite(organizer_client, mailoutbox, roles):
    """The organizer admits newdoc@example.org on the People page with "Email a set-password link" ticked."""
    email = "newdoc@example.org"
    organizer_client.post(reverse("people"), {"email": email, "roles": roles, "invite": "on"})
    mail = mailoutbox[-1]
    link = next(line.strip() for line in mail.body.splitlines() if "/accounts/password/reset/key/" in line)
    return User.objects.get(email=email), mail, link


def _set_password(link):
    browser = Client()
    form = browser.get(link)  # allauth moves the key into the session and redirects to the form
    page = browser.get(form.url)
    response = browser.post(form.url, {"password1": PASSWORD, "password2": PASSWORD})
    return browser, page.content.decode(), response


def test_invitation_says_set_your_password_and_signs_in(organizer_client, mailoutbox):
    person, mail, link = _invite(organizer_client, mailoutbox, ["reviewer"])
    assert "Set your password" in mail.subject and "password reset" not in mail.body.lower()
    assert "An organizer has given you an account" in mail.body
    browser, page, response = _set_password(link)
    assert "Set your password" in page and "Change Password" not in page
    assert "Set password and sign in" in page
    assert response.status_code == 302 and response["Location"] == "/"
    assert browser.get("/").wsgi_request.user == person
    # The link worked once.
    assert "Link no longer valid" in Client().get(link, follow=True).content.decode()


def test_forgotten_password_mail_keeps_its_own_wording(make_user, mailoutbox):
    person = make_user("reviewer")
    Client().post("/accounts/password/reset/", {"email": person.email})
    assert "Set a new password" in mailoutbox[-1].subject and "asked to set a new password" in mailoutbox[-1].body


def test_organizer_with_an_authenticator_is_asked_for_a_code_not_signed_in(organizer_client, mailoutbox):
    new_organizer, _, link = _invite(organizer_client, mailoutbox, ["organizer"])
    Authenticator.objects.create(user=new_organizer, type=Authenticator.Type.TOTP, data={"secret": "x"})
    browser, _, response = _set_password(link)
    assert response.status_code == 302 and "/2fa/authenticate" in response["Location"]
    assert not browser.get("/").wsgi_request.user.is_authenticated


def test_person_of_an_institution_not_admitted_is_not_signed_in(organizer_client, mailoutbox):
    person, _, link = _invite(organizer_client, mailoutbox, ["reviewer"])
    person.institution = Institution.objects.create(name="Closed hospital", admitted=False)
    person.save()
    browser, _, response = _set_password(link)
    assert not browser.get("/").wsgi_request.user.is_authenticated
    assert "inactive" in response.url
