"""Shared set-up for the ranking tests: the sample items, two systems with distinctive names, a study."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
SYSTEM_NAMES = ["SYSNAME-ALPHA-7B", "SYSNAME-BETA-13B"]


def write_jsonl(path: Path, system: str, items, text=None) -> Path:
    """A JSONL outputs file answering every item in ``items``."""
    text = text or (lambda item: f"An answer to {item.question[:40]} written plainly.")
    path.write_text(
        "".join(json.dumps({"item_uid": i.uid, "system": system, "response": text(i)}) + "\n" for i in items)
    )
    return path


@pytest.fixture
def sample_items(db):
    from annotation.models import QAItem
    from annotation.services.imports import items_import

    items_import(paths=[SAMPLE])
    return list(QAItem.objects.order_by("id"))


@pytest.fixture
def systems_with_outputs(sample_items, tmp_path):
    """Both systems answer every sample item (answers differ per system but look alike)."""
    from ranking.services.outputs import outputs_import

    for n, name in enumerate(SYSTEM_NAMES):
        path = write_jsonl(
            tmp_path / f"{n}.jsonl", name, sample_items, lambda i, n=n: f"Answer variant {n} for {i.pk}."
        )
        outputs_import(system_name=name, paths=[path])
    return SYSTEM_NAMES


@pytest.fixture
def make_study(systems_with_outputs, organizer):
    from ranking.services.studies import study_create

    counter = {"n": 0}

    def factory(**options):
        counter["n"] += 1
        options.setdefault("name", f"study {counter['n']}")
        options.setdefault("systems", SYSTEM_NAMES)
        options.setdefault("seed", 11)
        return study_create(user=organizer, **options).study

    return factory


def full_answers(task, *, tag="good", ranks=None) -> dict:
    """A complete, valid ``answers`` payload for a task (ranks in presented order unless given)."""
    from ranking.services.submissions import task_slots

    slots = task_slots(task)
    ranks = ranks or {slot: i + 1 for i, slot in enumerate(slots)}
    return {slot: {"rank": ranks[slot], "tag": tag} for slot in slots}
