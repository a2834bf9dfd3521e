"""``manage.py score_outputs SUBMISSION_DIR [...]``: score ClinIQLink harness folders with the Task-1 metric.

A thin wrapper over :mod:`metrics.cli`; it needs no database (no system or migration checks).
Defaults for the model path, the NLTK data directory and the stop-word version come from the settings
``METRIC_MODEL_PATH``, ``NLTK_DATA_DIR``, ``METRIC_STOPWORDS_VERSION`` and ``METRIC_CACHE_DIR`` when they are set.
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from metrics import cli


class Command(BaseCommand):
    help = "Score ClinIQLink harness output folders (true_false.json … multi_hop_inverse.json); no database."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_arguments(parser)

    def handle(self, *args, **options):
        options["model_path"] = options["model_path"] or getattr(settings, "METRIC_MODEL_PATH", None) or None
        options["nltk_data"] = options["nltk_data"] or getattr(settings, "NLTK_DATA_DIR", None) or None
        options["stopwords"] = options["stopwords"] or getattr(settings, "METRIC_STOPWORDS_VERSION", None)
        options["cache_dir"] = options["cache_dir"] or getattr(settings, "METRIC_CACHE_DIR", None) or None
        # tqdm needs the raw stream: Django's OutputWrapper ends every write with a newline.
        code = cli.run_from_namespace(options, stdout=self.stdout, stderr=getattr(self.stderr, "_out", sys.stderr))
        if code:
            raise CommandError("scoring failed (see the messages above)", returncode=code)
