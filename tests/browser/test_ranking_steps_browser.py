"""A study that asks for a ranking, nugget labels and hallucinated words is done in three steps on one form, in real
Chromium at 1280 px (mouse and keyboard) and 390 px (touch): the step bar and its states, Next / Back, the question
kept in view, a refused submit opening the step of the first missing control, a reload keeping the step, and one
submit storing all three."""

from __future__ import annotations

import pytest

from ranking.models import HallucinationSpan, NuggetJudgement, RankingTask
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture
def three_step_study(make_nugget_study):
    return make_nugget_study(name="Three step study", ask_ranking=True, ask_spans=True)


@pytest.fixture
def phone_page(chromium_browser, live_server):
    """A touch phone page, failing like the page fixture on any Content-Security-Policy violation."""
    context = chromium_browser.new_context(base_url=live_server.url, viewport=PHONE, has_touch=True, is_mobile=True)
    context.set_default_timeout(10_000)
    pg = context.new_page()
    violations: list[str] = []
    pg.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    yield pg
    context.close()
    assert not violations, violations


def _login(page, user):
    page.goto("/accounts/login/")
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)


def _ready(page):
    page.wait_for_selector("#ranking-form[data-draft-ready][data-steps='3']", state="attached")
    page.wait_for_selector("#nugget-assessment[data-ready]", state="attached")
    page.wait_for_selector("#span-marking[data-ready]", state="attached")


def _start(page, study):
    page.goto(f"/rank/studies/{study.pk}/next/")
    page.click("form button:has-text('Start')")
    _ready(page)


def _bar(page) -> list[tuple[str, str]]:
    return [
        (tab.locator(".step-name").inner_text(), tab.locator(".step-state").inner_text())
        for tab in page.locator(".step-bar .step-tab").all()
    ]


def _shown(page) -> list[str]:
    """The sections a person can see, by step."""
    return [s for s in ("rank-step", "nugget-assessment", "span-marking") if page.is_visible(f"#{s}")]


def _active(page) -> str:
    return page.evaluate("document.activeElement.id || document.activeElement.name || ''")


def _question_in_view(page, height: int) -> None:
    """The question's first line is on screen and is what a tap there would hit (nothing covers it)."""
    box = page.locator(".rank-question .question").bounding_box()
    assert 0 <= box["y"] and box["y"] + 10 <= height, box
    hit = page.evaluate(
        "([x, y]) => !!document.elementFromPoint(x, y)?.closest('.rank-question')", [box["x"] + 5, box["y"] + 5]
    )
    assert hit


