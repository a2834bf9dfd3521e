"""The demo's activity: what a team would have done after a few days, so every page a newcomer opens has content.

Everything goes through the services that users' own actions call (the review queue, review and dispute
submission, adjudication, release freezing, ranking, scoring and report jobs), so the data obeys every rule
they enforce: blinding, second reviews by someone else, no adjudicator deciding an item they reviewed, frozen
releases. Choices are drawn from a fixed seed, so two fresh databases get the same demo.

Each step runs once: it is skipped when what it makes is already there (running ``load_demo`` again changes
nothing). Vetting is left half done on purpose: items wait for first and second reviews, one disagreement waits
for the adjudicator and one dispute is open, so each role has something to do when they sign in.
"""

from __future__ import annotations

import json
import random
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from analytics.models import Report, ScoringRun
from analytics.services.requests import report_request, scoring_request
from annotation.models import Dispute, GoldItem, QAItem, Release, Review
from annotation.services.adjudication import item_adjudicate
from annotation.services.disputes import dispute_file
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.releases import release_freeze
from annotation.services.review import review_submit
from annotation.services.vetting_config import vetting_config_update
from annotation.workflow import CannotTellReason, ItemStatus, Stage, Verdict
from demo.judges import demo_judge_scores
from demo.nugget_study import demo_nugget_study
from demo.nuggets import demo_nuggets
from demo.promptcblue import demo_promptcblue
from demo.spans import demo_spans
from portal.errors import DomainError
from ranking.models import RankingTask, Study, StudyAnswer, System
from ranking.services.outputs import outputs_import
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import task_slots, task_submit

SEED = "demo-2025"
RELEASE_NAME = "ClinIQLink demo"
STUDY_NAME = "Demo study"
SYSTEMS = {"Demo model A": "open_step_d1_exact", "Demo model B": "open_c_wrong"}
#: The demo systems' model families: the careful demo judge is of Demo model A's, so its card tests self-preference.
FAMILIES = {"Demo model A": "Demo A", "Demo model B": "Demo B"}
REVIEW_TURNS = 35  # "next item" requests by the three demo reviewers, in turn: about half the items get vetted
GOLD_TURNS = {4, 11, 19, 25}  # requests answered with a gold item (checks of the reviewers' accuracy)
DISPUTE_TURNS = {7: "ambiguous", 16: "not_in_source"}  # leases where the reviewer files a dispute
QUESTIONS_RANKED = {"ranker1@demo.portal": 10, "ranker2@demo.portal": 8}


def demo_activity(*, users: dict, out=None) -> list[str]:
    """Run every step that has not run yet; returns what was done, one line per step."""
    done: list[str] = []
    steps = (
        _vetting,
        _release,
        _nuggets,
        _study,
        _rankings,
        _nugget_study,
        _nugget_judges,
        _scoring,
        demo_promptcblue,
        _study_judges,
        _spans,
        _reports,
    )
    for step in steps:
        line = step(users)
        if line:
            done.append(line)
            if out is not None:
                out(line)
    return done


# -- vetting ----------------------------------------------------------------------------------------------------


def _vetting(users: dict) -> str:

    reviewers = [users[f"reviewer{n}@demo.portal"] for n in (1, 2, 3)]
    if Review.objects.exists() or Dispute.objects.exists():
        return ""  # someone has vetted already (the demo's earlier run, or a person): leave their work alone
    organizer = users["organizer@demo.portal"]
    with transaction.atomic():
        # A fixed seed makes the second-review draw (a hash of seed and item) the same on every machine.
        vetting_config_update(by=organizer, seed=SEED, second_share=0.5, relevance_gap=2)
        _gold_mark(organizer)
        counts = _reviews(reviewers)
        adjudicated = _adjudicate(users["adjudicator@demo.portal"])
    return (
        f"Vetting: {counts['reviews']} reviews ({counts['second']} second reviews), {counts['gold']} gold checks, "
        f"{counts['disputes']} disputes, {adjudicated} adjudications."
    )


def _gold_mark(organizer) -> None:
    """Two items of the public sample become gold items: one is correct, one carries a known error."""

    candidates = list(QAItem.objects.filter(qa_type="true_false").order_by("pk")[:2])
    for item, (verdict, planted) in zip(
        candidates, [(Verdict.CORRECT, False), (Verdict.INCORRECT, True)], strict=False
    ):
        if not GoldItem.objects.filter(item=item).exists():
            note = "The answer contradicts its source on purpose." if planted else ""
            gold_mark(item=item, expected_verdict=verdict, by=organizer, planted_error=planted, note=note)


