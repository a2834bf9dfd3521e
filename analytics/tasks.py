"""Celery tasks of the analytics app: ids in, one service call, progress on the job record."""

from celery import shared_task
from django.conf import settings
from django.urls import reverse

from analytics.embeddings import embeddings_prune
from analytics.models import Report, ScoringChunk, ScoringRun, ScoringSlice
from analytics.nuggets.board import nugget_board_compute
from analytics.nuggets.matching import nugget_matcher_run
from analytics.scoring.promptcblue import promptcblue_run_execute
from analytics.scoring.runs import scoring_chunk_encode, scoring_run_execute, scoring_run_split
from analytics.scoring.slices import scoring_run_slice, scoring_slice_score
from analytics.selectors import SCORE_LABELS
from analytics.services.reports import report_run
from analytics.spans.detectors import span_leaderboard_compute
from portal.job_kinds import count_phrase, job_task, words_list
from portal.jobs import CONTINUES, job_part, job_part_enqueue, job_run
from ranking.models import Study


@job_task(
    kind="report",
    label="Report",
    links=lambda result, params: (
        [("The report", reverse("report_detail", args=[int(params["report_id"])]))] if params.get("report_id") else []
    ),
)
def report_task(job_id: str) -> None:
    def work(job, progress):
        report = Report.objects.get(pk=job.params["report_id"])
        report_run(report=report, progress=progress)
        return {"report_id": report.pk}

    job_run(job_id, work)


@job_task(
    kind="span_leaderboard",
    label="Hallucination detector leaderboard",
    links=lambda result, params: [("The leaderboard", reverse("span_detectors", args=[int(params["study_id"])]))],
)
def span_leaderboard_task(job_id: str) -> None:
    def work(job, progress):
        board = span_leaderboard_compute(study_id=job.params["study_id"], progress=progress).result
        return {"detectors": len(board["detectors"]), "answers_read": board["n_answers"]}

    job_run(job_id, work)


@job_task(
    kind="nugget_leaderboard",
    label="Nugget leaderboard and agreement",
    links=lambda result, params: [
        ("The nugget leaderboard", reverse("nugget_leaderboard", args=[int(params["study_id"])]))
    ],
)
def nugget_leaderboard_task(job_id: str) -> None:
    def work(job, progress):
        board = nugget_board_compute(study_id=job.params["study_id"], progress=progress).result
        return {"answers": board["n_answers"], "labellers": len(board["labellers"])}

    job_run(job_id, work)


def _scoring_sentences(result: dict, params: dict) -> list[str]:
    run = ScoringRun.objects.select_related("system").filter(pk=result["run_id"]).first()
    whose = f" of “{run.system.name}”" if run is not None else ""
    sentences = [f"{count_phrase(int(result['n_items']), 'answer', 'answers')}{whose} scored."]
    overall = result.get("overall_effectiveness")
    if overall is not None:
        sentences.append(f"Overall effectiveness: {float(overall):.4f}.")
    return sentences


def _scoring_progress(message: str, done: int, total: int) -> str:
    """The stages the scoring writes ("scoring: bleu/rouge/meteor", "encoding texts: 2 of 5 chunks done") in the
    units each one counts, the metrics by their names."""
    counted = f"{done:,} of {total:,}"
    if message.startswith("encoding texts"):
        return f"{counted} texts encoded"
    if "slices combined" in message or "combining the slices" in message:
        return f"{counted} slices combined"
    stage = message.removeprefix("scoring: ").strip()
    metrics = stage.split("/") if stage else []
    if metrics and all(m in SCORE_LABELS for m in metrics):
        return f"{counted} answers scored: {words_list([SCORE_LABELS[m] for m in metrics])}"
    return f"{counted} answers scored"


@job_task(
    kind="scoring",
    label="Score a system",
    links=lambda result, params: [("Scoring runs and the Task 1 leaderboard", reverse("analytics_home"))],
    describe=_scoring_sentences,
    progress_text=_scoring_progress,
)
def scoring_task(job_id: str) -> None:
    """Score a run in this task; or, for a very large run, compute what its slices share and queue them
    (``analytics.scoring.slices``); or split its encoding into chunk tasks (``analytics.scoring.runs``)."""

    def work(job, progress):
        run = ScoringRun.objects.get(pk=job.params["run_id"])
        slices = scoring_run_slice(run=run)
        if slices:
            progress.start(sum(p.stop - p.start for p in slices), f"scoring answers: {len(slices)} slices queued")
            for part in slices:
                job_part_enqueue(scoring_slice_task, job_id, part.pk)
            return CONTINUES
        if run.slices.exists():  # every slice is scored and the final task was lost: combine them here
            return _score(run, progress)
        chunks = scoring_run_split(run=run)
        if not chunks:
            return _score(run, progress)
        progress.start(sum(len(c.texts) for c in chunks), f"encoding texts: {len(chunks)} chunks queued")
        for chunk in chunks:
            job_part_enqueue(scoring_chunk_task, job_id, chunk.pk)
        return CONTINUES

    job_run(job_id, work)


