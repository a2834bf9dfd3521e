"""Item exposures: what a page showed a person of an item that no other record keeps (their other reviews, its
answer), written by the adjudication page and API, the organizers' item page and API and dispute pages, read by the
review queue and the ranking queue (annotation.selectors.blinding). One row per person, item and kind; the unique
constraint's index is the queues' per-item look-up."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0015_item_text_statistics"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ItemExposure",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("reviews", "Other people's judgements of the item (reviews, disputes, its history)"),
                            ("reference", "The item's answer, which is the reference answer of every study"),
                        ],
                        max_length=10,
                    ),
                ),
                ("first_at", models.DateTimeField(help_text="When it was first shown.")),
                ("where", models.CharField(help_text="The page or endpoint that first showed it.", max_length=40)),
                (
                    "item",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotation.qaitem",
                    ),
                ),
                (
                    "person",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("item", "person", "kind"), name="item_exposure_once_per_kind")
                ],
            },
        ),
    ]