def _reviews(reviewers: list) -> dict:

    rng = random.Random(SEED)
    counts = {"reviews": 0, "second": 0, "gold": 0, "disputes": 0}
    qa_types = ["short_answer", "multi_hop", "short_inverse", "multiple_choice", "list", "true_false"]
    for turn in range(REVIEW_TURNS):
        reviewer = reviewers[turn % len(reviewers)]
        # Reviewers mostly filter the queue by question type in turn, so every type has vetted items (the queue
        # hands items out in import order); in the middle they take what comes, second reviews first. The last
        # turns leave second reviews waiting.
        filtered = turn < REVIEW_TURNS // 2 or turn >= REVIEW_TURNS - 6
        qa_type = qa_types[turn % len(qa_types)] if filtered else ""
        assignment = assignment_next(reviewer=reviewer, qa_type=qa_type, gold_draw=0.0 if turn in GOLD_TURNS else 1.0)
        if assignment is None:
            assignment = assignment_next(reviewer=reviewer, gold_draw=1.0)
        if assignment is None:
            continue
        if turn in DISPUTE_TURNS and assignment.stage == Stage.PRIMARY:
            dispute_file(
                raised_by=reviewer,
                category=DISPUTE_TURNS[turn],
                text=_DISPUTE_TEXT[DISPUTE_TURNS[turn]],
                assignment_id=assignment.pk,
                idempotency_key=assignment.idempotency_key,
            )
            counts["disputes"] += 1
            continue
        verdict, relevance, comment = _judgement(rng, assignment)
        # the demo's "cannot tell" is always the excerpt's fault (its passages were written for the demo)
        reason = CannotTellReason.EXCERPT if verdict == Verdict.CANNOT_TELL else ""
        seconds = rng.randint(45, 240)
        review_submit(
            assignment_id=assignment.pk,
            reviewer=reviewer,
            idempotency_key=assignment.idempotency_key,
            verdict=verdict,
            relevance=relevance,
            comment=comment,
            cannot_tell_reason=reason,
            active_seconds=seconds * 0.8,
            now=timezone.now() + timedelta(seconds=seconds),  # the time the reviewer spent reading
        )
        if assignment.stage == Stage.GOLD:
            counts["gold"] += 1
        else:
            counts["reviews"] += 1
            counts["second"] += assignment.stage == Stage.SECONDARY
    return counts


_DISPUTE_TEXT = {
    "ambiguous": "The question can be read two ways: it does not say whether adults or children are meant.",
    "not_in_source": "The source excerpt never mentions the expected answer.",
}


def _judgement(rng: random.Random, assignment) -> tuple[str, int, str]:
    """A plausible review: mostly correct and highly relevant; some incorrect, some unclear; a second reviewer
    sometimes disagrees (which sends the item to adjudication)."""
    if assignment.stage == Stage.GOLD:
        expected = assignment.item.gold.expected_verdict
        missed = rng.random() < 0.25  # gold checks exist because people miss planted errors
        verdict = Verdict.CORRECT if missed else expected
        return verdict, 4, ""
    if assignment.stage == Stage.SECONDARY:
        first = Review.objects.get(item=assignment.item, stage=Stage.PRIMARY)
        draw = rng.random()
        if draw < 0.3:
            other = Verdict.INCORRECT if first.verdict == Verdict.CORRECT else Verdict.CORRECT
            return other, max(1, first.relevance - 1), "I read the source differently; see the second paragraph."
        return first.verdict, first.relevance, ""
    draw = rng.random()
    if draw < 0.7:
        return Verdict.CORRECT, 5 if rng.random() < 0.75 else 4, ""
    if draw < 0.9:
        return Verdict.INCORRECT, rng.choice([3, 4]), "The expected answer leaves out part of what the source says."
    return Verdict.CANNOT_TELL, 3, "The excerpt stops before it answers the question."


