"""Migration 0005: the study's release id and the flag's dispute id become foreign keys, keeping every row."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("ranking", "0004_ranking_skips_drafts_passage"), ("annotation", "0011_review_edits_drafts_queue_order")]
AFTER = [("ranking", "0006_drop_study_release_id_and_flag_dispute_ref")]


@pytest.fixture
def back_to_latest():
    """Leave the schema at the latest migrations: tests after this one need the newer columns."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_ids_become_foreign_keys_and_rows_naming_missing_targets_are_kept_unlinked(make_study, make_user):
    from ranking.services.queue import task_next

    study = make_study(sample_size=2, overlap=1)
    task_next(study=study, ranker=make_user("ranker"))
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Release = old.get_model("annotation", "Release")
    Dispute = old.get_model("annotation", "Dispute")
    Study = old.get_model("ranking", "Study")
    StudyQuestion = old.get_model("ranking", "StudyQuestion")
    ReferenceFlag = old.get_model("ranking", "ReferenceFlag")
    organizer = old.get_model("portal", "User").objects.first()
    release = Release.objects.create(
        name="bench", version=1, rule={}, item_count=0, manifests={}, checksum="", report={}, frozen=True
    )
    q1, q2 = StudyQuestion.objects.filter(study_id=study.pk).order_by("pk")[:2]
    dispute = Dispute.objects.create(item_id=q1.item_id, raised_by_id=organizer.pk, category="other", text="x")
    Study.objects.filter(pk=study.pk).update(release_id=release.pk)
    other = Study.objects.create(name="orphan", release_id=release.pk + 999, tag_scale=["good", "bad"])
    ReferenceFlag.objects.create(question_id=q1.pk, dispute_ref=str(dispute.pk))
    ReferenceFlag.objects.create(question_id=q2.pk, dispute_ref="404404")

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    Study = new.get_model("ranking", "Study")
    ReferenceFlag = new.get_model("ranking", "ReferenceFlag")
    assert Study.objects.get(pk=study.pk).release_id == release.pk
    assert Study.objects.get(pk=other.pk).release_id is None  # kept, unlinked
    assert ReferenceFlag.objects.get(question_id=q1.pk).dispute_id == dispute.pk
    assert ReferenceFlag.objects.get(question_id=q2.pk).dispute_id is None  # kept, unlinked
