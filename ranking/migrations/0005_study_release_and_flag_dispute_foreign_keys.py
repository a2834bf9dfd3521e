"""Study.release_id and ReferenceFlag.dispute_ref held the id of a row in another table as plain text or number;
they become foreign keys (Study.release, ReferenceFlag.dispute), keeping every row.

A study or flag whose id names a release or dispute that no longer exists keeps its row with the foreign key null
(the migration prints how many). Going back restores the ids from the foreign keys. The old columns are dropped by
the next migration, in its own transaction (PostgreSQL refuses to alter a table with pending foreign-key checks).
"""

import django.db.models.deletion
from django.db import migrations, models


def _forward(apps, schema_editor):
    Study = apps.get_model("ranking", "Study")
    ReferenceFlag = apps.get_model("ranking", "ReferenceFlag")
    Release = apps.get_model("annotation", "Release")
    Dispute = apps.get_model("annotation", "Dispute")
    releases = set(Release.objects.values_list("pk", flat=True))
    disputes = set(Dispute.objects.values_list("pk", flat=True))
    lost = 0
    for study in Study.objects.exclude(old_release_id=None):
        if study.old_release_id in releases:
            study.release_id = study.old_release_id
            study.save(update_fields=["release"])
        else:
            lost += 1
    for flag in ReferenceFlag.objects.exclude(dispute_ref=""):
        ref = flag.dispute_ref.strip()
        if ref.isdigit() and int(ref) in disputes:
            flag.dispute_id = int(ref)
            flag.save(update_fields=["dispute"])
        else:
            lost += 1
    if lost:
        print(f"\n  {lost} study/flag row(s) named a release or dispute that no longer exists: kept, link left empty")


def _backward(apps, schema_editor):
    Study = apps.get_model("ranking", "Study")
    ReferenceFlag = apps.get_model("ranking", "ReferenceFlag")
    for study in Study.objects.exclude(release=None):
        study.old_release_id = study.release_id
        study.save(update_fields=["old_release_id"])
    for flag in ReferenceFlag.objects.exclude(dispute=None):
        flag.dispute_ref = str(flag.dispute_id)
        flag.save(update_fields=["dispute_ref"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0011_review_edits_drafts_queue_order"),
        ("ranking", "0004_ranking_skips_drafts_passage"),
    ]

    operations = [
        migrations.RenameField(model_name="study", old_name="release_id", new_name="old_release_id"),
        migrations.AddField(
            model_name="study",
            name="release",
            field=models.ForeignKey(
                blank=True,
                help_text="The frozen release whose items the study uses.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="studies",
                to="annotation.release",
            ),
        ),
        migrations.AddField(
            model_name="referenceflag",
            name="dispute",
            field=models.ForeignKey(
                blank=True,
                help_text="The vetting dispute filed for the flag, once sent.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="reference_flags",
                to="annotation.dispute",
            ),
        ),
        migrations.RunPython(_forward, _backward, elidable=False),
    ]
