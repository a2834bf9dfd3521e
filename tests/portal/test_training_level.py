"""A person's training level (medical student year 1–6, resident, attending, other) and specialty (short free text):
optional, edited by organizers on the person's page from the people list, audited, shown to organizers only (never on
the pages other reviewers and adjudicators read); the migration adds them empty to existing people."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from annotation.models import QAItem, VettingConfig
from annotation.services.imports import items_import
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit
from portal.models import AuditEntry, TrainingLevel, User
from portal.services import person_update

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

SPECIALTY = "Paediatric nephrology <i>"


def _edit(client, person, **fields):
    data = {"name": person.get_full_name(), "roles": list(person.groups.values_list("name", flat=True)), **fields}
    return client.post(reverse("person_edit", args=[person.pk]), data)


def test_the_levels_are_the_six_student_years_resident_attending_and_other():
    assert TrainingLevel.values == [f"student_{n}" for n in range(1, 7)] + ["resident", "attending", "other"]
    assert TrainingLevel("student_3").label == "Medical student, year 3"


def test_an_organizer_sets_training_level_and_specialty_from_the_persons_page(organizer_client, organizer, make_user):
    person = make_user("reviewer")
    form = organizer_client.get(reverse("person_edit", args=[person.pk])).content.decode()
    assert 'name="training_level"' in form and 'name="specialty"' in form and "Medical student, year 6" in form

    response = _edit(organizer_client, person, training_level="student_5", specialty=f"  {SPECIALTY}  ")

    assert response.status_code == 302
    person.refresh_from_db()
    assert (person.training_level, person.specialty) == ("student_5", SPECIALTY)
    entry = AuditEntry.objects.get(object_id=str(person.pk), action="person_updated")
    assert entry.actor == organizer
    assert (entry.before["training_level"], entry.before["specialty"]) == ("", "")
    assert (entry.after["training_level"], entry.after["specialty"]) == ("student_5", SPECIALTY)
    people = organizer_client.get(reverse("people")).content.decode()
    assert "Medical student, year 5 · Paediatric nephrology &lt;i&gt;" in people
    form = organizer_client.get(reverse("person_edit", args=[person.pk])).content.decode()
    assert '<option value="student_5" selected>' in form
    # Cleared again: both are optional.
    assert _edit(organizer_client, person, training_level="", specialty="").status_code == 302
    person.refresh_from_db()
    assert (person.training_level, person.specialty) == ("", "")


def test_an_unknown_level_or_a_long_specialty_is_refused_naming_the_field(organizer_client, make_user):
    person = make_user("reviewer")
    response = _edit(organizer_client, person, training_level="professor", specialty="x" * 101)
    assert response.status_code == 400
    page = response.content.decode()
    assert "professor is not one of the available choices" in page and "at most 100 characters" in page
    person.refresh_from_db()
    assert (person.training_level, person.specialty) == ("", "")


def test_the_service_leaves_them_alone_unless_given_and_checks_them(organizer, make_user):
    person = make_user("reviewer")
    person_update(
        user=person, name="A B", institution=None, roles=["reviewer"], by=organizer, training_level="resident"
    )
    person_update(user=person, name="A C", institution=None, roles=["reviewer"], by=organizer)
    person.refresh_from_db()
    assert (person.get_full_name(), person.training_level) == ("A C", "resident")
    from portal.errors import DomainError

    with pytest.raises(DomainError):
        person_update(user=person, name="", institution=None, roles=["reviewer"], by=organizer, training_level="x")
    with pytest.raises(DomainError):
        person_update(user=person, name="", institution=None, roles=["reviewer"], by=organizer, specialty="y" * 101)
    person.refresh_from_db()
    assert person.training_level == "resident" and person.specialty == ""


@pytest.mark.parametrize("role", ["reviewer", "adjudicator", "ranker"])
def test_nobody_but_an_organizer_edits_them(make_user, role):
    person = make_user("reviewer")
    client = Client()
    client.force_login(make_user(role))
    assert client.get(reverse("person_edit", args=[person.pk])).status_code == 403
    response = client.post(
        reverse("person_edit", args=[person.pk]),
        {"roles": ["reviewer"], "training_level": "attending", "specialty": "Cardiology"},
    )
    assert response.status_code == 403
    person.refresh_from_db()
    assert (person.training_level, person.specialty) == ("", "")


def test_they_are_shown_to_no_other_reviewer_or_adjudicator(organizer, make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate = 0.0, 0.0
    config.save()
    expert = make_user("reviewer")
    person_update(
        user=expert,
        name="Erin Expert",
        institution=None,
        roles=["reviewer"],
        by=organizer,
        training_level="attending",
        specialty="Zygomycology",
    )
    lease = assignment_next(reviewer=expert)
    # "Cannot tell" goes to adjudication: the adjudicator reads the review and its author's name.
    review_submit(
        assignment_id=lease.pk,
        reviewer=expert,
        idempotency_key=lease.idempotency_key,
        verdict="cannot_tell",
        relevance=3,
        cannot_tell_reason="excerpt",
    )
    item = QAItem.objects.get(pk=lease.item_id)
    adjudicator = make_user("adjudicator")
    client = Client()
    client.force_login(adjudicator)
    pages = [
        client.get(reverse("adjudication_item", args=[item.uid])),
        client.get(reverse("adjudication_queue")),
        client.get(reverse("home")),
    ]
    assert all(page.status_code == 200 for page in pages)
    assert "Erin Expert" in pages[0].content.decode()  # the reviewer is named to the adjudicator ...
    for page in pages:
        html = page.content.decode()
        assert "Zygomycology" not in html and "Attending" not in html  # ... but not their training
    other = Client()
    other.force_login(make_user("reviewer"))
    for url in (reverse("review_next"), reverse("review_mine"), reverse("home")):
        html = other.get(url).content.decode()
        assert "Zygomycology" not in html and "Attending" not in html


@pytest.mark.django_db(transaction=True)
def test_the_migration_adds_them_empty_to_existing_people(make_user):
    person = make_user("reviewer")
    executor = MigrationExecutor(connection)
    executor.migrate([("portal", "0009_job_dismissed_at")])
    with connection.cursor() as cursor:
        cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'portal_user'")
        assert not {"training_level", "specialty"} & {row[0] for row in cursor.fetchall()}
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    person = User.objects.get(pk=person.pk)
    assert (person.training_level, person.specialty) == ("", "")
