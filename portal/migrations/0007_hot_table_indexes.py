"""The audit entries' own indexes on object type and id (and their varchar_pattern_ops twins): the only reader uses
the (object_type, object_id, at) index, and a review writes several entries."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("portal", "0006_job_result_finite_json"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="object_id",
            field=models.CharField(max_length=80),
        ),
        migrations.AlterField(
            model_name="auditentry",
            name="object_type",
            field=models.CharField(max_length=80),
        ),
    ]
