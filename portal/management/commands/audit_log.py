"""``manage.py audit_log [--since ISO8601] [--json]``: the audit trail, oldest first, for a security office."""

from __future__ import annotations

import datetime as dt
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from portal.audit_trail import audit_rows, audit_since

_CHUNK = 1000
_COLUMNS = ("at", "actor", "action", "object", "detail")


class Command(BaseCommand):
    help = (
        "Print the audit trail from --since on (an ISO 8601 date or time; a time without a zone is the portal's "
        "TIME_ZONE), oldest first: a table, or with --json only a JSON list of "
        '{"at", "actor", "action", "object", "detail"}.'
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", help="e.g. 2026-12-01 or 2026-12-01T08:00:00Z")
        parser.add_argument("--json", action="store_true", help="only a JSON list, nothing else")

    def handle(self, *args, **opts):
        since = _moment(opts["since"]) if opts["since"] else None
        if opts["json"]:
            self._write_json(since)
        else:
            self._write_table(since)

    def _write_json(self, since: dt.datetime | None) -> None:
        """A JSON list written a chunk of entries at a time: a year of entries is never held at once."""
        out = self.stdout
        out.write("[", ending="")
        first = True
        for rows in _row_chunks(since):
            for row in rows:
                out.write(("" if first else ",") + "\n" + json.dumps(row, ensure_ascii=False), ending="")
                first = False
        out.write("\n]" if not first else "]")

    def _write_table(self, since: dt.datetime | None) -> None:
        self.stdout.write("\t".join(_COLUMNS))
        for rows in _row_chunks(since):
            for row in rows:
                self.stdout.write("\t".join(_cell(row[column]) for column in _COLUMNS))


def _moment(text: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise CommandError(
            f"--since {text!r} is not an ISO 8601 date or time; write e.g. 2026-12-01 or 2026-12-01T08:00:00Z"
        ) from None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


def _row_chunks(since: dt.datetime | None):
    chunk = []
    for entry in audit_since(since):
        chunk.append(entry)
        if len(chunk) == _CHUNK:
            yield audit_rows(chunk)
            chunk = []
    if chunk:
        yield audit_rows(chunk)


def _cell(value: object) -> str:
    # One entry per line: a tab or line break in a detail (a name someone typed) would break the table.
    return "—" if value is None else " ".join(str(value).split())
