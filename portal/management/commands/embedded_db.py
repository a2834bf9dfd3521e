"""Start, stop or locate the embedded PostgreSQL cluster (used by `make stack`, backups and psql sessions)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from portal import embedded_pg


class Command(BaseCommand):
    help = "Manage the embedded PostgreSQL cluster: --start (keeps running after exit), --stop, --url."

    def add_arguments(self, parser):
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--start", action="store_true", help="start and leave running; print its DATABASE_URL")
        group.add_argument("--stop", action="store_true")
        group.add_argument("--url", action="store_true", help="print the DATABASE_URL (starts it if needed)")

    def handle(self, *args, **options):
        db = settings.DATABASES["default"]
        if db["ENGINE"] != "portal.pgbackend":
            raise CommandError("DATABASE_URL is set: the portal is not using the embedded cluster")
        pgdata = db["OPTIONS"]["pgdata"]
        if options["stop"]:
            stopped = embedded_pg.stop(pgdata)
            self.stdout.write("stopped" if stopped else "not running")
            return
        keep = "keep" if options["start"] else "stop"
        url = embedded_pg.connection_url(pgdata, database=db["NAME"], cleanup_mode=None if keep == "keep" else "stop")
        self.stdout.write(url)
