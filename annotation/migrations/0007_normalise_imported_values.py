"""Give every imported item's values the one representation the importers now write: ``source.page`` a whole
number (a string of digits was accepted too, and a release mixing both failed to freeze), ``source.isbn``, ``uid``,
``id`` and PromptCBLUE's ``sample_id`` text, a true/false answer ``"True"`` / ``"False"``.

Only ``QAItem`` rows change. Frozen release rows (``ReleaseItem.record``) are never rewritten (the database refuses
it, and their exports must keep the bytes their manifests recorded); the table exporters write a column mixing
numbers and text as text instead. A value that has no other representation (a page such as "xii") is left as it is.
The conversions are written out here rather than imported from the importers so that this migration keeps doing
what it did when it was written.
"""

from django.db import migrations

_MAX_DIGITS = 15  # annotation.importers.base.MAX_INT_DIGITS when this was written


def _page(value):
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        if len(value.strip()) <= _MAX_DIGITS:
            return int(value.strip())
    return value


def _text(value):
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _normalised(raw: dict) -> dict:
    raw = dict(raw)
    for key in ("uid", "id", "sample_id"):
        if key in raw:
            raw[key] = _text(raw[key])
    if isinstance(raw.get("source"), dict):
        source = raw["source"] = dict(raw["source"])
        if "page" in source:
            source["page"] = _page(source["page"])
        if "isbn" in source:
            source["isbn"] = _text(source["isbn"])
    if raw.get("type") == "true_false" and isinstance(raw.get("answer"), str):
        canonical = {"true": "True", "false": "False"}.get(raw["answer"].strip().lower())
        if canonical:
            raw["answer"] = canonical
    return raw


def normalise(apps, schema_editor):
    QAItem = apps.get_model("annotation", "QAItem")
    changed = []
    fields = ["raw", "page", "isbn", "answer"]
    for item in QAItem.objects.only("id", "qa_type", *fields).iterator(chunk_size=2000):
        if not isinstance(item.raw, dict):
            continue
        raw = _normalised(item.raw)
        if raw == item.raw:  # 12 != "12": a converted value always makes them differ
            continue
        source = raw.get("source") if isinstance(raw.get("source"), dict) else {}
        if "page" in source:
            item.page = str(source["page"])
        if isinstance(source.get("isbn"), str):
            item.isbn = source["isbn"]
        if item.qa_type == "true_false" and item.answer.strip().lower() == str(raw.get("answer", "")).lower():
            item.answer = raw["answer"]  # the stored answer was the imported one (not an edit): same spelling
        item.raw = raw
        changed.append(item)
        if len(changed) >= 2000:
            QAItem.objects.bulk_update(changed, fields)
            changed = []
    QAItem.objects.bulk_update(changed, fields)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_release_report_finite_json"),
    ]

    operations = [
        migrations.RunPython(normalise, migrations.RunPython.noop, elidable=False),
    ]
