"""A physician ranks one question by drag and drop and another by keyboard only (Ctrl+Enter submits), in real
Chromium."""

from __future__ import annotations

import pytest

from ranking.models import AnswerJudgement, RankingTask

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def study(make_study):
    return make_study(guidelines="Rank by clinical usefulness.")


def _ranks(task: RankingTask) -> dict[str, tuple[int, str]]:
    return {j.slot: (j.rank, j.tag) for j in AnswerJudgement.objects.filter(task=task)}


def _drag(page, slot: str, onto: str) -> None:
    """Drag answer ``slot`` by its handle with the mouse onto the upper half of answer ``onto``."""
    handle = page.locator(f"#answer-{slot} .handle").bounding_box()
    target = page.locator(f"#answer-{onto}").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    for step in range(1, 11):
        page.mouse.move(target["x"] + 40, target["y"] + 6 * step / 10 + 2)
    page.mouse.up()
    page.wait_for_timeout(200)


def _ranked_order(page) -> list[str]:
    return page.eval_on_selector_all("#ranked .answer-card", "cards => cards.map(c => c.dataset.slot)")


def test_rank_one_question_by_drag_and_drop_and_one_by_keyboard(page, login, make_user, study):
    ranker = make_user("ranker")
    login(ranker)
    page.goto("/rank/")  # the ranker's studies; Start is a POST (only a POST takes a lease)
    page.click("button:has-text('Start')")
    page.wait_for_selector("#ranking-form[data-draft-ready]")  # its script has run
    assert "Rank by clinical usefulness." in page.inner_text(".guidelines")
    assert "SYSNAME" not in page.content()

    # --- question 1: drag and drop (SortableJS) in the one list, re-ordered in place: C best, then B, then A ---
    assert _ranked_order(page) == ["A", "B", "C"]  # presented order, not a ranking yet
    assert page.inner_text("#answer-A .rank-badge") == "not ranked"
    _drag(page, "C", "A")
    assert _ranked_order(page) == ["C", "A", "B"]
    _drag(page, "B", "A")
    assert _ranked_order(page) == ["C", "B", "A"]
    assert page.inner_text("#answer-C .rank-badge") == "rank 1"
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
    page.wait_for_selector("#ranking-form[data-draft-ready]")  # its script has run
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
    page.wait_for_selector("#ranking-form[data-draft-ready]")
    assert _ranked_order(page) == ["B", "A", "C"]
    page.keyboard.press("Control+Enter")  # submits as on every other page, after the same checks: not yet
    assert "no tag for answer A, B, C" in page.inner_text("#form-problems")
    assert RankingTask.objects.get(pk=second.pk).status == "leased"
    for slot, tag_key in (("A", "Shift+Digit1"), ("B", "Shift+Digit1"), ("C", "Shift+Digit3")):
        page.keyboard.press(slot.lower())  # pick the answer
        page.keyboard.press(tag_key)  # Shift + the tag's number on the scale (good, okay, bad)
    page.focus("#id_comment")
    page.keyboard.type("Keyboard only.")
    page.keyboard.press("Control+Enter")  # from the comment box: no tabbing through every answer
    page.wait_for_url(lambda url: str(second.pk) not in url)
    second.refresh_from_db()
    assert second.status == "submitted"
    assert _ranks(second) == {"B": (1, "good"), "A": (2, "good"), "C": (3, "bad")}
    assert second.comment == "Keyboard only."


@pytest.mark.parametrize("width", [1300, 390])
def test_the_study_page_says_how_many_questions_each_ranker_is_excluded_from(page, login, make_user, study, width):
    """Whoever saw an item's answer before (here: vetted it) is never handed its question; the organizer staffing
    the study reads how many questions each ranker is excluded from, and the ranker how many, never which."""
    from django.utils import timezone

    from annotation.models import Assignment
    from tests.browser.layout import assert_page_fits

    vetted = study.questions.order_by("position").first().item
    physician = make_user("reviewer", "ranker", email="dr.vetted-the-first-item@test.portal")
    Assignment.objects.create(item=vetted, reviewer=physician, stage="primary", expires_at=timezone.now())
    make_user("ranker", email="dr.fresh@test.portal")
    page.set_viewport_size({"width": width, "height": 900})

    login(make_user("organizer"))
    page.goto(f"/organize/studies/{study.pk}/")
    rows = {
        row.locator("td").nth(0).inner_text(): [row.locator("td").nth(n).inner_text() for n in (1, 2)]
        for row in page.locator("#ranker-exclusions tbody tr").all()
    }
    assert rows == {"dr.fresh@test.portal": ["2 of 2", "0"], "dr.vetted-the-first-item@test.portal": ["1 of 2", "1"]}
    assert page.locator("#short-of-rankers").count() == 0  # overlap 1: the other physician can take it
    assert_page_fits(page, width, "study-ranker-exclusions")

    page.context.clear_cookies()
    login(physician)
    page.goto(f"/rank/studies/{study.pk}/next/")
    assert "1 of the 2 questions is not offered to you" in page.inner_text("#withheld")
    assert vetted.uid not in page.content()
    assert_page_fits(page, width, "ranking-start-withheld")
