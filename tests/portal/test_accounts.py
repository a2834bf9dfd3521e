"""Sign-in: email + password through allauth, throttling of failed logins, organizer MFA, admitting people."""

from __future__ import annotations

import pytest
from allauth.mfa.models import Authenticator
from django.core.cache import cache
from django.urls import reverse

from portal.models import Institution, User

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=False)
def clean_cache():
    cache.clear()
    yield
    cache.clear()


def test_login_with_email_and_password(client, make_user, clean_cache):
    user = make_user("reviewer")
    response = client.post(reverse("account_login"), {"login": user.email, "password": "pw-for-tests-123"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_repeated_failed_logins_are_throttled(client, make_user, clean_cache):
    user = make_user("reviewer")
    bodies = [
        client.post(reverse("account_login"), {"login": user.email, "password": "wrong"}).content.decode()
        for _ in range(6)
    ]
    assert "Too many failed login attempts" not in bodies[0]
    assert "Too many failed login attempts" in bodies[-1]
    # While throttled, even the right password does not sign in.
    response = client.post(reverse("account_login"), {"login": user.email, "password": "pw-for-tests-123"})
    assert response.status_code == 200 and "Too many failed login attempts" in response.content.decode()
    assert client.get("/").status_code == 302


def test_public_signup_is_closed_by_default(client, clean_cache):
    response = client.post(
        reverse("account_signup"),
        {"email": "new@x.org", "password1": "A-long-pass-123", "password2": "A-long-pass-123"},
    )
    assert not User.objects.filter(email="new@x.org").exists()
    assert response.status_code in (200, 403)


def test_organizer_without_totp_is_sent_to_mfa_setup_when_required(client, organizer, settings):
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    client.force_login(organizer)
    response = client.get("/items/")
    assert response.status_code == 302 and response["Location"] == reverse("mfa_activate_totp")
    Authenticator.objects.create(user=organizer, type=Authenticator.Type.TOTP, data={"secret": "x"})
    assert client.get("/items/").status_code == 200


def test_reviewer_is_not_asked_for_mfa(client, reviewer, settings):
    settings.PORTAL_REQUIRE_ORGANIZER_MFA = True
    client.force_login(reviewer)
    assert client.get("/").status_code == 200


def test_organizer_admits_an_institution_and_a_person_with_roles(organizer_client):
    organizer_client.post(reverse("people"), {"add_institution": "1", "name": "St. Elsewhere", "country": "UK"})
    institution = Institution.objects.get(name="St. Elsewhere")
    response = organizer_client.post(
        reverse("people"),
        {
            "email": "Dr.Who@Example.org",
            "name": "Doc Who",
            "institution": institution.pk,
            "roles": ["ranker", "reviewer"],
        },
    )
    assert response.status_code == 302
    person = User.objects.get(email="dr.who@example.org")
    assert person.institution == institution
    assert set(person.groups.values_list("name", flat=True)) == {"ranker", "reviewer"}
    assert not person.has_usable_password()


@pytest.fixture
def admitted_reviewer(make_user):
    user = make_user("reviewer")
    user.institution = Institution.objects.create(name="Admitted School", admitted=True)
    user.save()
    return user


def test_a_person_whose_institution_is_not_admitted_cannot_sign_in(client, admitted_reviewer, clean_cache):
    Institution.objects.filter(pk=admitted_reviewer.institution_id).update(admitted=False)
    response = client.post(reverse("account_login"), {"login": admitted_reviewer.email, "password": "pw-for-tests-123"})
    assert response.status_code == 302 and response["Location"] == reverse("account_inactive")
    assert "_auth_user_id" not in client.session
    assert "its institution is not (or no longer)" in client.get(response["Location"]).content.decode()
    assert client.get("/").status_code == 302


def test_a_session_stops_working_when_the_institution_loses_admission(client, admitted_reviewer, clean_cache):
    client.post(reverse("account_login"), {"login": admitted_reviewer.email, "password": "pw-for-tests-123"})
    assert client.get("/review/").status_code == 200
    Institution.objects.filter(pk=admitted_reviewer.institution_id).update(admitted=False)
    response = client.get("/review/")
    assert response.status_code == 302 and response["Location"].startswith(reverse("account_login"))
    assert client.get("/api/review/progress/").status_code == 403


def test_a_deactivated_persons_session_stops_working(client, admitted_reviewer, clean_cache):
    client.force_login(admitted_reviewer)
    assert client.get("/review/").status_code == 200
    admitted_reviewer.is_active = False
    admitted_reviewer.save()
    assert client.get("/review/").status_code == 302


def test_the_people_page_sets_no_password_and_emails_a_set_password_link(organizer_client, mailoutbox):
    response = organizer_client.post(
        reverse("people"), {"email": "new@example.org", "roles": ["reviewer"], "invite": "on", "password": "12345"}
    )
    assert response.status_code == 302
    person = User.objects.get(email="new@example.org")
    assert not person.has_usable_password()
    assert [m.to for m in mailoutbox] == [["new@example.org"]]
    link = next(line for line in mailoutbox[0].body.splitlines() if "/accounts/password/reset/key/" in line).strip()
    # The person sets their own password from the link; the validators apply there too.
    client = organizer_client.__class__()
    form_url = client.get(link).url
    weak = client.post(form_url, {"password1": "12345", "password2": "12345"})
    assert weak.status_code == 200 and not User.objects.get(pk=person.pk).has_usable_password()
    client.post(form_url, {"password1": "a-long-enough-pass-42", "password2": "a-long-enough-pass-42"})
    assert User.objects.get(pk=person.pk).check_password("a-long-enough-pass-42")


def test_the_organizer_never_sees_the_link(organizer_client, mailoutbox):
    response = organizer_client.post(
        reverse("people"), {"email": "new@example.org", "roles": ["reviewer"], "invite": "on"}, follow=True
    )
    link = next(line for line in mailoutbox[0].body.splitlines() if "/accounts/password/reset/key/" in line).strip()
    assert link not in response.content.decode()


def test_weak_passwords_are_refused_wherever_a_password_is_set(db):
    from portal.errors import DomainError
    from portal.services import person_admit

    with pytest.raises(DomainError, match="too short"):
        person_admit(email="weak@example.org", institution=None, roles=[], password="abc12")
    assert not User.objects.filter(email="weak@example.org").exists()


def test_organizers_deactivate_and_reactivate_people(organizer_client, make_user):
    person = make_user("reviewer")
    organizer_client.post(reverse("people"), {"person_action": "deactivate", "person": person.pk})
    person.refresh_from_db()
    assert not person.is_active
    organizer_client.post(reverse("people"), {"person_action": "reactivate", "person": person.pk})
    person.refresh_from_db()
    assert person.is_active


def test_an_organizer_cannot_change_a_superuser_or_deactivate_themselves(organizer_client, organizer, mailoutbox):
    root = User.objects.create_superuser("root@test.portal", "a-superuser-pass-9481")
    for action in ("deactivate", "invite"):
        response = organizer_client.post(reverse("people"), {"person_action": action, "person": root.pk}, follow=True)
        assert "only a superuser changes that account" in response.content.decode()
    response = organizer_client.post(reverse("people"), {"email": root.email, "roles": ["reviewer"]})
    assert response.status_code == 400 and "only a superuser" in response.content.decode()
    root.refresh_from_db()
    assert root.is_active and not root.groups.exists() and not mailoutbox
    response = organizer_client.post(
        reverse("people"), {"person_action": "deactivate", "person": organizer.pk}, follow=True
    )
    assert "cannot deactivate your own account" in response.content.decode()
    response = organizer_client.post(reverse("people"), {"email": organizer.email, "roles": ["reviewer"]})
    assert response.status_code == 400 and "organizer role from yourself" in response.content.decode()
    organizer.refresh_from_db()
    assert organizer.is_active and organizer.groups.filter(name="organizer").exists()


def test_a_malformed_person_id_is_a_404_not_an_error(organizer_client):
    response = organizer_client.post(reverse("people"), {"person_action": "deactivate", "person": "x"})
    assert response.status_code == 404


def test_withdrawing_an_institutions_admission_stops_its_members_at_once(client, organizer, admitted_reviewer):
    organizer_client = client.__class__()
    organizer_client.force_login(organizer)
    client.force_login(admitted_reviewer)
    assert client.get("/review/").status_code == 200
    institution = admitted_reviewer.institution
    organizer_client.post(reverse("people"), {"institution_action": "withdraw", "institution": institution.pk})
    institution.refresh_from_db()
    assert not institution.admitted
    assert client.get("/review/").status_code == 302
    organizer_client.post(reverse("people"), {"institution_action": "readmit", "institution": institution.pk})
    institution.refresh_from_db()
    assert institution.admitted


def test_createsuperuser_without_prompts_refuses_a_weak_password(monkeypatch):
    from django.core.management import CommandError, call_command

    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "12345")
    with pytest.raises(CommandError, match="too short"):
        call_command("createsuperuser", "--noinput", email="root@example.org", verbosity=0)
    assert not User.objects.filter(email="root@example.org").exists()
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-enough-pass-42")
    call_command("createsuperuser", "--noinput", email="root@example.org", verbosity=0)
    assert User.objects.get(email="root@example.org").check_password("a-long-enough-pass-42")


def test_a_refused_invitation_changes_nothing(organizer_client, make_user, mailoutbox):
    person = make_user("reviewer")
    person.is_active = False
    person.save()
    response = organizer_client.post(reverse("people"), {"email": person.email, "roles": ["ranker"], "invite": "on"})
    assert response.status_code == 400 and "reactivate the account before inviting" in response.content.decode()
    assert set(person.groups.values_list("name", flat=True)) == {"reviewer"} and not mailoutbox
