"""Indexes that every review wrote and no query read: dropped (see QAItem.Meta for the rule and the measurement).

Only the database's state changes here, with drops and renames: the plain indexes the models now declare by name are
the ones Django made for ``db_index=True`` (renamed, not rebuilt), the uid's unique constraint is the one it made for
``unique=True`` (renamed), and the foreign keys keep their constraints (Django's own operations would drop and
re-validate them over every row). Reversing rebuilds what was dropped."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


# What is dropped, and how the reverse rebuilds it.
_RECREATE = {
    "qaitem_question_trgm": "annotation_qaitem USING gin (question gin_trgm_ops)",
    "annotation_qaitem_uid_1d3552b7_like": "annotation_qaitem (uid varchar_pattern_ops)",
    "annotation_qaitem_qa_type_3e770857": "annotation_qaitem (qa_type)",
    "annotation_qaitem_qa_type_3e770857_like": "annotation_qaitem (qa_type varchar_pattern_ops)",
    "annotation_qaitem_benchmark_026a7f87_like": "annotation_qaitem (benchmark varchar_pattern_ops)",
    "annotation_qaitem_paragraph_id_e97a42c2_like": "annotation_qaitem (paragraph_id varchar_pattern_ops)",
    "annotation_qaitem_status_0c6d0b56_like": "annotation_qaitem (status varchar_pattern_ops)",
    "annotation_qaitem_batch_id_be29afc9": "annotation_qaitem (batch_id)",
    "annotation_assignment_item_id_21c60055": "annotation_assignment (item_id)",
    "annotation_assignment_reviewer_id_30b36358": "annotation_assignment (reviewer_id)",
    "annotation_review_guideline_id_578ff004": "annotation_review (guideline_id)",
}
_RENAME = {
    "annotation_qaitem_status_0c6d0b56": "qaitem_status",
    "annotation_qaitem_benchmark_026a7f87": "qaitem_benchmark",
    "annotation_qaitem_paragraph_id_e97a42c2": "qaitem_paragraph_id",
}
_FORWARD = [
    *(f'DROP INDEX "{name}"' for name in _RECREATE),
    *(f'ALTER INDEX "{old}" RENAME TO "{new}"' for old, new in _RENAME.items()),
    'ALTER TABLE annotation_qaitem RENAME CONSTRAINT "annotation_qaitem_uid_key" TO "qaitem_uid_unique"',
]
_BACKWARD = [
    'ALTER TABLE annotation_qaitem RENAME CONSTRAINT "qaitem_uid_unique" TO "annotation_qaitem_uid_key"',
    *(f'ALTER INDEX "{new}" RENAME TO "{old}"' for old, new in _RENAME.items()),
    *(f'CREATE INDEX "{name}" ON {definition}' for name, definition in _RECREATE.items()),
]


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_assignment_guideline"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(_FORWARD, _BACKWARD)],
            state_operations=[
                migrations.RemoveIndex(
                    model_name="qaitem",
                    name="qaitem_question_trgm",
                ),
                migrations.AlterField(
                    model_name="assignment",
                    name="item",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assignments",
                        to="annotation.qaitem",
                    ),
                ),
                migrations.AlterField(
                    model_name="assignment",
                    name="reviewer",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="assignments",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="qaitem",
                    name="batch",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="items",
                        to="annotation.importbatch",
                    ),
                ),
                migrations.AlterField(
                    model_name="qaitem",
                    name="benchmark",
                    field=models.CharField(default="cliniqlink", max_length=40),
                ),
                migrations.AlterField(
                    model_name="qaitem",
                    name="paragraph_id",
                    field=models.CharField(blank=True, max_length=200),
                ),
                migrations.AlterField(
                    model_name="qaitem",
                    name="qa_type",
                    field=models.CharField(
                        choices=[
                            ("true_false", "True / false"),
                            ("multiple_choice", "Multiple choice"),
                            ("list", "List"),
                            ("short_answer", "Short answer"),
                            ("short_inverse", "Short inverse"),
                            ("multi_hop", "Multi-hop"),
                            ("multi_hop_inverse", "Multi-hop inverse"),
                            ("generic", "Other benchmark"),
                        ],
                        max_length=30,
                    ),
                ),
                migrations.AlterField(
                    model_name="qaitem",
                    name="status",
                    field=models.CharField(
                        choices=[
                            ("imported", "Imported"),
                            ("in_review", "In review"),
                            ("reviewed", "Reviewed"),
                            ("in_second_review", "In second review"),
                            ("agreed", "Agreed"),
                            ("in_adjudication", "In adjudication"),
                            ("verified", "Verified"),
                            ("rejected", "Rejected"),
                            ("held", "Held"),
                        ],
                        default="imported",
                        max_length=30,
                    ),
                ),
                migrations.AlterField(
                    model_name="qaitem",
                    name="uid",
                    field=models.CharField(max_length=100),
                ),
                migrations.AlterField(
                    model_name="review",
                    name="guideline",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        help_text="The guideline version shown with the item (empty: none existed for its benchmark and type).",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="annotation.guidelineversion",
                    ),
                ),
                migrations.AddIndex(
                    model_name="qaitem",
                    index=models.Index(fields=["status"], name="qaitem_status"),
                ),
                migrations.AddIndex(
                    model_name="qaitem",
                    index=models.Index(fields=["benchmark"], name="qaitem_benchmark"),
                ),
                migrations.AddIndex(
                    model_name="qaitem",
                    index=models.Index(fields=["paragraph_id"], name="qaitem_paragraph_id"),
                ),
                migrations.AddConstraint(
                    model_name="qaitem",
                    constraint=models.UniqueConstraint(fields=("uid",), name="qaitem_uid_unique"),
                ),
            ],
        ),
    ]
