"""The text and number ids replaced by foreign keys in 0005 go."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ranking", "0005_study_release_and_flag_dispute_foreign_keys")]

    operations = [
        migrations.RemoveField(model_name="study", name="old_release_id"),
        migrations.RemoveField(model_name="referenceflag", name="dispute_ref"),
    ]
