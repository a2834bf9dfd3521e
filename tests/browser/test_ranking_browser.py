"""A physician ranks one question by drag and drop and another by keyboard only, in real Chromium."""

from __future__ import annotations

import pytest

from ranking.models import AnswerJudgement, RankingTask

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def study(make_study):
    return make_study(guidelines="Rank by clinical usefulness.")


def _ranks(task: RankingTask) -> dict[str, tuple[int, str]]:
    return {j.slot: (j.rank, j.tag) for j in AnswerJudgement.objects.filter(task=task)}


def _ranked_order(page) -> list[str]:
    return page.eval_on_selector_all("#ranked .answer-card", "cards => cards.map(c => c.dataset.slot)")


def test_rank_one_question_by_drag_and_drop_and_one_by_keyboard(page, login, make_user, study):
    ranker = make_user("ranker")
    login(ranker)
    page.goto("/rank/")  # the ranker's studies; Start is a POST (only a POST takes a lease)
    page.click("button:has-text('Start')")
    page.wait_for_selector("#ranking-form")
    assert "Rank by clinical usefulness." in page.inner_text(".guidelines")
    assert "SYSNAME" not in page.content()

    # --- question 1: drag and drop, C best, then A, then B ---
    ranked = page.locator("#ranked")
    page.locator("#answer-C .answer-head").drag_to(ranked)
    page.locator("#answer-A .answer-head").drag_to(
        ranked, target_position={"x": 20, "y": ranked.bounding_box()["height"] - 4}
    )
    page.locator("#answer-B .answer-head").drag_to(
        ranked, target_position={"x": 20, "y": ranked.bounding_box()["height"] - 4}
    )
    assert _ranked_order(page) == ["C", "A", "B"]
    # then drag B above A: drop on the top half of A's card
    page.locator("#answer-B .answer-head").drag_to(page.locator("#answer-A"), target_position={"x": 30, "y": 5})
    assert _ranked_order(page) == ["C", "B", "A"]
    # incomplete: the page says what is missing and sends nothing
    page.click("#submit-ranking")
    assert "no tag for answer A, B, C" in page.inner_text("#form-problems")
    first = RankingTask.objects.get(ranker=ranker)
    assert first.status == "leased"
    for slot, tag in (("A", "bad"), ("B", "okay"), ("C", "good")):
        page.check(f"input[name=tag_{slot}][value={tag}]")
    page.click("#submit-ranking")
    page.wait_for_url(lambda url: str(first.pk) not in url)
    first.refresh_from_db()
    assert first.status == "submitted" and first.time_spent_ms is not None
    assert _ranks(first) == {"C": (1, "good"), "B": (2, "okay"), "A": (3, "bad")}

    # --- question 2: keyboard only ---
    page.wait_for_selector("#ranking-form")
    second = RankingTask.objects.exclude(pk=first.pk).get(ranker=ranker)
    page.locator("body").focus()
    page.keyboard.press("b")
    page.keyboard.press("1")  # B → rank 1
    page.keyboard.press("c")
    page.keyboard.press("2")  # C → rank 2
    page.keyboard.press("a")
    page.keyboard.press("3")  # A → rank 3
    assert _ranked_order(page) == ["B", "C", "A"]
    page.keyboard.press("a")
    page.keyboard.press("ArrowUp")  # A moves above C
    assert _ranked_order(page) == ["B", "A", "C"]
    # the draft survives a reload
    page.reload()
    page.wait_for_selector("#ranking-form")
    assert _ranked_order(page) == ["B", "A", "C"]
    for slot, presses in (("A", ["Space"]), ("B", ["Space"]), ("C", ["Space", "ArrowRight", "ArrowRight"])):
        page.keyboard.press(slot.lower())  # focus the answer card
        page.keyboard.press("Tab")  # "show the whole answer"
        page.keyboard.press("Tab")  # the first tag
        for key in presses:
            page.keyboard.press(key)
    page.keyboard.press("Tab")
    page.keyboard.type("Keyboard only.")
    for _ in range(30):
        if page.evaluate("document.activeElement.id") == "submit-ranking":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: str(second.pk) not in url)
    second.refresh_from_db()
    assert second.status == "submitted"
    assert _ranks(second) == {"B": (1, "good"), "A": (2, "good"), "C": (3, "bad")}
    assert second.comment == "Keyboard only."
