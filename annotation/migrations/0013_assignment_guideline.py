"""Each lease records the guideline version current when it was handed out (the version its review records), so a
review submit no longer looks it up. Existing leases get the version that was current at their start."""

import django.db.models.deletion
from django.db import migrations, models

_BACKFILL = """
UPDATE annotation_assignment a SET guideline_id = (
    SELECT g.id FROM annotation_guidelineversion g JOIN annotation_qaitem i ON i.id = a.item_id
    WHERE g.benchmark = i.benchmark AND g.qa_type = i.qa_type AND g.created_at <= a.created_at
    ORDER BY g.number DESC LIMIT 1
)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_nuggets"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="guideline",
            field=models.ForeignKey(
                blank=True,
                help_text="The guideline version current when the lease was handed out, which its review records "
                "(empty: none existed for the item's benchmark and type).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                db_index=False,
                to="annotation.guidelineversion",
            ),
        ),
        migrations.RunSQL(_BACKFILL, migrations.RunSQL.noop),
    ]
