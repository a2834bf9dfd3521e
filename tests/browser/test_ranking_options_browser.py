"""The optional ranking controls in real Chromium: ties, hallucination kind, patient harm, the unblinding check."""

from __future__ import annotations

import pytest

from ranking.models import AnswerJudgement, RankingTask, System

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ties_hallucination_harm_and_unblinding_reach_the_database(page, login, make_user, make_study):
    study = make_study(ties_allowed=True, ask_hallucination=True, ask_harm=True, unblinding_rate=1.0)
    ranker = make_user("ranker")
    login(ranker)
    page.goto(f"/rank/studies/{study.pk}/next/")  # the study's start page: guidelines and the button
    page.click("button:has-text('Start ranking')")
    page.wait_for_selector("#ranking-form[data-draft-ready]")  # its script has run
    assert "SYSNAME" not in page.content()

    page.locator("body").focus()
    for slot, rank in (("a", "1"), ("b", "2"), ("c", "3")):
        page.keyboard.press(slot)
        page.keyboard.press(rank)
    assert not page.is_visible("#answer-A .tie")  # the best answer has nobody above it to tie with
    page.check("input[name=tie_B]")  # B shares A's rank; C moves up to rank 2 (dense ranks)
    badges = page.eval_on_selector_all("#ranked .rank-badge", "els => els.map(e => e.textContent)")
    assert badges == ["rank 1", "rank 1", "rank 2"]
    for slot in "ABC":
        page.check(f"input[name=tag_{slot}][value=okay]")
    page.check("input[name=hall_C]")  # a hallucination, but which kind?
    page.click("#submit-ranking")
    problems = page.inner_text("#form-problems")
    assert "answer C: say which kind of hallucination" in problems
    assert "say which answer you think is the reference" in problems
    task = RankingTask.objects.get(ranker=ranker)
    assert task.status == "leased" and not AnswerJudgement.objects.exists()  # nothing was sent

    page.select_option("select[name=hallkind_C]", "extrinsic")
    page.check("input[name=harm_C]")
    page.check("input[name=unblinding_guess][value=A]")
    page.click("#submit-ranking")
    page.wait_for_url(lambda url: str(task.pk) not in url)

    task.refresh_from_db()
    assert task.status == "submitted" and task.ask_unblinding and task.unblinding_guess == "A"
    judgements = {j.slot: j for j in AnswerJudgement.objects.filter(task=task).select_related("answer__system")}
    assert {s: j.rank for s, j in judgements.items()} == {"A": 1, "B": 1, "C": 2}
    assert (judgements["C"].hallucination, judgements["C"].hallucination_kind, judgements["C"].harm) == (
        True,
        "extrinsic",
        True,
    )
    assert not judgements["A"].hallucination and not judgements["A"].harm
    reference_slot = next(s for s, j in judgements.items() if j.answer.system.name == System.REFERENCE_NAME)
    assert task.unblinding_correct == (reference_slot == "A")
