"""Load demo data once: institutions, one demo user per role (passwords printed), the public sample."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from annotation.services.imports import items_import, sources_import
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
        self._demo_study()
        self.stdout.write(
            f"Demo items: {result.created + cblue.created} new, {result.existing + cblue.existing} already present."
        )
        self.stdout.write(self.style.SUCCESS("Demo accounts (sign in with email + password):"))
        for email, _name, roles, password in DEMO_USERS:
            self.stdout.write(f"  {', '.join(roles):<22} {email:<28} {password}")
        if not created_any:
            self.stdout.write("(demo users already existed; passwords unchanged unless you changed them)")

    def _demo_study(self):
        """Two demo systems (answers from the metric reference fixtures) and an open preference study."""
        from ranking.models import Study
        from ranking.services.outputs import outputs_import
        from ranking.services.studies import study_create

        systems = {"Demo model A": "open_step_d1_exact", "Demo model B": "open_c_wrong"}
        for name, folder in systems.items():
            outputs_import(system_name=name, paths=[FIXTURES / "metric-reference" / folder])
        if not Study.objects.filter(name="Demo study").exists():
            study_create(
                name="Demo study",
                systems=list(systems),
                qa_types=["short_answer", "short_inverse", "multi_hop"],
                overlap=2,
                seed=1,
                guidelines="Rank the answers from most to least useful to a general practitioner; tag each one.",
            )