def test_three_steps_by_mouse_and_keyboard_at_desktop_width(page, make_user, three_step_study):
    page.set_viewport_size(DESKTOP)
    ranker = make_user("ranker")
    _login(page, ranker)
    _start(page, three_step_study)
    task = RankingTask.objects.get(ranker=ranker)

    assert page.inner_text(".step-now") == "Step 1 of 3 · Ranking"
    assert _bar(page) == [("1 Ranking", "to do"), ("2 Facts", "to do"), ("3 Words", "to do")]
    assert _shown(page) == ["rank-step"]
    assert page.inner_text("#rank-step .step-next") == "Next: facts"
    assert page.locator("#rank-step .step-back").count() == 0
    assert_page_fits(page, DESKTOP["width"], "steps-rank")

    # A refused submit with nothing done: the first missing thing is the order, the first answer gets the focus.
    page.click("#submit-ranking")
    assert "put the answers in order" in page.inner_text("#form-problems")
    assert page.inner_text(".step-now") == "Step 1 of 3 · Ranking"
    assert page.evaluate("document.activeElement.classList.contains('answer-card')")

    # The order shown is kept, answer A tagged; B is left without a tag, and on to the facts.
    page.click("#keep-order")
    page.check("input[name=tag_A][value=good]")
    page.click("#rank-step .step-next")
    assert page.inner_text(".step-now") == "Step 2 of 3 · Facts"
    assert _shown(page) == ["nugget-assessment"]
    assert _active(page) == "nugget-A-1"  # Next lands on the first fact still to label
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function("window.scrollY > 100")
    _question_in_view(page, DESKTOP["height"])

    # Ctrl+Enter from the facts: refused, the step of the first problem (B's tag) opens with the focus on it,
    # and the list of problems stays.
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".step-now:text-is('Step 1 of 3 · Ranking')")
    assert _active(page) == "tag_B"
    assert page.evaluate("document.activeElement.value") == "good"  # the first of B's tags
    problems = page.inner_text("#form-problems")
    assert "no tag for answer B" in problems and "answer A: no label yet for nugget 1, 2, 3 (of 3)" in problems
    page.check("input[name=tag_B][value=bad]")
    assert _bar(page)[0] == ("1 Ranking", "done")

    # The facts by keyboard; after the last one the focus goes to the words step, not to Submit.
    page.click("#rank-step .step-next")
    for key in "123" + "111":
        page.keyboard.press(key)
    assert page.inner_text(".step-now") == "Step 3 of 3 · Words"
    assert _active(page) == "span-text-A"
    assert _bar(page)[1] == ("2 Facts", "done")
    assert page.locator("#span-marking .step-next").count() == 0

    # Words: A's first word marked intrinsic by keyboard, B read and clean.
    page.keyboard.press("Home")
    page.keyboard.press("i")
    page.wait_for_selector("#span-text-A mark.kind-intrinsic")
    page.check("input[name=clean_B]")
    assert _bar(page)[2] == ("3 Words", "done")
    page.wait_for_selector("#draft-state:text-is('Draft saved.')")

    page.reload()  # back on the words step, with everything
    _ready(page)
    assert page.inner_text(".step-now") == "Step 3 of 3 · Words"
    assert _shown(page) == ["span-marking"]
    assert _bar(page) == [("1 Ranking", "done"), ("2 Facts", "done"), ("3 Words", "done")]
    assert page.inner_text("#span-text-A mark.kind-intrinsic") == "Answer"

    page.click("#span-marking .step-back")
    assert page.inner_text(".step-now") == "Step 2 of 3 · Facts"
    assert page.is_checked("input[name=nug_A_2][value=partial]")
    page.click(".step-bar .step-tab >> nth=2")  # the step bar jumps too
    assert _shown(page) == ["span-marking"]
    assert_page_fits(page, DESKTOP["width"], "steps-words")

    page.click("#submit-ranking")
    page.wait_for_url(lambda url: str(task.pk) not in url)
    _check_stored(task)


def _check_stored(task):
    task.refresh_from_db()
    assert task.status == RankingTask.Status.SUBMITTED
    a, b = task.order[0], task.order[1]
    assert {j.slot: (j.rank, j.tag) for j in task.judgements.all()} == {"A": (1, "good"), "B": (2, "bad")}
    labels = {(j.answer_id, j.nugget.key): j.label for j in NuggetJudgement.objects.filter(task=task)}
    assert labels == {
        (a, "n1"): "support",
        (a, "n2"): "partial",
        (a, "n3"): "not_support",
        (b, "n1"): "support",
        (b, "n2"): "support",
        (b, "n3"): "support",
    }
    # "Answer" is the first word of A's text: characters 0 to 6.
    assert list(HallucinationSpan.objects.filter(task=task).values_list("answer_id", "start", "end", "kind")) == [
        (a, 0, 6, "intrinsic")
    ]