def _adjudicate(adjudicator) -> int:
    """The adjudicator decides every waiting disagreement but the last one and the first dispute; the rest stays
    for the demo's adjudicator to try. The adjudicator reviewed nothing, so no conflict of interest arises."""

    waiting = list(QAItem.objects.filter(status=ItemStatus.IN_ADJUDICATION).order_by("pk"))
    held = list(QAItem.objects.filter(status=ItemStatus.HELD).order_by("pk"))
    decided = waiting[:-1] + held[:1]
    for item in decided:
        disputed = item.status == ItemStatus.HELD
        item_adjudicate(
            item=item,
            adjudicator=adjudicator,
            verdict=Verdict.INCORRECT if disputed else Verdict.CORRECT,
            relevance=4 if disputed else 5,
            reason=(
                "The dispute is right: the source does not support the expected answer."
                if disputed
                else "The source supports the expected answer; the second review misread the excerpt."
            ),
            dispute_outcome=Dispute.Status.UPHELD,
        )
    return len(decided)


# -- release, study, rankings --------------------------------------------------------------------------------------


def _release(users: dict) -> str:

    if Release.objects.filter(name=RELEASE_NAME).exists():
        return ""
    try:
        release = release_freeze(
            name=RELEASE_NAME,
            note="Demo: the items verified so far (the benchmark's rule: correct, relevance 5, no open issue).",
            user=users["organizer@demo.portal"],
        )
    except DomainError as refusal:  # people vetted this database themselves and nothing qualifies yet
        return f"No demo release: {refusal}"
    return f"Release {release.label} frozen with {release.item_count} items."


def _nuggets(users: dict) -> str:
    """Nuggets for a dozen items of the study's types, most validated (demo.nuggets)."""
    return demo_nuggets(users)


def _study(users: dict) -> str:
    """Two demo systems (answers from the metric reference fixtures, over the public sample) and an open study."""

    from_fixtures = _fixtures() / "metric-reference"
    for name, folder in SYSTEMS.items():
        outputs_import(system_name=name, paths=[from_fixtures / folder], family=FAMILIES[name])
    if Study.objects.filter(name=STUDY_NAME).exists():
        return ""
    result = study_create(
        name=STUDY_NAME,
        systems=list(SYSTEMS),
        qa_types=["short_answer", "short_inverse", "multi_hop"],
        overlap=2,
        seed=1,
        guidelines="Rank the answers from most to least useful to a general practitioner; tag each one.",
        user=users["organizer@demo.portal"],
    )
    return f"Study “{STUDY_NAME}” created with {result.study.questions.count()} questions."


def _rankings(users: dict) -> str:

    study = Study.objects.filter(name=STUDY_NAME).first()
    if study is None or not study.is_open or RankingTask.objects.filter(study=study).exists():
        return ""
    rng = random.Random(SEED)
    # The exact answers are best, the reference close behind, the wrong answers last; the second ranker sometimes
    # swaps the first two, so the agreement statistics have something to measure.
    preference = {"Demo model A": 0, "": 1, "Demo model B": 2}
    submitted = 0
    with transaction.atomic():
        for email, n_questions in QUESTIONS_RANKED.items():
            ranker = users[email]
            for _ in range(n_questions):
                task = task_next(study=study, ranker=ranker)
                if task is None:
                    break
                answers = StudyAnswer.objects.select_related("system").in_bulk(task.order)
                order = [answers[pk] for pk in task.order]
                scores = [preference.get("" if a.system.is_reference else a.system.name, 1) for a in order]
                if email.startswith("ranker2") and rng.random() < 0.4:
                    scores = [{0: 1, 1: 0}.get(s, s) for s in scores]
                ranked = sorted(range(len(order)), key=lambda i: scores[i])
                tags = ["good", "okay", "bad"]
                entries = {}
                for rank, index in enumerate(ranked, start=1):
                    entries[task_slots(task)[index]] = {"rank": rank, "tag": tags[min(scores[index], 2)]}
                task_submit(
                    task_id=task.pk,
                    ranker=ranker,
                    answers=entries,
                    time_spent_ms=rng.randint(40, 150) * 1000,
                    idempotency_key=f"demo-{task.pk}",
                )
                submitted += 1
    return f"Rankings: {submitted} submitted by the two demo rankers."


def _nugget_study(users: dict) -> str:
    """A study that also checks answers against the items' nuggets, assessed by both rankers (demo_nugget_study)."""
    return demo_nugget_study(users, list(SYSTEMS))


