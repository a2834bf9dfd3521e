from django.core.management.base import BaseCommand, CommandError

from portal.errors import DomainError
from ranking.models import DEFAULT_TAG_SCALE
from ranking.services.studies import study_create


class Command(BaseCommand):
    help = "Create a preference study over the items that have an output from every chosen system."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--system", dest="systems", action="append", required=True, help="Repeat per system.")
        parser.add_argument("--qa-type", dest="qa_types", action="append", default=[])
        parser.add_argument("--sample-size", type=int, default=None)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--release-id", type=int, default=None)
        parser.add_argument("--no-reference", action="store_true")
        parser.add_argument("--overlap", type=int, default=3, help="Rankers per question.")
        parser.add_argument("--ties", action="store_true")
        parser.add_argument("--tags", default=",".join(DEFAULT_TAG_SCALE), help="Tag scale, best first.")
        parser.add_argument("--hallucination", action="store_true")
        parser.add_argument("--harm", action="store_true")
        parser.add_argument("--unblinding-rate", type=float, default=0.0)
        parser.add_argument("--no-ranking", action="store_true", help="Do not ask rankers to order the answers.")
        parser.add_argument(
            "--nuggets", action="store_true", help="Ask rankers to check each answer against the item's nuggets."
        )
        parser.add_argument(
            "--spans", action="store_true", help="Ask rankers to mark each answer's hallucinated words."
        )
        parser.add_argument(
            "--span-characters",
            action="store_true",
            help="Span marks keep exactly the characters selected (by default a selection grows to whole words).",
        )
        parser.add_argument("--guidelines", default="", help="Text, or @path to read it from a file.")

    def handle(self, *args, **o):
        guidelines = o["guidelines"]
        if guidelines.startswith("@"):
            with open(guidelines[1:], encoding="utf-8") as handle:
                guidelines = handle.read()
        try:
            result = study_create(
                name=o["name"],
                systems=o["systems"],
                qa_types=o["qa_types"],
                sample_size=o["sample_size"],
                seed=o["seed"],
                release_id=o["release_id"],
                include_reference=not o["no_reference"],
                overlap=o["overlap"],
                ties_allowed=o["ties"],
                tag_scale=[t for t in o["tags"].split(",") if t.strip()],
                ask_hallucination=o["hallucination"],
                ask_harm=o["harm"],
                unblinding_rate=o["unblinding_rate"],
                guidelines=guidelines,
                ask_ranking=not o["no_ranking"],
                ask_nuggets=o["nuggets"],
                ask_spans=o["spans"],
                spans_by_character=o["span_characters"],
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"Study {result.study.pk} {result.study.name!r}: {result.summary()}"))
