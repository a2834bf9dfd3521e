"""Frozen benchmark releases. Rows are written once, at freeze time, and never changed: database triggers
(migrations ``releases`` and ``release_insert_truncate_guard``) refuse every UPDATE, DELETE and TRUNCATE, and
every INSERT of items into a frozen release, whatever the door (admin, API, shell, service, raw SQL)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from portal.jsonfields import FiniteJSONEncoder


class Release(models.Model):
    class CsvCells(models.TextChoices):
        # The CSV export's bytes are fixed at freeze time (manifest), so the convention is part of the release.
        VERBATIM = "verbatim", "text cells as written (releases frozen before formula guarding)"
        GUARDED = "guarded", "text cells starting with = + - @ tab or CR prefixed with '"

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    note = models.TextField(blank=True)
    rule = models.JSONField(help_text="The selection rule's parameters, as used.")
    item_count = models.PositiveIntegerField()
    manifests = models.JSONField(help_text="Per export format: file name → SHA-256 of its bytes.")
    checksum = models.CharField(max_length=64, help_text="SHA-256 over the ClinIQLink export's manifest.")
    report = models.JSONField(encoder=FiniteJSONEncoder, help_text="The composition report (Table 1) at freeze time.")
    csv_cells = models.CharField(
        max_length=10,
        choices=CsvCells.choices,
        default=CsvCells.GUARDED,
        help_text="How the CSV export writes text cells a spreadsheet would run as formulas (portal/csv_cells.py).",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)
    # False only inside the freeze's own transaction, while its items are inserted; the freeze's last step sets
    # it. The database refuses items for a frozen release, any other change of this flag, and a commit that
    # leaves a release unfrozen.
    frozen = models.BooleanField(default=False, editable=False)
    with_nuggets = models.BooleanField(
        db_default=False, help_text="The items' validated nuggets were frozen with them (manifest and exports)."
    )

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="release_name_version_unique")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"


class ReleaseItem(models.Model):
    """An item as it was frozen: its record and final judgement, snapshotted."""

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="items")
    position = models.PositiveIntegerField()
    item = models.ForeignKey("annotation.QAItem", on_delete=models.PROTECT, related_name="release_entries")
    uid = models.CharField(max_length=100)
    qa_type = models.CharField(max_length=30)
    record = models.JSONField()
    final_verdict = models.CharField(max_length=20, blank=True)
    final_relevance = models.FloatField(null=True, blank=True)
    final_source = models.CharField(max_length=20, blank=True)
    review_count = models.PositiveSmallIntegerField(default=0)
    nuggets = models.JSONField(
        null=True,
        blank=True,
        help_text="The item's validated nuggets at freeze time ({version, nuggets: [{id, text, importance}]}); "
        "empty when the release was frozen without nuggets or the item had none.",
    )

    class Meta:
        ordering = ["release", "position"]
        constraints = [
            models.UniqueConstraint(fields=["release", "position"], name="release_item_position_unique"),
            models.UniqueConstraint(fields=["release", "item"], name="release_item_once"),
        ]

    def __str__(self) -> str:
        return f"{self.release_id}#{self.position} {self.uid}"