@shared_task(acks_late=True)
def scoring_chunk_task(job_id: str, chunk_id: int) -> None:
    def work(job):
        if scoring_chunk_encode(chunk=ScoringChunk.objects.get(pk=chunk_id)):
            job_part_enqueue(scoring_finish_task, job_id)

    job_part(job_id, work)


@shared_task(acks_late=True)
def scoring_slice_task(job_id: str, slice_id: int) -> None:
    def work(job):
        if scoring_slice_score(part=ScoringSlice.objects.get(pk=slice_id)):
            job_part_enqueue(scoring_finish_task, job_id)

    job_part(job_id, work)


@shared_task(acks_late=True)
def scoring_finish_task(job_id: str) -> None:
    """The last step of a split run: every text is in the store, or every slice is scored (then only the
    closed-ended types are scored here, and the summary combined)."""
    job_run(job_id, lambda job, progress: _score(ScoringRun.objects.get(pk=job.params["run_id"]), progress),
            resume=True)  # fmt: skip


def _score(run, progress) -> dict:
    scoring_run_execute(run=run, progress=progress)
    return {"run_id": run.pk, "n_items": run.n_items, "overall_effectiveness": run.summary.get("overall_effectiveness")}


def _promptcblue_sentences(result: dict, params: dict) -> list[str]:
    run = ScoringRun.objects.select_related("system").filter(pk=result["run_id"]).first()
    whose = f" of “{run.system.name}”" if run is not None else ""
    sentences = [f"{count_phrase(int(result['n_items']), 'PromptCBLUE sample', 'PromptCBLUE samples')}{whose} scored."]
    if result.get("score") is not None:
        which = "official overall" if result.get("official_overall") else "mean over the tasks present"
        sentences.append(f"Score ({which}): {float(result['score']):.2f} of 100.")
    if result.get("unanswered"):
        sentences.append(
            f"{count_phrase(int(result['unanswered']), 'item', 'items')} without an answer, scored as empty."
        )
    return sentences


@job_task(
    kind="promptcblue_scoring",
    label="Score a system on PromptCBLUE",
    links=lambda result, params: [
        ("The PromptCBLUE leaderboard", reverse("promptcblue_leaderboard")),
        *([("The scored samples", reverse("promptcblue_run", args=[int(params["run_id"])]))] if result else []),
    ],
    describe=_promptcblue_sentences,
)
def promptcblue_scoring_task(job_id: str) -> None:
    def work(job, progress):
        run = promptcblue_run_execute(run=ScoringRun.objects.get(pk=job.params["run_id"]), progress=progress)
        return {
            "run_id": run.pk,
            "n_items": run.n_items,
            "score": run.summary.get("score"),
            "official_overall": run.run_record.get("official_overall"),
            "unanswered": run.run_record.get("unanswered", 0),
        }

    job_run(job_id, work)


@job_task(
    kind="nugget_matcher",
    label="Run the nugget matcher",
    links=lambda result, params: [
        ("The nugget leaderboard", reverse("nugget_leaderboard", args=[int(params["study_id"])]))
    ],
)
def nugget_matcher_task(job_id: str) -> None:
    """Label every answer of a nugget study with the embedding matcher, at the thresholds recorded on the job."""

    def work(job, progress):
        study = Study.objects.get(pk=job.params["study_id"])
        return nugget_matcher_run(
            study=study,
            support_threshold=job.params["support_threshold"],
            partial_threshold=job.params["partial_threshold"],
            job=job,
            progress=progress,
        )

    job_run(job_id, work)


@shared_task
def embeddings_prune_task() -> int:
    """Periodic: stored sentence embeddings older than ``METRIC_EMBEDDING_RETENTION_DAYS`` go."""
    return embeddings_prune(older_than_days=settings.METRIC_EMBEDDING_RETENTION_DAYS)
