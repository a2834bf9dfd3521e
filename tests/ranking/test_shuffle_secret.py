"""The study's shuffle secret: a ranker cannot compute where the reference sits, nothing shows the secret, organizers
reproduce every order from it, and studies created before it existed get one without any stored order changing."""

from __future__ import annotations

import hashlib
import importlib

import pytest
from django.apps import apps
from django.urls import reverse

from ranking.models import RankingTask, Study, StudyAnswer
from ranking.services.queue import task_next
from ranking.shuffle import permutation, slot_letter, task_seed

pytestmark = pytest.mark.django_db

RANKERS = 60


def _old_task_seed(*, study_seed: int, ranker_id: int, item_id: int) -> str:
    """The derivation before the secret: everything in it was known to, or guessable by, a ranker."""
    return hashlib.sha256(f"ranking:{study_seed}:{ranker_id}:{item_id}".encode()).hexdigest()


def test_a_ranker_can_no_longer_compute_the_reference_slot(make_study, make_user):
    """The attack: study seed 0 (the default), one's own id, the item id, the reference stored last."""
    study = make_study(seed=0, sample_size=1, overlap=RANKERS)
    hits = 0
    for _ in range(RANKERS):
        ranker = make_user("ranker")
        task = task_next(study=study, ranker=ranker)
        answer_ids = list(task.question.answers.order_by("id").values_list("id", flat=True))
        guess = _old_task_seed(study_seed=study.seed, ranker_id=ranker.pk, item_id=task.question.item_id)
        predicted = slot_letter(permutation(len(answer_ids), guess).index(len(answer_ids) - 1))
        reference = StudyAnswer.objects.get(question=task.question, system__is_reference=True)
        hits += predicted == slot_letter(task.order.index(reference.pk))
    # three answers: a blind guess is right a third of the time; the attack was right every time
    assert hits < RANKERS * 0.6, hits


def test_organizers_reproduce_each_stored_order_from_the_secret(make_study, make_user):
    study = make_study(overlap=3)
    for _ in range(3):
        ranker = make_user("ranker")
        task = task_next(study=study, ranker=ranker)
        answer_ids = list(task.question.answers.order_by("id").values_list("id", flat=True))
        seed = task_seed(secret=study.shuffle_secret, ranker_id=ranker.pk, item_id=task.question.item_id)
        assert task.seed == seed
        assert task.order == [answer_ids[i] for i in permutation(len(answer_ids), seed)]


def test_each_study_has_its_own_secret_and_nothing_shows_it(client, make_study, make_user, organizer):
    study, other = make_study(), make_study()
    assert len(bytes.fromhex(study.shuffle_secret)) == 32 and study.shuffle_secret != other.shuffle_secret
    ranker = make_user("ranker")
    client.force_login(ranker)
    client.post(reverse("ranking_next", args=[study.pk]))
    task = RankingTask.objects.get(ranker=ranker)
    bodies = [
        client.get(reverse("ranking_task", args=[task.pk])).content,
        client.get(f"/api/ranking/tasks/{task.pk}/").content,
        client.get("/api/ranking/studies/").content,
    ]
    client.force_login(organizer)
    bodies += [
        client.get(reverse("study_detail", args=[study.pk])).content,
        client.get(f"/api/studies/{study.pk}/").content,
        client.get("/api/studies/").content,
        client.get("/api/schema/").content,
        client.get(reverse("study_export", args=[study.pk, "csv"])).content,
        client.get(reverse("study_export", args=[study.pk, "shroom"])).content,
    ]
    for body in bodies:
        assert study.shuffle_secret.encode() not in body and b"shuffle_secret" not in body


def test_the_migration_gives_each_existing_study_a_secret_and_keeps_stored_orders(make_study, make_user):
    studies = [make_study(), make_study()]
    tasks = [task_next(study=s, ranker=make_user("ranker")) for s in studies]
    before = {t.pk: (t.seed, t.order) for t in RankingTask.objects.all()}
    Study.objects.update(shuffle_secret="")  # as the column is right after it is added
    migration = importlib.import_module("ranking.migrations.0003_study_shuffle_secret")
    migration.secrets_fill(apps, None)
    secrets = list(Study.objects.values_list("shuffle_secret", flat=True))
    assert len(set(secrets)) == len(studies) and all(len(bytes.fromhex(s)) == 32 for s in secrets)
    assert {t.pk: (t.seed, t.order) for t in RankingTask.objects.all()} == before
    assert len(tasks) == 2


def test_a_staff_member_who_ranked_cannot_read_their_open_task_in_the_admin(client, make_study, make_user):
    """Staff cannot rank (test_organizer_ranker.py); a ranker made staff in a shell keeps an open task."""
    study = make_study()
    staff_ranker = make_user("ranker")
    task = task_next(study=study, ranker=staff_ranker)
    staff_ranker.is_staff = staff_ranker.is_superuser = True
    staff_ranker.save()
    client.force_login(staff_ranker)
    assert client.get(f"/admin/ranking/rankingtask/{task.pk}/change/").status_code == 302  # "does not exist"
    assert (
        f"/admin/ranking/rankingtask/{task.pk}/change/"
        not in client.get("/admin/ranking/rankingtask/").content.decode()
    )
    other = make_user("organizer")
    other.is_staff = other.is_superuser = True
    other.save()
    client.force_login(other)
    assert client.get(f"/admin/ranking/rankingtask/{task.pk}/change/").status_code == 200
