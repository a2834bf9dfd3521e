"""A physician checks answers against an item's facts by keyboard only (1 / 2 / 3, Backspace, S, W), on a desktop
and on a 390 px phone, in real Chromium; the draft keeps the labels across a reload."""

from __future__ import annotations

import os

import pytest

from ranking.models import NuggetJudgement, RankingTask, SentenceFlag

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def nugget_study(make_nugget_study):
    return make_nugget_study(name="Nugget browser study", ask_ranking=False)


SHOTS = os.environ.get("RANKING_SHOTS")  # a folder: screenshots for a person to look at


def _progress(page) -> str:
    return page.inner_text("#nugget-progress")


@pytest.mark.parametrize("viewport", [{"width": 1300, "height": 900}, {"width": 390, "height": 844}])
def test_assessment_by_keyboard_only_and_submit(page, login, make_user, nugget_study, viewport):
    page.set_viewport_size(viewport)
    ranker = make_user("ranker")
    login(ranker)
    page.goto(f"/rank/studies/{nugget_study.pk}/next/")
    page.locator("form button:has-text('Start')").focus()  # it has the focus (autofocus) once the page is ready
    page.keyboard.press("Enter")
    page.wait_for_selector("#ranking-form[data-draft-ready] #nugget-assessment[data-ready]")
    task = RankingTask.objects.get(ranker=ranker)
    assert page.locator("#ranked").count() == 0  # no ranking widget in a nuggets-only study
    assert "SYSNAME" not in page.content()
    assert _progress(page).startswith("Answer A · nugget 1 of 3")
    assert "Must NOT say:" in page.inner_text("#nugget-A-3")
    if viewport["width"] == 390:
        for selector in ("#nugget-A-1 .label-choice", "#nuggets-A .sentence .mark"):
            for box in [element.bounding_box() for element in page.locator(selector).all()]:
                assert box["height"] >= 44 and box["x"] + box["width"] <= 390, (selector, box)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.keyboard.press("1")  # A, fact 1: supported
    assert _progress(page).startswith("Answer A · nugget 2 of 3")
    page.keyboard.press("Backspace")  # back to fact 1, relabelled
    assert page.locator("#nugget-A-1.current").count() == 1
    page.keyboard.press("2")
    page.keyboard.press("1")
    page.keyboard.press("3")  # A done: B comes up by itself
    assert _progress(page).startswith("Answer B · nugget 1 of 3")
    page.keyboard.press("s")  # B's sentences: the second one is wrong
    page.keyboard.press("ArrowDown")
    page.keyboard.press("w")
    assert page.locator("#nuggets-B .sentence[data-index='1'].marked-wrong").count() == 1
    page.keyboard.press("Escape")
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/nuggets-{viewport['width']}.png", full_page=True)
    page.keyboard.press("1")
    page.keyboard.press("1")
    # sending now is refused on the page, naming what is missing, and nothing is sent
    page.click("#submit-ranking")
    assert "answer B: no label yet for nugget 3 (of 3)" in page.inner_text("#form-problems")
    page.locator("#nugget-B-3").focus()
    page.keyboard.press("3")
    page.wait_for_selector("#draft-state:text-is('Draft saved.')")
    page.reload()  # the draft comes back: labels, the mark, and the place to go on
    page.wait_for_selector("#ranking-form[data-draft-ready] #nugget-assessment[data-ready]")
    assert page.locator("#nuggets-B .sentence[data-index='1'].marked-wrong").count() == 1
    assert page.locator("input[name=nug_A_1][value=partial]").is_checked()
    assert "every fact labelled" in _progress(page)
    page.locator("#submit-ranking").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: str(task.pk) not in url)
    task.refresh_from_db()
    assert task.status == RankingTask.Status.SUBMITTED
    labels = {
        (slot, j.nugget.key): j.label
        for j in NuggetJudgement.objects.filter(task=task).select_related("nugget")
        for slot in "AB"
        if j.answer_id == task.order["AB".index(slot)]
    }
    assert labels == {
        ("A", "n1"): "partial",
        ("A", "n2"): "support",
        ("A", "n3"): "not_support",
        ("B", "n1"): "support",
        ("B", "n2"): "support",
        ("B", "n3"): "not_support",
    }
    flag = SentenceFlag.objects.get(task=task)
    assert (flag.answer_id, flag.index, flag.kind) == (task.order[1], 1, "wrong")


def test_ranking_and_nuggets_together_by_keyboard(page, login, make_user, nugget_study):
    """Both on one page: the ranking's keys outside the facts, N into them, 1 / 2 / 3 there, Esc back out."""
    nugget_study.ask_ranking = True
    nugget_study.save(update_fields=["ask_ranking"])
    ranker = make_user("ranker")
    login(ranker)
    page.goto(f"/rank/studies/{nugget_study.pk}/next/")
    page.locator("form button:has-text('Start')").focus()
    page.keyboard.press("Enter")
    # Two steps: the facts wait, hidden, behind the ranking.
    page.wait_for_selector("#ranking-form[data-draft-ready] #nugget-assessment[data-ready]", state="attached")
    assert page.is_hidden("#nugget-assessment") and page.inner_text(".step-now") == "Step 1 of 2 · Ranking"
    task = RankingTask.objects.get(ranker=ranker)
    page.locator("body").focus()
    for key in ("b", "1", "Shift+Digit1", "a", "Shift+Digit3"):  # B first, tagged good; A tagged bad
        page.keyboard.press(key)
    order = page.eval_on_selector_all("#ranked .answer-card", "cards => cards.map(c => c.dataset.slot)")
    assert order == ["B", "A"]
    page.keyboard.press("n")  # into the facts: the digits label them now, they do not move answers
    assert page.evaluate("document.activeElement.id") == "nugget-A-1"
    for key in "123" + "111":
        page.keyboard.press(key)
    assert page.evaluate("document.activeElement.id") == "submit-ranking"  # every fact labelled
    assert order == page.eval_on_selector_all("#ranked .answer-card", "cards => cards.map(c => c.dataset.slot)")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: str(task.pk) not in url)
    task.refresh_from_db()
    assert task.status == RankingTask.Status.SUBMITTED
    assert {j.slot: (j.rank, j.tag) for j in task.judgements.all()} == {"B": (1, "good"), "A": (2, "bad")}
    assert NuggetJudgement.objects.filter(task=task).count() == 6
