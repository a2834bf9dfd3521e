"""The demo's nugget work (a step of ``demo.activity``): nuggets imported for a dozen items of the demo study's
types, most validated by the demo reviewers through the services (the physicians rank them), one disagreement settled by the
adjudicator, one left disputed for her and two drafts left for the validators, so every nugget page has content."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings

from annotation.models import NuggetSet, Release
from annotation.services.nugget_files import nuggets_import
from annotation.services.nuggets import nugget_adjudicate, nugget_next, nugget_validate
from annotation.services.releases import release_freeze
from portal.errors import DomainError

NUGGETS_FILE = "nuggets/demo-nuggets.jsonl"
# Left as drafts for the demo validators (imported after the others, so nobody has been offered them yet).
LEFT_AS_DRAFTS = {"cl-18cb4691c8d9eb2bdc72", "cl-b890cc37b78156a8d7a9"}
# The validator changes these drafts, so they go to the adjudicator: the first is settled, the second waits.
CHANGED = {
    "cl-2ff5b23c3c95a3acb70e": ("merged the two treatment nuggets", [0, 1, (2, 3)]),
    "cl-9e7ab3cd44c80778f937": ("the isoniazid nugget is detail, not a fact the answer needs", [0, 1, 3]),
}
SETTLED = "cl-2ff5b23c3c95a3acb70e"
RELEASE_NAME = "ClinIQLink demo with nuggets"
# Reviewers, not the demo physicians: whoever validated an item's nuggets saw its answer, the reference of every
# study, so a study would never hand them that question (annotation.selectors.blinding.reference_seen_q).
VALIDATORS = ("reviewer1@demo.portal", "reviewer2@demo.portal", "reviewer3@demo.portal")


def demo_nuggets(users: dict) -> str:
    """Run once: skipped when any nugget version exists."""
    if NuggetSet.objects.exists():
        return ""
    path = Path(settings.BASE_DIR) / "fixtures" / NUGGETS_FILE
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    organizer = users["organizer@demo.portal"]
    first = [line for line in lines if json.loads(line)["item_uid"] not in LEFT_AS_DRAFTS]
    by_uid = {json.loads(line)["item_uid"]: json.loads(line)["nuggets"] for line in lines}
    nuggets_import(source=first, name="demo-nuggets.jsonl", actor=organizer)
    validated = disputed = 0
    turn = 0
    while True:
        validator = users[VALIDATORS[turn % len(VALIDATORS)]]
        turn += 1
        task = nugget_next(person=validator, stage="validate")
        if task is None:
            if turn > 4 * len(VALIDATORS):
                break
            continue
        uid = task.item.uid
        if uid in CHANGED:
            note, keep = CHANGED[uid]
            nugget_validate(task_id=task.pk, person=validator, nuggets=_changed(by_uid[uid], keep), note=note)
            disputed += 1
        else:
            nugget_validate(task_id=task.pk, person=validator)
            validated += 1
    settled = NuggetSet.objects.filter(item__uid=SETTLED, origin=NuggetSet.Origin.VALIDATION).first()
    if settled is not None:
        nugget_adjudicate(
            item=settled.item,
            adjudicator=users["adjudicator@demo.portal"],
            pick_version=settled.version,
            note="The merged nugget states the preventive treatment once; both lists say the same otherwise.",
        )
    rest = [line for line in lines if json.loads(line)["item_uid"] in LEFT_AS_DRAFTS]
    nuggets_import(source=rest, name="demo-nuggets-more.jsonl", actor=organizer)
    return (
        f"Nuggets: {len(lines)} items imported, {validated} validated as written, {disputed} changed by the "
        f"validator (one settled by the adjudicator, one waiting), {len(rest)} drafts waiting. {_release(organizer)}"
    )


def _release(organizer) -> str:
    """A second demo release, frozen with the validated nuggets, so the release page shows them."""
    if Release.objects.filter(name=RELEASE_NAME).exists():
        return ""
    try:
        release = release_freeze(
            name=RELEASE_NAME,
            note="Demo: the verified items with their validated nuggets.",
            user=organizer,
            with_nuggets=True,
        )
    except DomainError as refusal:  # nothing qualifies yet (people vetted this database themselves)
        return f"No release with nuggets: {refusal}"
    with_nuggets = release.items.filter(nuggets__isnull=False).count()
    return f"Release {release.label} frozen with nuggets for {with_nuggets} of its {release.item_count} items."


def _changed(nuggets: list[dict], keep: list) -> list[dict]:
    """The validator's version: the kept nuggets in order; a pair (i, j) merges two nuggets into one."""
    result = []
    for part in keep:
        if isinstance(part, tuple):
            a, b = (nuggets[i] for i in part)
            result.append(
                {
                    "id": a["id"],
                    "text": f"{a['text'][:-1]}; {b['text'][0].lower()}{b['text'][1:]}",
                    "importance": a["importance"],
                }
            )
        else:
            result.append(nuggets[part])
    return result
