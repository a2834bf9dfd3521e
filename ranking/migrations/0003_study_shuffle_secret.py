"""Each study gets its own secret key for the rankers' shuffles.

AddField with a callable default would evaluate it once and give every existing study the same secret, so the column
is added empty, filled per study, then given its default. Tasks already handed out keep their stored ``order`` and
``seed`` untouched: the secret only keys the shuffles of tasks created from now on.
"""

from django.db import migrations, models

import ranking.shuffle


def secrets_fill(apps, schema_editor):
    Study = apps.get_model("ranking", "Study")
    for study in Study.objects.filter(shuffle_secret="").only("pk"):
        Study.objects.filter(pk=study.pk).update(shuffle_secret=ranking.shuffle.new_shuffle_secret())


class Migration(migrations.Migration):
    dependencies = [
        ("ranking", "0002_study_release_help"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="shuffle_secret",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(secrets_fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="study",
            name="shuffle_secret",
            field=models.CharField(
                default=ranking.shuffle.new_shuffle_secret,
                editable=False,
                help_text="Key of every ranker's answer shuffle (hex, 32 random bytes).",
                max_length=64,
            ),
        ),
        migrations.AlterField(
            model_name="rankingtask",
            name="seed",
            field=models.CharField(
                help_text="HMAC-SHA256 of ranker id and item id keyed by the study's shuffle secret (tasks handed out "
                "before studies had one: sha256 of study seed, ranker id and item id).",
                max_length=64,
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="seed",
            field=models.BigIntegerField(default=0, help_text="Seed of the item sample."),
        ),
    ]
