"""Job pages say what a job did in sentences, in the units its progress counts, with QA types and metrics by
their names: an import, a re-import, a failed import, a model-output import, a scoring run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from analytics.models import ScoringRun
from analytics.tasks import scoring_task  # noqa: F401  (registers the kind's description)
from annotation.models import ImportBatch, QAItem
from annotation.tasks import import_items_task
from portal.jobs import job_create
from portal.models import Job
from ranking.models import System
from ranking.tasks import import_outputs_task

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"

pytestmark = pytest.mark.django_db


def _sample_counts() -> dict[str, int]:
    """Records per file of the public sample, read from the files themselves."""
    return {path.name: len(json.loads(path.read_text())) for path in sorted(SAMPLE.glob("*.json"))}


def _import(organizer, paths, *, fmt="cliniqlink", batch_name="") -> Job:
    job = job_create(
        kind="import_items",
        params={"paths": [str(p) for p in paths], "format": fmt, "batch_name": batch_name, "displays": {}},
        user=organizer,
    )
    import_items_task(str(job.pk))
    return Job.objects.get(pk=job.pk)


def _text(client, job) -> str:
    """The job page's visible words (tags dropped, spaces collapsed)."""
    html = client.get(reverse("job", args=[job.pk])).content.decode()
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_an_import_is_told_in_sentences_with_the_types_by_name(organizer, organizer_client):
    counts = _sample_counts()
    assert len(counts) == 7 and len(set(counts.values())) == 1  # the sample: the same number of each type
    job = _import(organizer, [SAMPLE])
    assert job.status == "succeeded", job.error
    page = _text(organizer_client, job)
    each = next(iter(counts.values()))
    assert f"{sum(counts.values())} items imported ({each} of each of the seven types)." in page
    # Left empty, the batch is named after its files, and the page says so.
    assert f"They form the batch “{', '.join(sorted(counts))}”, named after its files." in page
    for developer_words in ("Batch id", "By type", "true false", "Created", "Existing", "/ 35"):
        assert developer_words not in page
    assert 'role="progressbar"' not in organizer_client.get(reverse("job", args=[job.pk])).content.decode()


def test_a_partial_import_names_its_types_and_batch(organizer, organizer_client):
    _import(organizer, [SAMPLE / "TF.json"])
    job = _import(organizer, [SAMPLE / "TF.json", SAMPLE / "list.json"], batch_name="December lists")
    page = _text(organizer_client, job)
    tf, lists = (len(json.loads((SAMPLE / name).read_text())) for name in ("TF.json", "list.json"))
    assert f"{lists} items imported ({lists} list)." in page
    assert f"{tf} items were already here and left as they were." in page
    assert "They form the batch “December lists”." in page
    assert ImportBatch.objects.get(name="December lists").items_created == lists


def test_a_reimport_says_nothing_new_and_that_the_batch_name_was_not_used(organizer, organizer_client):
    _import(organizer, [SAMPLE])
    again = _import(organizer, [SAMPLE], batch_name="Second try")
    total = sum(_sample_counts().values())
    page = _text(organizer_client, again)
    assert f"Nothing new: all {total} items were already here." in page
    assert "No batch “Second try” was made, since no item was new." in page
    assert not ImportBatch.objects.filter(name="Second try").exists()


def test_a_failed_import_shows_its_error_and_no_progress_bar(organizer, organizer_client, tmp_path):
    csv = tmp_path / "items.csv"
    csv.write_text("question,answer\nIs water wet?,True\n")
    job = _import(organizer, [csv])
    assert job.status == "failed"
    html = organizer_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "items.csv: ClinIQLink items must be a JSON file" in html
    assert "malformed JSON" not in html
    assert 'role="progressbar"' not in html and "0 / 0" not in html and "(0%)" not in html
    assert not QAItem.objects.exists()


def test_a_running_import_counts_its_progress_in_items(organizer, organizer_client):
    job = job_create(kind="import_items", params={}, user=organizer)
    Job.objects.filter(pk=job.pk).update(
        status="running", progress_done=10, progress_total=35, message="importing items"
    )
    page = _text(organizer_client, job)
    assert "10 of 35 items read (28%)" in page
    assert "importing items" not in page  # the stage is said by the progress line


def _harness_jsonl(path: Path, system: str) -> Path:
    path.write_text(
        "".join(
            json.dumps({"item_uid": item.uid, "system": system, "response": f"An answer to {item.uid}."}) + "\n"
            for item in QAItem.objects.order_by("id")
        )
    )
    return path


def test_a_model_output_import_and_its_reimport_in_sentences(organizer, organizer_client, tmp_path):
    _import(organizer, [SAMPLE])
    answers = _harness_jsonl(tmp_path / "alpha.jsonl", "Alpha-7B")

    def run() -> Job:
        job = job_create(
            kind="import_outputs",
            params={"system": "Alpha-7B", "paths": [str(answers)], "displays": {}},
            user=organizer,
        )
        import_outputs_task(str(job.pk))
        return Job.objects.get(pk=job.pk)

    first, again = run(), run()
    counts = _sample_counts()
    total, each = sum(counts.values()), next(iter(counts.values()))
    page = _text(organizer_client, first)
    assert f"{total} answers of “Alpha-7B” read ({each} of each of the seven types). {total} new." in page
    assert "By type" not in page and "multi hop" not in page and "Unchanged" not in page
    assert f"Nothing new for “Alpha-7B”: all {total} of its answers were already here, word for word." in _text(
        organizer_client, again
    )


def test_a_scoring_run_in_sentences_and_its_progress_with_the_metrics_by_name(organizer, organizer_client):
    system = System.objects.create(name="Beta-13B")
    run = ScoringRun.objects.create(system=system, n_items=15, summary={"overall_effectiveness": 0.61234})
    done = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    Job.objects.filter(pk=done.pk).update(
        status="succeeded",
        progress_done=10,
        progress_total=10,
        message="scoring: bleu/rouge/meteor",
        result={"run_id": run.pk, "n_items": 15, "overall_effectiveness": 0.61234},
    )
    page = _text(organizer_client, done)
    assert "15 answers of “Beta-13B” scored. Overall effectiveness: 0.6123." in page
    for developer_words in ("Run id", "bleu/rouge/meteor", "Number of items", "10 / 10"):
        assert developer_words not in page

    running = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    Job.objects.filter(pk=running.pk).update(
        status="running", progress_done=4, progress_total=10, message="scoring: bleu/rouge/meteor"
    )
    page = _text(organizer_client, running)
    assert "4 of 10 answers scored: BLEU, ROUGE and METEOR (40%)" in page
    assert "bleu/rouge/meteor" not in page