def test_three_steps_by_touch_at_phone_width(phone_page, make_user, three_step_study):
    page = phone_page
    ranker = make_user("ranker")
    _login(page, ranker)
    _start(page, three_step_study)
    task = RankingTask.objects.get(ranker=ranker)
    assert page.inner_text(".step-now") == "Step 1 of 3 · Ranking"
    assert_page_fits(page, PHONE["width"], "steps-phone-rank")
    for tab in page.locator(".step-bar .step-tab").all():
        box = tab.bounding_box()
        assert box["height"] >= 44 and box["x"] + box["width"] <= PHONE["width"], box

    # The question is a short sticky line that opens on a tap.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function("window.scrollY > 100")
    _question_in_view(page, PHONE["height"])
    assert page.locator(".step-head").bounding_box()["height"] < PHONE["height"] / 3
    assert page.get_attribute(".question-toggle", "aria-expanded") == "false"
    page.tap(".question-toggle")
    assert page.get_attribute(".question-toggle", "aria-expanded") == "true"
    page.tap(".question-toggle")

    page.tap("#keep-order")
    page.tap("label.tag-choice:has(input[name=tag_A][value=good])")
    page.tap("label.tag-choice:has(input[name=tag_B][value=bad])")
    page.tap("#rank-step .step-next")
    assert page.inner_text(".step-now") == "Step 2 of 3 · Facts"
    assert_page_fits(page, PHONE["width"], "steps-phone-facts")
    for slot, labels in (("A", ["support", "partial", "not_support"]), ("B", ["support"] * 3)):
        for position, label in enumerate(labels, start=1):
            page.tap(f"#nugget-{slot}-{position} label.label-choice:has(input[value={label}])")
    page.tap("#nugget-assessment .step-next")
    assert page.inner_text(".step-now") == "Step 3 of 3 · Words"

    # B is read and clean, A is not marked yet: Submit is refused and A's text gets the focus.
    page.tap("input[name=clean_B]")
    page.tap("#submit-ranking")
    assert "answer A: mark its hallucinated words" in page.inner_text("#form-problems")
    assert _active(page) == "span-text-A"
    page.evaluate(
        """() => {
            const area = document.getElementById("span-text-A");
            const t = Array.from(area.childNodes).find((n) => n.nodeType === 3);
            const r = document.createRange(); r.setStart(t, 0); r.setEnd(t, 6);
            const s = getSelection(); s.removeAllRanges(); s.addRange(r);
        }"""
    )
    page.wait_for_selector("#span-toolbar:not([hidden])")
    page.tap("#span-toolbar .span-kind[data-kind=intrinsic]")
    page.wait_for_selector("#span-text-A mark.kind-intrinsic")
    assert_page_fits(page, PHONE["width"], "steps-phone-words")
    page.wait_for_selector("#draft-state:text-is('Draft saved.')")
    page.reload()
    _ready(page)
    assert page.inner_text(".step-now") == "Step 3 of 3 · Words"
    page.tap("#submit-ranking")
    page.wait_for_url(lambda url: str(task.pk) not in url)
    _check_stored(task)


def test_without_javascript_every_section_shows(chromium_browser, live_server, make_user, make_study):
    ranker = make_user("ranker")
    study = make_study(ask_ranking=True, ask_spans=True, include_reference=False, sample_size=1)
    context = chromium_browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    _login(page, ranker)
    page.goto(f"/rank/studies/{study.pk}/next/")
    page.click("form button:has-text('Start')")
    page.wait_for_selector("#ranking-form")
    assert page.is_visible("#rank-step") and page.is_visible("#span-marking")
    assert page.locator(".step-bar").count() == 0
    context.close()


def test_a_study_asking_one_thing_has_no_steps(page, login, make_user, make_study):
    study = make_study(ask_ranking=False, ask_spans=True, include_reference=False, sample_size=1)
    login(make_user("ranker"))
    page.goto(f"/rank/studies/{study.pk}/next/")
    page.click("form button:has-text('Start')")
    page.wait_for_selector("#ranking-form[data-draft-ready] #span-marking[data-ready]")
    assert page.locator(".step-bar, .step-nav").count() == 0
    assert page.get_attribute("#ranking-form", "data-steps") is None
    page.click("#submit-ranking")  # refused as before: the list of problems gets the focus
    assert page.evaluate("document.activeElement.id") == "form-problems"
