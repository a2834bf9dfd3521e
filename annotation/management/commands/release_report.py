import json
import sys

from django.core.management.base import BaseCommand, CommandError

from annotation.selectors.releases import REPORT_COLUMNS, report_rows
from annotation.services.releases import release_get
from portal import csv_cells
from portal.errors import DomainError


class Command(BaseCommand):
    help = "The composition report (the paper's Table 1) of release NAME, as a table, CSV or JSON."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--csv", action="store_true")

    def handle(self, *args, **options):
        try:
            release = release_get(options["name"])
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        report = release.report
        if options["json"]:
            self.stdout.write(json.dumps({"release": release.label, **report}, indent=2))
            return
        if options["csv"]:
            writer = csv_cells.DictWriter(
                sys.stdout, fieldnames=REPORT_COLUMNS, extrasaction="ignore", lineterminator="\n"
            )
            writer.writeheader()
            writer.writerows(report_rows(report))
            return
        self.stdout.write(f"{release.label}: {release.item_count} items")
        self.stdout.write(" ".join(f"{c:>13}" for c in REPORT_COLUMNS))
        for row in report_rows(report):
            self.stdout.write(" ".join(f"{str(row.get(c, '')):>13}" for c in REPORT_COLUMNS))
        self.stdout.write(
            f"feedback notes {report['feedback_notes']} (open {report['open_feedback_notes']}), "
            f"disputes {report['disputes']} (open {report['open_disputes']}), held items {report['held_items']}"
        )
