"""Preference studies of one or two rankings, made through the services people use (import, study, ranking), for
the tests that every report, headline and plot holds on the smallest studies (usability F16, F17)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from django.utils import timezone

from analytics.models import AnswerScore, Report, ScoringRun
from analytics.services.requests import report_request
from annotation.models import QAItem
from annotation.services.imports import items_import
from ranking.models import HallucinationSpan, RankingTask, Study, StudyAnswer, System
from ranking.services.outputs import outputs_import
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import task_slots, task_submit

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("MODEL-A", "MODEL-B", "MODEL-C")

#: Every physician's order, best first: MODEL-A wins every comparison, MODEL-C loses every one (the case whose
#: Bradley-Terry interval missed its estimate, F16).
STRICT = {"MODEL-A": 1, "reference": 2, "MODEL-B": 3, "MODEL-C": 4}


def _outputs(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    lines = (
        json.dumps({"item_uid": i.uid, "system": name, "response": f"{name} says {i.uid}."})
        for i in QAItem.objects.all()
    )
    path.write_text("\n".join(lines) + "\n")
    outputs_import(system_name=name, paths=[path])


def tiny_study(
    tmp_path: Path,
    make_user,
    organizer,
    *,
    rankers: Sequence[int],
    systems: Sequence[str] = MODELS,
    questions: int = 2,
    rank_of: Callable[[str], int] = STRICT.__getitem__,
    ties: bool = False,
    overlap: int = 3,
    scores: bool = True,
    spans: bool = False,
) -> Study:
    """A study of ``systems`` and the reference over ``questions`` short-answer items, with one submitted ranking
    per entry of ``rankers`` (the physician's index: ``[0, 1]`` two physicians one question each, ``[0, 0]`` one
    physician two questions; ``overlap`` 1 gives two physicians a different question each). ``rank_of``: each answer's rank from its system's name (the reference is
    "reference"). ``scores``: every metric, and an imported judge, order the models as the physicians do (so the
    metrics tie);
    ``spans``: the study asks for hallucination spans too and each ranking marks the worst answer's first word."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    for name in systems:
        _outputs(tmp_path, name)
    study = study_create(
        name=f"tiny {len(rankers)}",
        systems=list(systems),
        qa_types=["short_answer"],
        sample_size=questions,
        seed=5,
        ties_allowed=ties,
        overlap=overlap,
        ask_spans=spans,
        user=organizer,
    ).study
    names = dict(StudyAnswer.objects.filter(question__study=study).values_list("pk", "system__name"))
    physicians = [make_user("ranker") for _ in range(max(rankers) + 1)]
    for index in rankers:
        task = task_next(study=study, ranker=physicians[index])
        assert task is not None, "the study has no question left for this physician"
        answers = {
            slot: {"rank": rank_of(names[answer_id]), "tag": "good" if rank_of(names[answer_id]) == 1 else "okay"}
            for slot, answer_id in zip(task_slots(task), task.order, strict=True)
        }
        marks = None
        if spans:
            worst = max(task.order, key=lambda answer_id: rank_of(names[answer_id]))
            marks = {slot: [] for slot in task_slots(task)}
            marks[task_slots(task)[task.order.index(worst)]] = [{"start": 0, "end": 5, "kind": "extrinsic"}]
        task_submit(
            task_id=task.pk, ranker=physicians[index], answers=answers, idempotency_key=f"t{task.pk}", spans=marks
        )
    assert RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).count() == len(rankers)
    if spans:
        assert HallucinationSpan.objects.filter(task__study=study).exists()
    if scores:
        _scores(study, systems, rank_of)
        _judge(study, systems, rank_of)
    return study


def _judge(study: Study, systems: Sequence[str], rank_of: Callable[[str], int]) -> None:
    """An imported judge that scores the models as the physicians rank them (the report's judges plot)."""
    from analytics.judges.scores import judge_scores_import

    uids = QAItem.objects.filter(pk__in=study.questions.values_list("item_id", flat=True)).values_list("uid", flat=True)
    lines = [
        json.dumps({"item_uid": uid, "system": name, "score": 10 - rank_of(name), "judge": "tiny judge"})
        for uid in uids
        for name in systems
    ]
    judge_scores_import(study=study, source="\n".join(lines).encode(), name="judge.jsonl", user=None)


def _scores(study: Study, systems: Sequence[str], rank_of: Callable[[str], int]) -> None:
    """A finished scoring run per model whose every metric is higher for the better-ranked model."""
    items = list(QAItem.objects.filter(pk__in=study.questions.values_list("item_id", flat=True)))
    for name in systems:
        run = ScoringRun.objects.create(
            system=System.objects.get(name=name), finished_at=timezone.now(), summary={"overall_effectiveness": 0.5}
        )
        value = 1.0 / rank_of(name)
        for index, item in enumerate(items):
            AnswerScore.objects.create(
                run=run,
                item=item,
                qa_type=item.qa_type,
                index=index,
                semantic=value,
                bleu=value / 2,
                rouge=value / 3,
                meteor=value / 4,
            )


def study_report(study: Study, organizer) -> Report:
    """The study report, computed (the job runs in-process without a broker)."""
    report = report_request(kind="study", params={"study_id": study.pk, "n_resamples": 100}, user=organizer)
    report = Report.objects.get(pk=report.pk)
    assert report.finished_at is not None, report.job and report.job.error
    return report
