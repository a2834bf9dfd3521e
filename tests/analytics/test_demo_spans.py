"""The demo study carries hallucination spans from both demo rankers (both kinds, some agreement, some not) and two
demo detectors, so the detector leaderboard, the report's span sections and the per-item view have content.

What the demo stores is checked against its own rules, and the figures the report and the leaderboard show are
recomputed here from the stored rows alone (tasks, spans, answer texts, predictions), not through the portal's
span selectors."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from django.core.management import call_command
from django.urls import reverse

from analytics.models import Report, SpanDetector, SpanPrediction
from analytics.spans.detectors import detector_leaderboard
from ranking.models import AnswerJudgement, HallucinationSpan, RankingTask, Study, StudyAnswer
from ranking.selectors.spans import study_span_labels

pytestmark = pytest.mark.django_db

CAREFUL, EAGER = "Demo detector (careful)", "Demo detector (eager)"
KINDS = ("intrinsic", "extrinsic", "other")
WORD_CHAR = re.compile(r"\w")
WORD = re.compile(r"\w+")


def _is_word_char(text: str, index: int) -> bool:
    return 0 <= index < len(text) and bool(WORD_CHAR.match(text[index]))


def _rows(study: Study) -> dict:
    """The study's submitted tasks and their spans as plain rows: who read which answer, and what each marked."""
    tasks = list(
        RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).values_list(
            "pk", "ranker__email", "order"
        )
    )
    texts = dict(StudyAnswer.objects.filter(question__study=study).values_list("pk", "text"))
    systems = dict(StudyAnswer.objects.filter(question__study=study).values_list("pk", "system__name"))
    readers: dict[int, list[int]] = defaultdict(list)  # answer -> tasks that showed it
    for task_id, _, order in tasks:
        for answer_id in order:
            readers[answer_id].append(task_id)
    marks: dict[tuple[int, int], list[tuple[int, int, str, str]]] = defaultdict(list)
    for task_id, answer_id, start, end, kind, note in HallucinationSpan.objects.filter(task__study=study).values_list(
        "task_id", "answer_id", "start", "end", "kind", "note"
    ):
        marks[task_id, answer_id].append((start, end, kind, note))
    return {
        "tasks": tasks,
        "ranker": {task_id: email for task_id, email, _ in tasks},
        "texts": texts,
        "systems": systems,
        "readers": dict(readers),
        "marks": dict(marks),
    }


def _hard_characters(rows: dict, answer_id: int) -> set[int]:
    """The characters more than half of the answer's readers marked."""
    counts: dict[int, int] = defaultdict(int)
    for task_id in rows["readers"][answer_id]:
        marked = {i for start, end, _, _ in rows["marks"].get((task_id, answer_id), []) for i in range(start, end)}
        for i in marked:
            counts[i] += 1
    half = len(rows["readers"][answer_id]) / 2
    return {i for i, n in counts.items() if n > half}


