"""A ranker is never an organizer, staff or superuser: those see which system wrote each answer (the admin's system
outputs, the exports with identities), so their rankings could not be blind. Giving such a combination is refused
with the reason, on the people page and in the services; an account that holds it anyway (made in a shell or the
admin) is not a ranker on any door."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from rest_framework.test import APIClient

from portal.errors import DomainError, NotAllowed
from portal.models import User
from portal.roles import can_rank
from portal.services import person_admit, person_update
from ranking.services.queue import task_next

pytestmark = pytest.mark.django_db


def test_the_services_refuse_the_ranker_role_together_with_organizer(organizer, make_user):
    with pytest.raises(DomainError, match="A ranker cannot also be an organizer"):
        person_admit(email="both@test.portal", institution=None, roles=["organizer", "ranker"], by=organizer)
    assert not User.objects.filter(email="both@test.portal").exists()  # nothing was made
    physician = make_user("ranker")
    with pytest.raises(DomainError, match="A ranker cannot also be an organizer"):
        person_update(user=physician, name="", institution=None, roles=["ranker", "organizer"], by=organizer)
    boss = make_user("organizer")
    with pytest.raises(DomainError, match="A ranker cannot also be an organizer"):
        person_update(user=boss, name="", institution=None, roles=["organizer", "ranker"], by=organizer)
    assert set(physician.groups.values_list("name", flat=True)) == {"ranker"}
    assert set(boss.groups.values_list("name", flat=True)) == {"organizer"}


def test_staff_and_superusers_are_refused_the_ranker_role(organizer, make_user):
    staff = make_user("reviewer")
    staff.is_staff = True
    staff.save()
    with pytest.raises(DomainError, match="access to the Django admin"):
        person_update(user=staff, name="", institution=None, roles=["reviewer", "ranker"], by=organizer)
    root = User.objects.create_superuser(email="root@test.portal", password="pw-for-tests-123")
    with pytest.raises(DomainError, match="A ranker cannot also be an organizer"):
        person_admit(email=root.email, institution=None, roles=["ranker"])


def test_the_people_page_says_why(organizer_client):
    response = organizer_client.post(
        reverse("people"), {"email": "dr.boss@test.portal", "roles": ["organizer", "ranker"]}
    )
    assert response.status_code == 400
    assert "A ranker cannot also be an organizer" in response.content.decode()
    assert not User.objects.filter(email="dr.boss@test.portal").exists()


def test_an_account_given_both_in_a_shell_is_no_ranker_anywhere(client, make_study):
    person = User.objects.create_superuser(email="shell@test.portal", password="pw-for-tests-123")
    person.groups.add(Group.objects.get(name="ranker"))
    person = User.objects.get(pk=person.pk)
    assert not can_rank(person)
    study = make_study()
    with pytest.raises(NotAllowed):
        task_next(study=study, ranker=person)
    client.force_login(person)
    assert client.post(reverse("ranking_next", args=[study.pk])).status_code == 403
    api = APIClient()
    api.force_authenticate(person)
    assert api.post(f"/api/ranking/studies/{study.pk}/next/").status_code == 403
    organizer = User.objects.create_user(email="plain-organizer@test.portal", password="pw-for-tests-123")
    organizer.groups.add(Group.objects.get(name="organizer"), Group.objects.get(name="ranker"))
    assert not can_rank(User.objects.get(pk=organizer.pk))