# -- automatic nugget labels --------------------------------------------------------------------------------------

JUDGE_FILE = "nuggets/demo-judge-labels.jsonl"


def _nugget_judges(users: dict) -> str:
    """The matcher run on the demo's nugget study, and a deliberately lenient judge's labels imported (made once
    from the demo nuggets: the exact answers and the reference mostly supported, the wrong answers partly), so
    the nugget leaderboard and its agreement table have automatic labellers to show. Skipped without a nugget
    study, and once the matcher has labelled it."""
    from analytics.models import JudgeNuggetLabel
    from analytics.nuggets.judge_labels import judge_labels_import
    from analytics.nuggets.matching import matcher_thresholds, nugget_matcher_request, nugget_matcher_run
    from analytics.nuggets.selectors import nugget_questions, study_answers

    study = next((s for s in Study.objects.filter(ask_nuggets=True) if nugget_questions(s).exists()), None)
    if study is None or JudgeNuggetLabel.objects.filter(answer__question__study=study).exists():
        return ""
    organizer = users["organizer@demo.portal"]
    if settings.CELERY_TASK_ALWAYS_EAGER:
        result = nugget_matcher_run(study=study, **matcher_thresholds())  # make run: here and now
        matched = f"the matcher labelled {result['answers']} answers"
    else:
        nugget_matcher_request(study=study, user=organizer)
        matched = "the matcher job is queued"
    # Only the lines for this study's answers and nugget versions (the file covers every demo item): the import
    # itself refuses a file with anything else, as it should for a lab's file.
    known = {
        (a.question.item.uid, a.system.name, n.key)
        for a in study_answers(study)
        for n in a.question.nugget_set.nuggets.all()
    }
    lines = [
        line
        for line in (_fixtures() / JUDGE_FILE).read_text(encoding="utf-8").splitlines()
        if line.strip() and tuple(json.loads(line)[k] for k in ("item_uid", "system", "nugget_id")) in known
    ]
    imported = judge_labels_import(study=study, source=lines, name=JUDGE_FILE, user=organizer) if lines else None
    judged = f"{imported.total} labels of a lenient judge imported" if imported else "no judge labels matched"
    return f"Nugget study “{study.name}”: {matched}; {judged}."


# -- automatic judges' scores -------------------------------------------------------------------------------------


def _study_judges(users: dict) -> str:
    """Two demo judges' scores imported into the demo study (demo.judges)."""
    return demo_judge_scores(users, STUDY_NAME)


# -- scoring and reports ------------------------------------------------------------------------------------------


def _scoring(users: dict) -> str:

    release = Release.objects.filter(name=RELEASE_NAME).order_by("-version").first()
    lines = []
    for name in SYSTEMS:
        system = System.objects.filter(name=name).first()
        if system is None or ScoringRun.objects.filter(system=system).exists():
            continue
        # Without a broker (make run) the job runs here and now; with one, a worker scores it shortly.
        run = scoring_request(system=system, release=release, user=users["organizer@demo.portal"])
        # and over every answered item, so the study report's metrics cover every ranked question (the study also
        # asks questions vetting has not accepted into the release yet) and take part in the judges' clusters
        every = scoring_request(system=system, release=None, user=users["organizer@demo.portal"])
        lines.append(
            f"{name} ({ScoringRun.objects.get(pk=run.pk).n_items} answers in the release, "
            f"{ScoringRun.objects.get(pk=every.pk).n_items} in all)"
        )
    return f"Scored: {', '.join(lines)}." if lines else ""


def _spans(users: dict) -> str:
    """Span marks from both rankers on the demo study and two demo detectors' predictions (demo_spans)."""
    return demo_spans(users, STUDY_NAME)


def _reports(users: dict) -> str:

    study = Study.objects.filter(name=STUDY_NAME).first()
    wanted = [("vetting_agreement", {}), ("reviewer_quality", {})]
    if study is not None:
        wanted.append(("study", {"study_id": study.pk}))
    made = []
    for kind, params in wanted:
        if Report.objects.filter(kind=kind).exists():
            continue
        report_request(kind=kind, params=params, user=users["organizer@demo.portal"])
        made.append(kind.replace("_", " "))
    return f"Reports computed: {', '.join(made)}." if made else ""


def _fixtures():

    return Path(settings.BASE_DIR) / "fixtures"
