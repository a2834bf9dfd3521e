"""Releases record how their CSV export writes formula-like text cells.

Releases frozen before this migration exported text cells verbatim, and their manifests hold the SHA-256 of those
bytes: they are marked ``verbatim`` (so they keep exporting byte-identical files that verify against their
manifest). Releases frozen afterwards default to ``guarded`` (portal/csv_cells.py). Adding a column does not
update rows, so the immutability trigger on annotation_release is not involved.
"""

from django.db import migrations, models

CHOICES = [
    ("verbatim", "text cells as written (releases frozen before formula guarding)"),
    ("guarded", "text cells starting with = + - @ tab or CR prefixed with '"),
]
HELP = "How the CSV export writes text cells a spreadsheet would run as formulas (portal/csv_cells.py)."


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_normalise_imported_values"),
    ]

    operations = [
        # Existing rows get the default given here...
        migrations.AddField(
            model_name="release",
            name="csv_cells",
            field=models.CharField(choices=CHOICES, default="verbatim", help_text=HELP, max_length=10),
        ),
        # ...new rows the model's default.
        migrations.AlterField(
            model_name="release",
            name="csv_cells",
            field=models.CharField(choices=CHOICES, default="guarded", help_text=HELP, max_length=10),
        ),
    ]
