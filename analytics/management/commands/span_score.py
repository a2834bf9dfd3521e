"""``manage.py span_score REF.jsonl PRED.jsonl [--json] [--per-item FILE]``: SHROOM's IoU and Spearman scores."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from evaluation.output import to_json
from evaluation.spans import format_text, span_score_report
from records.jsonl import InputFileError
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED


class Command(BaseCommand):
    help = (
        "Score a hallucination detector's spans against the physicians' (Mu-SHROOM JSONL: id, model_output_text, "
        "soft_labels, hard_labels): mean character IoU of hard labels and Spearman correlation of soft labels, as "
        "the official SHROOM scorer computes them. Needs no database."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("reference", help="JSONL of the reference (physicians') labels, with model_output_text")
        parser.add_argument("prediction", help="JSONL of the detector's labels, one line per reference answer")
        parser.add_argument("--json", action="store_true", help='print {"iou", "cor", "n", ...} as one JSON object')
        parser.add_argument("--per-item", metavar="FILE", help="also write each answer's iou and cor (JSONL)")
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")

    def handle(self, *args, **opts):
        try:
            summary, rows = span_score_report(
                opts["reference"], opts["prediction"], n_resamples=opts["resamples"], seed=opts["seed"]
            )
        except InputFileError as exc:
            raise CommandError(str(exc)) from exc
        if opts["per_item"]:
            try:
                with open(opts["per_item"], "w", encoding="utf-8") as out:
                    out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            except OSError as exc:
                raise CommandError(f"{opts['per_item']}: cannot be written: {exc.strerror or exc}") from exc
        self.stdout.write(to_json(summary) if opts["json"] else format_text(summary), ending="")
