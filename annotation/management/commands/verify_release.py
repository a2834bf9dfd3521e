from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.release_nuggets import NUGGETS_FORMAT
from annotation.services.releases import EXPORT_FORMATS, release_get, release_verify
from portal.errors import DomainError


class Command(BaseCommand):
    help = "Check a folder of exported files against release NAME's recorded SHA-256 manifest."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("folder", type=Path)
        parser.add_argument("--format", choices=(*EXPORT_FORMATS, NUGGETS_FORMAT))

    def handle(self, *args, **options):
        try:
            release = release_get(options["name"])
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        problems = release_verify(release=release, folder=options["folder"], fmt=options["format"])
        if problems:
            raise CommandError(f"{options['folder']} does not match {release.label}:\n" + "\n".join(problems))
        self.stdout.write(
            self.style.SUCCESS(f"{options['folder']} matches {release.label} (checksum {release.checksum})")
        )
