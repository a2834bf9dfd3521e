"""The people page: a person's row is edited (name, institution, roles), deactivated and reactivated, every change
audited; invitations are one-time, expiring set-password links sent to the person alone; the last organizer stays;
only organizers get the page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.test import Client
from django.urls import reverse

from portal.models import AuditEntry, Institution, User
from portal.services import person_set_active, person_update

pytestmark = pytest.mark.django_db


def _link(mail) -> str:
    return next(line for line in mail.body.splitlines() if "/accounts/password/reset/key/" in line).strip()


def test_an_organizer_edits_name_institution_and_roles_from_the_row(organizer_client, organizer, make_user):
    person = make_user("reviewer", email="ana@example.org")
    clinic = Institution.objects.create(name="St. Elsewhere <b>", country="DE")
    people = organizer_client.get(reverse("people")).content.decode()
    assert f'href="/organize/people/{person.pk}/"' in people and "St. Elsewhere <b>" not in people
    form = organizer_client.get(f"/organize/people/{person.pk}/").content.decode()
    assert form.count("checked") == 1 and 'value="reviewer"' in form
    response = organizer_client.post(
        f"/organize/people/{person.pk}/",
        {"name": "Ana <script>Lopez", "institution": clinic.pk, "roles": ["reviewer", "adjudicator"]},
    )
    assert response.status_code == 302
    person.refresh_from_db()
    assert person.get_full_name() == "Ana <script>Lopez" and person.institution == clinic
    assert set(person.groups.values_list("name", flat=True)) == {"reviewer", "adjudicator"}
    entry = AuditEntry.objects.get(object_id=str(person.pk), action="person_updated")
    assert entry.actor == organizer and entry.before["roles"] == ["reviewer"]
    assert entry.after["roles"] == ["adjudicator", "reviewer"]
    page = organizer_client.get(reverse("people")).content.decode()
    assert "Ana &lt;script&gt;Lopez" in page and "<script>Lopez" not in page
    history = organizer_client.get(f"/organize/people/{person.pk}/").content.decode()
    assert "Person updated" in history


def test_an_unknown_role_or_institution_is_refused_naming_the_field(organizer_client, make_user):
    person = make_user("reviewer")
    response = organizer_client.post(f"/organize/people/{person.pk}/", {"roles": ["emperor"], "institution": "x"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "emperor is not one of the available choices" in html and "Select a valid choice" in html
    assert set(person.groups.values_list("name", flat=True)) == {"reviewer"}


def test_the_last_organizer_keeps_the_role_and_stays_active(organizer, make_user):
    admin = User.objects.create_superuser("root@example.org", "a-superuser-pass-9481")
    with pytest.raises(Exception, match="last active organizer"):
        person_update(user=organizer, name="", institution=None, roles=["reviewer"], by=admin)
    with pytest.raises(Exception, match="last active organizer"):
        person_set_active(user=organizer, active=False, by=admin)
    second = make_user("organizer", email="second@example.org")
    person_update(user=organizer, name="", institution=None, roles=["reviewer"], by=second)
    assert not organizer.groups.filter(name="organizer").exists()


def test_deactivate_and_reactivate_from_the_row_are_audited(organizer_client, organizer, make_user):
    person = make_user("ranker")
    organizer_client.post(reverse("people"), {"person_action": "deactivate", "person": person.pk})
    page = organizer_client.get(reverse("people")).content.decode()
    assert "deactivated" in page
    organizer_client.post(reverse("people"), {"person_action": "reactivate", "person": person.pk})
    actions = list(
        AuditEntry.objects.filter(object_id=str(person.pk), action__in=["person_deactivated", "person_reactivated"])
        .order_by("at")
        .values_list("action", "actor")
    )  # fmt: skip
    assert actions == [("person_deactivated", organizer.pk), ("person_reactivated", organizer.pk)]


def test_an_invitation_is_a_one_time_link_to_the_person_alone(organizer_client, organizer, mailoutbox):
    organizer_client.post(reverse("people"), {"email": "new@example.org", "roles": ["reviewer"], "invite": "on"})
    person = User.objects.get(email="new@example.org")
    assert [m.to for m in mailoutbox] == [["new@example.org"]]
    assert AuditEntry.objects.filter(object_id=str(person.pk), action="person_invited", actor=organizer).exists()
    assert "invited: no password set yet" in organizer_client.get(reverse("people")).content.decode()
    link = _link(mailoutbox[0])
    browser = Client()
    form_url = browser.get(link).url
    browser.post(form_url, {"password1": "a-long-enough-pass-42", "password2": "a-long-enough-pass-42"})
    assert User.objects.get(pk=person.pk).check_password("a-long-enough-pass-42")
    # Used once: the same link no longer sets a password.
    again = Client()
    response = again.get(link, follow=True)
    assert "password1" not in response.content.decode()
    assert User.objects.get(pk=person.pk).check_password("a-long-enough-pass-42")


def test_an_invitation_expires(organizer_client, mailoutbox, settings, monkeypatch):
    organizer_client.post(reverse("people"), {"email": "late@example.org", "roles": ["reviewer"], "invite": "on"})
    link = _link(mailoutbox[0])
    real_now = PasswordResetTokenGenerator._now
    later = timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 60)
    monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: real_now(self) + later)
    response = Client().get(link, follow=True)
    assert "password1" not in response.content.decode()
    assert not User.objects.get(email="late@example.org").has_usable_password()
    page = organizer_client.get(reverse("people")).content.decode()
    assert "expires after 3 days" in page


@pytest.mark.parametrize("role", ["reviewer", "adjudicator", "ranker"])
def test_only_organizers_manage_people(client, make_user, role):
    person = make_user("reviewer", email="target@example.org")
    client.force_login(make_user(role, email=f"{role}-actor@example.org"))
    assert client.get(reverse("people")).status_code == 403
    assert client.get(f"/organize/people/{person.pk}/").status_code == 403
    response = client.post(f"/organize/people/{person.pk}/", {"roles": ["organizer"]})
    assert response.status_code == 403
    assert client.post(reverse("people"), {"person_action": "deactivate", "person": person.pk}).status_code == 403
    person.refresh_from_db()
    assert person.is_active and set(person.groups.values_list("name", flat=True)) == {"reviewer"}


# A well-formed address longer than the 254 characters the e-mail column (and RFC 5321) holds: 64 + 1 + 195.
_LONG_EMAIL = "a" * 64 + "@" + ".".join(["b" * 63] * 3) + ".org"


def test_an_email_longer_than_the_column_is_a_form_error_not_a_server_error(organizer_client, mailoutbox):
    assert len(_LONG_EMAIL) > 254
    response = organizer_client.post(reverse("people"), {"email": _LONG_EMAIL, "roles": ["reviewer"], "invite": "on"})
    assert response.status_code == 400
    assert "Ensure this value has at most 254 characters" in response.content.decode()
    assert not User.objects.filter(email__startswith="a" * 64).exists() and mailoutbox == []


@pytest.mark.parametrize(
    "url,data",
    [
        ("account_login", {"login": _LONG_EMAIL, "password": "whatever-123"}),
        ("account_reset_password", {"email": _LONG_EMAIL}),
        ("account_email", {"action_add": "", "email": _LONG_EMAIL}),
    ],
)
def test_the_account_forms_answer_a_long_email_without_a_server_error(client, make_user, url, data):
    client.force_login(make_user("reviewer")) if url == "account_email" else None
    client.raise_request_exception = True
    response = client.post(reverse(url), data)
    assert response.status_code < 500
