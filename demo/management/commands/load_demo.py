"""Load demo data once: institutions, one demo user per role (passwords printed), the public sample, and the
work a team would have done after a few days (demo.activity): half-done vetting, a release, rankings, scores, reports."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from annotation.services.imports import items_import, sources_import
from demo.activity import demo_activity
from portal.models import Institution, User
from portal.roles import Role
from portal.services import person_admit

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
DEMO_USERS = [
    ("organizer@demo.portal", "Olivia Organizer", [Role.ORGANIZER], "freeze-and-export-25"),
    ("reviewer1@demo.portal", "Rita Reviewer", [Role.REVIEWER], "check-every-answer-25"),
    ("reviewer2@demo.portal", "Raj Reviewer", [Role.REVIEWER], "check-every-answer-25"),
    ("reviewer3@demo.portal", "Rosa Reviewer", [Role.REVIEWER], "check-every-answer-25"),
    ("adjudicator@demo.portal", "Ada Adjudicator", [Role.ADJUDICATOR, Role.REVIEWER], "settle-the-disputes-25"),
    ("ranker1@demo.portal", "Dr Paul Physician", [Role.RANKER], "order-the-answers-25"),
    ("ranker2@demo.portal", "Dr Petra Physician", [Role.RANKER], "order-the-answers-25"),
]


class Command(BaseCommand):
    help = "Load the demo data (idempotent): demo users for every role and the public ClinIQLink sample."

    def handle(self, *args, **options):
        created_any = False
        if not User.objects.filter(email=DEMO_USERS[0][0]).exists():
            created_any = True
            north, _ = Institution.objects.get_or_create(name="Northern Medical School", defaults={"country": "IE"})
            south, _ = Institution.objects.get_or_create(
                name="Southern University Hospital", defaults={"country": "US"}
            )
            for i, (email, name, roles, password) in enumerate(DEMO_USERS):
                person_admit(
                    email=email,
                    name=name,
                    institution=north if i % 2 else south,
                    roles=[str(r) for r in roles],
                    password=password,
                )
        result = items_import(paths=[FIXTURES / "cliniqlink-sample"], batch_name="Demo: ClinIQLink public sample")
        cblue = items_import(
            paths=[FIXTURES / "promptcblue-sample.jsonl"], fmt="promptcblue", batch_name="Demo: PromptCBLUE"
        )
        sources_import(paths=[FIXTURES / "demo-sources.csv"])
        users = {u.email: u for u in User.objects.filter(email__in=[row[0] for row in DEMO_USERS])}
        demo_activity(users=users, out=self.stdout.write if options["verbosity"] else None)
        self.stdout.write(
            f"Demo items: {result.created + cblue.created} new, {result.existing + cblue.existing} already present."
        )
        self.stdout.write(self.style.SUCCESS("Demo accounts (sign in with email + password):"))
        for email, _name, roles, password in DEMO_USERS:
            self.stdout.write(f"  {', '.join(roles):<22} {email:<28} {password}")
        if not created_any:
            self.stdout.write("(demo users already existed; passwords unchanged unless you changed them)")