def _runs(characters: set[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in sorted(characters):
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return runs


def _check_spans(rows: dict) -> None:
    """Every span lies inside the answer its task showed, on whole words; the kinds are the demo's."""
    assert rows["marks"], "the demo marked nothing"
    rankers = sorted(set(rows["ranker"].values()))
    assert len(rankers) == 2, rankers
    first_ranker = rankers[0]
    orders = {task_id: order for task_id, _, order in rows["tasks"]}
    for (task_id, answer_id), spans in rows["marks"].items():
        assert task_id in orders and answer_id in orders[task_id], (task_id, answer_id)  # a submitted task showed it
        text = rows["texts"][answer_id]
        assert len(spans) == 1, spans  # the demo marks one stretch per answer and ranker
        for start, end, kind, note in spans:
            assert 0 <= start < end <= len(text), (start, end, len(text))
            marked = text[start:end]
            assert _is_word_char(text, start) and not _is_word_char(text, start - 1), (marked, text)
            assert _is_word_char(text, end - 1) and not _is_word_char(text, end), (marked, text)
            assert kind in KINDS
            if rows["ranker"][task_id] == first_ranker:
                assert kind in ("intrinsic", "extrinsic") and note == "", (kind, note)
    kinds = {kind for spans in rows["marks"].values() for _, _, kind, _ in spans}
    assert {"intrinsic", "extrinsic"} <= kinds


def _check_item_labels(study: Study, rows: dict) -> None:
    """Each answer's item-level label is what its spans say: hallucinated iff marked, of the kind covering most
    characters (ties: intrinsic, then extrinsic, then other)."""
    judged = AnswerJudgement.objects.filter(task__study=study, task__status=RankingTask.Status.SUBMITTED)
    seen = 0
    for task_id, answer_id, hallucination, kind in judged.values_list(
        "task_id", "answer_id", "hallucination", "hallucination_kind"
    ):
        spans = rows["marks"].get((task_id, answer_id), [])
        covered = {k: sum(end - start for start, end, kk, _ in spans if kk == k) for k in KINDS}
        expected_kind = ""
        if spans:
            most = max(covered.values())
            expected_kind = next(k for k in KINDS if covered[k] == most)
        assert (hallucination, kind or "") == (bool(spans), expected_kind), (task_id, answer_id, spans)
        seen += 1
    assert seen == sum(len(order) for _, _, order in rows["tasks"])


def _check_agreement_mix(rows: dict) -> None:
    """Both rankers read some answers; on some they marked the same, on others not; the wrong demo model is marked
    more often than the exact one."""
    both = [a for a, readers in rows["readers"].items() if len(readers) >= 2]
    same = [a for a in both if len({tuple(rows["marks"].get((t, a), [])[:1]) for t in rows["readers"][a]}) == 1]
    marked_same = [a for a in same if rows["marks"].get((rows["readers"][a][0], a))]
    differing = [a for a in both if a not in same]
    assert marked_same and differing
    rate = {}
    for system in ("Demo model A", "Demo model B"):
        pairs = [(t, a) for a, readers in rows["readers"].items() if rows["systems"][a] == system for t in readers]
        rate[system] = sum(1 for pair in pairs if pair in rows["marks"]) / len(pairs)
    assert rate["Demo model B"] > rate["Demo model A"], rate


def _check_detectors(study: Study, rows: dict) -> None:
    """The two demo detectors, one prediction per read answer each: the eager one flags the answer's longest word,
    the careful one the first ranker's stretch (sure) or a single word (unsure), never anything else."""
    detectors = {d.name: d for d in SpanDetector.objects.filter(study=study).select_related("imported_by")}
    assert sorted(detectors) == [CAREFUL, EAGER]
    assert {d.name: d.file for d in detectors.values()} == {
        CAREFUL: "careful-detector.jsonl",
        EAGER: "eager-detector.jsonl",
    }
    assert {d.imported_by.email for d in detectors.values()} == {"organizer@demo.portal"}
    first_ranker = min(rows["ranker"].values())
    base = {
        a: (spans[0][0], spans[0][1])
        for (t, a), spans in rows["marks"].items()
        if rows["ranker"][t] == first_ranker and spans
    }
    found = 0
    for name, detector in detectors.items():
        predictions = {p.answer_id: p for p in SpanPrediction.objects.filter(detector=detector)}
        assert set(predictions) == set(rows["readers"]), name  # every read answer, nothing else
        for answer_id, prediction in predictions.items():
            text = rows["texts"][answer_id]
            soft = prediction.soft_labels
            assert prediction.hard_labels == [[s["start"], s["end"]] for s in soft if s["prob"] > 0.5]
            if name == EAGER:
                words = [(m.start(), m.end()) for m in WORD.finditer(text)]
                longest = max(words, key=lambda w: w[1] - w[0])
                assert [(s["start"], s["end"]) for s in soft] == [longest], (text, soft)
                assert 0.4 <= soft[0]["prob"] <= 0.9
                continue
            assert len(soft) <= 1, soft
            for s in soft:
                stretch = (s["start"], s["end"])
                if s["prob"] == 0.35:
                    assert WORD.fullmatch(text[s["start"] : s["end"]]), (stretch, text)
                    assert _is_word_char(text, s["start"]) and not _is_word_char(text, s["start"] - 1)
                    assert not _is_word_char(text, s["end"])
                else:
                    assert 0.6 <= s["prob"] <= 0.95 and stretch == base.get(answer_id), (stretch, base.get(answer_id))
                    found += 1
    assert found > len(base) / 2  # the careful detector finds most of the first ranker's stretches


def _iou(reference: set[int], predicted: set[int]) -> float:
    return 1.0 if not reference and not predicted else len(reference & predicted) / len(reference | predicted)


def _check_leaderboard(study: Study, rows: dict) -> None:
    board = detector_leaderboard(study, n_resamples=50)
    assert board["n_answers"] == len(rows["readers"])
    by_name = {row["name"]: row for row in board["detectors"]}
    assert sorted(by_name) == [CAREFUL, EAGER]
    for name, row in by_name.items():
        scores = []
        for prediction in SpanPrediction.objects.filter(detector__study=study, detector__name=name):
            predicted = {i for start, end in prediction.hard_labels for i in range(start, end)}
            scores.append(_iou(_hard_characters(rows, prediction.answer_id), predicted))
        assert (row["n"], row["missing"]) == (len(rows["readers"]), 0)
        assert row["iou"].value == pytest.approx(sum(scores) / len(scores)), name


def _analysis(rows: dict, answers: list[int]) -> dict:
    """The report's figures for ``answers``, from the rows."""
    hard = {a: _hard_characters(rows, a) for a in answers}
    with_text = [a for a in answers if rows["texts"][a]]
    characters = dict.fromkeys(KINDS, 0)
    for a in answers:
        for t in rows["readers"][a]:
            for start, end, kind, _ in rows["marks"].get((t, a), []):
                characters[kind] += end - start
    total = sum(characters.values())
    return {
        "n_answers": len(answers),
        "rate": sum(1 for a in answers if hard[a]) / len(answers),
        "share": sum(len(hard[a]) / len(rows["texts"][a]) for a in with_text) / len(with_text),
        "characters": total,
        "shares": {k: v / total for k, v in characters.items()} if total else {},
    }


def _check_report(rows: dict) -> None:
    spans = Report.objects.get(kind="study").result["spans"]
    read = list(rows["readers"])
    assert spans["n_answers"] == len(read) > 0
    assert spans["n_physicians"] == 2
    groups = {"overall": read}
    for system in sorted({rows["systems"][a] for a in read}):
        groups[system] = [a for a in read if rows["systems"][a] == system]
    for group, answers in groups.items():
        shown = spans["analysis"]["overall"] if group == "overall" else spans["analysis"]["by_system"][group]
        expected = _analysis(rows, answers)
        assert shown["n_answers"] == expected["n_answers"], group
        assert shown["hallucination_rate"]["value"] == pytest.approx(expected["rate"]), group
        assert shown["span_share"]["value"] == pytest.approx(expected["share"]), group
        assert shown["kind_mix"]["characters"] == expected["characters"], group
        assert shown["kind_mix"]["shares"] == pytest.approx(expected["shares"]), group
    assert sorted(spans["analysis"]["by_system"]) == sorted(groups.keys() - {"overall"})


def _snapshot(study: Study) -> dict:
    return {
        "spans": sorted(
            HallucinationSpan.objects.filter(task__study=study).values_list(
                "task_id", "answer_id", "start", "end", "kind"
            )
        ),
        "labels": sorted(
            AnswerJudgement.objects.filter(task__study=study).values_list(
                "task_id", "answer_id", "hallucination", "hallucination_kind"
            )
        ),
        "detectors": sorted(SpanDetector.objects.filter(study=study).values_list("pk", "name")),
        "predictions": sorted(
            SpanPrediction.objects.filter(detector__study=study).values_list("detector_id", "answer_id")
        ),
        "guidelines": Study.objects.get(pk=study.pk).guidelines,
        "reports": Report.objects.filter(kind="study").count(),
    }


def test_demo_has_spans_detectors_and_pages(client, capsys, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    out = capsys.readouterr().out
    study = Study.objects.get(name="Demo study")
    assert study.ask_spans
    rows = _rows(study)
    n_spans = sum(len(spans) for spans in rows["marks"].values())
    assert f"Hallucination spans: {n_spans} marked in “Demo study”; 2 demo detectors imported." in out
    _check_spans(rows)
    _check_item_labels(study, rows)
    _check_agreement_mix(rows)
    _check_detectors(study, rows)
    _check_leaderboard(study, rows)
    _check_report(rows)
    # the portal's own reading of the spans agrees with the rows: both rankers' marks on answers both read
    labels = [a for a in study_span_labels(study) if a.n_annotators >= 2]
    assert {a.answer_id for a in labels} == {a for a, readers in rows["readers"].items() if len(readers) >= 2}

    organizer = study.created_by
    client.force_login(organizer)
    html = client.get(reverse("span_detectors", args=[study.pk])).content.decode()
    assert CAREFUL in html and EAGER in html and "data-computed" in html and "data-stale" not in html
    question = study.questions.order_by("position").first()
    html = client.get(reverse("span_item", args=[study.pk, question.pk])).content.decode()
    assert "Physician 1" not in html and "annotator-" not in html  # the physicians by name, not by number

    before = _snapshot(study)
    assert before["guidelines"].count("select the hallucinated words") == 1
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    assert "Hallucination spans:" not in capsys.readouterr().out  # once only
    assert _snapshot(study) == before  # nothing marked, imported or appended twice
