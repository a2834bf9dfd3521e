"""ANALYZE leaves out the items' text and JSON columns.

Reviews change items' statuses hundreds of times a second, so autovacuum analyses the items table every half minute
or so under load. Its sample of 30,000 rows spent half its time on these columns' statistics (bench_capacity.py
times it: 572-624 ms for 100,000 items with them, 296-324 ms without, on the development machine), which no query
uses: nothing filters, joins or groups by them, and the searches' substring tests (``LIKE '%...%'``) are planned as
scans whatever the statistics say. That half second of a core came in the middle of the review load.
tests/annotation/test_hot_table_indexes.py holds every text and JSON column of the model to this."""

from django.db import migrations

_COLUMNS = [
    "question",
    "answer",
    "answer_list",
    "options",
    "correct_answer",
    "false_answer",
    "incorrect_explanation",
    "reasoning",
    "incorrect_reasoning_step",
    "extra",
    "raw",
]


class Migration(migrations.Migration):
    dependencies = [("annotation", "0014_hot_table_indexes")]

    operations = [
        migrations.RunSQL(
            [f"ALTER TABLE annotation_qaitem ALTER COLUMN {column} SET STATISTICS 0" for column in _COLUMNS],
            [f"ALTER TABLE annotation_qaitem ALTER COLUMN {column} SET STATISTICS -1" for column in _COLUMNS],
        )
    ]
