"""A physician marks hallucinated words in real Chromium: one stretch with the mouse, one with the keyboard's word
cursor, changes the kind of one, keeps them across a reload (draft), submits; the database holds the offsets, in
characters, of the exact text shown (after an emoji and Chinese characters, so UTF-16 ≠ code points). And at phone
width: the phone's own selection, then a tap on the marking bar."""

from __future__ import annotations

import pytest

from ranking.models import HallucinationSpan, RankingTask, StudyAnswer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
TEXT = "患者😀服用阿司匹林。Take 100 mg daily with food, says the 2019 trial."


@pytest.fixture
def span_study(make_study):
    study = make_study(ask_ranking=False, ask_spans=True, include_reference=False, sample_size=1)
    StudyAnswer.objects.filter(question__study=study).update(text=TEXT)
    return study


def _start(page, study):
    page.goto(f"/rank/studies/{study.pk}/next/")
    page.click("form button:has-text('Start')")
    page.wait_for_selector("#ranking-form[data-draft-ready] #span-marking[data-ready]")


def _drag_select(page, area, words):
    """Select ``words`` in ``area`` with the mouse: press at the first character's left edge, release at the last's
    right edge."""
    box = page.evaluate(
        """([id, words]) => {
            const area = document.getElementById(id);
            const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
            for (let t = walker.nextNode(); t; t = walker.nextNode()) {
              const i = t.data.indexOf(words);
              if (i < 0) continue;
              const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + words.length);
              const rects = r.getClientRects();
              const first = rects[0], last = rects[rects.length - 1];
              return {x1: first.left + 1, y1: (first.top + first.bottom) / 2, x2: last.right - 1, y2: (last.top + last.bottom) / 2};
            }
            return null;
        }""",
        [area, words],
    )
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move(box["x2"], box["y2"], steps=8)
    page.mouse.up()


def test_mark_with_mouse_and_keyboard_edit_kind_reload_and_submit(page, login, make_user, span_study):
    ranker = make_user("ranker")
    login(ranker)
    _start(page, span_study)
    assert page.title().startswith("Mark hallucinated words")
    assert page.inner_text("#submit-ranking").startswith("Submit marks")
    assert page.inner_text("#span-text-A") == TEXT

    # The mouse: drag over "2019 trial", then pick the kind on the marking bar.
    _drag_select(page, "span-text-A", "2019 trial")
    page.wait_for_selector("#span-toolbar:not([hidden])")
    assert page.inner_text("#span-toolbar .span-quote-text") == "2019 trial"
    page.fill("#span-toolbar .span-note", "no such trial")  # typing takes the selection away; the bar keeps it
    page.click("#span-toolbar .span-kind[data-kind=extrinsic]")
    page.wait_for_selector("#span-text-A mark.kind-extrinsic")
    assert page.inner_text("#span-text-A mark.kind-extrinsic") == "2019 trial"

    # The keyboard: End (the final "."), ← ten words to "100", Shift+→ twice to "100 mg daily", 2 = extrinsic.
    page.focus("#span-text-A")
    page.keyboard.press("End")
    for _ in range(10):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    assert page.inner_text("#span-toolbar .span-quote-text") == "100 mg daily"
    page.keyboard.press("2")
    assert page.locator("#spans-A .span-item").count() == 2
    assert page.evaluate("document.activeElement.id") == "span-text-A"  # the cursor stays in the text

    # Edit: the keyboard mark becomes intrinsic (from its list entry).
    page.click("#spans-A .span-item:has-text('100 mg daily') .span-edit")
    page.click("#span-toolbar .span-kind[data-kind=intrinsic]")
    assert page.inner_text("#span-text-A mark.kind-intrinsic") == "100 mg daily"
    assert "intrinsic" in page.inner_text("#spans-A .span-item:has-text('100 mg daily')")
    # A third mark by keyboard (Home: the first word, I = intrinsic), removed with Delete from the list of marks.
    page.focus("#span-text-A")
    page.keyboard.press("Home")
    page.keyboard.press("i")
    assert page.locator("#spans-A .span-item").count() == 3
    page.focus("#spans-A .span-item >> nth=0 >> .span-edit")
    page.keyboard.press("Delete")
    assert page.locator("#spans-A .span-item").count() == 2
    # Answer B was read and is clean.
    page.check("input[name=clean_B]")
    page.wait_for_selector("#draft-state:text-is('Draft saved.')")

    page.reload()  # the draft brings the marks back
    page.wait_for_selector("#ranking-form[data-draft-ready] #span-marking[data-ready]")
    page.wait_for_selector("#span-text-A mark.kind-intrinsic")
    assert page.locator("#spans-A .span-item").count() == 2
    assert page.is_checked("input[name=clean_B]")

    page.click("#submit-ranking")
    page.wait_for_url(lambda url: "done=1" in url)
    task = RankingTask.objects.get(ranker=ranker)
    assert task.status == "submitted"
    rows = [(s.start, s.end, s.kind, s.note) for s in HallucinationSpan.objects.filter(task=task).order_by("start")]
    first, second = TEXT.index("100 mg daily"), TEXT.index("2019 trial")
    assert rows == [(first, first + 12, "intrinsic", ""), (second, second + 10, "extrinsic", "no such trial")]
    assert [TEXT[start:end] for start, end, _, _ in rows] == ["100 mg daily", "2019 trial"]
    assert HallucinationSpan.objects.filter(answer_id=task.order[1]).count() == 0


def test_unconfirmed_answer_is_not_sent_and_phone_width_marking_by_touch(
    chromium_browser, live_server, make_user, span_study
):
    context = chromium_browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    ranker = make_user("ranker")
    page.goto("/accounts/login/")
    page.fill("input[name=login]", ranker.email)
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)
    _start(page, span_study)

    # The phone's own selection (a Range, as a long press makes), then a tap on the bar's kind button.
    page.evaluate(
        """() => {
            const area = document.getElementById("span-text-A");
            const t = Array.from(area.childNodes).find((n) => n.nodeType === 3);
            const i = t.data.indexOf("Take");
            const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + 4);
            const s = getSelection(); s.removeAllRanges(); s.addRange(r);
        }"""
    )
    page.wait_for_selector("#span-toolbar:not([hidden])")
    for button in page.locator("#span-toolbar button:visible").all():
        box = button.bounding_box()
        assert box["height"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    page.tap("#span-toolbar .span-kind[data-kind=other]")
    page.wait_for_selector("#span-text-A mark.kind-other")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.tap("#span-text-A mark.kind-other")  # tapping a mark opens it: change its kind
    page.wait_for_selector("#span-toolbar:not([hidden]) .span-remove:visible")
    assert page.get_attribute("#span-toolbar .span-kind[data-kind=other]", "aria-pressed") == "true"
    page.tap("#span-toolbar .span-kind[data-kind=intrinsic]")
    page.wait_for_selector("#span-text-A mark.kind-intrinsic")

    page.click("#submit-ranking")  # answer B neither marked nor confirmed: not sent
    assert "answer B: mark its hallucinated words" in page.inner_text("#form-problems")
    page.tap("input[name=clean_B]")
    page.click("#submit-ranking")
    page.wait_for_url(lambda url: "done=1" in url)
    start = TEXT.index("Take")
    assert list(HallucinationSpan.objects.values_list("start", "end", "kind")) == [(start, start + 4, "intrinsic")]
    context.close()
    assert not violations, violations


def test_a_mouse_selection_inside_words_marks_the_whole_words(page, login, make_user, span_study):
    login(make_user("ranker"))
    _start(page, span_study)
    _drag_select(page, "span-text-A", "ily with fo")  # from inside "daily" to inside "food"
    page.wait_for_selector("#span-toolbar:not([hidden])")
    assert page.inner_text("#span-toolbar .span-quote-text") == "daily with food"
    page.click("#span-toolbar .span-kind[data-kind=intrinsic]")
    assert page.inner_text("#span-text-A mark.kind-intrinsic") == "daily with food"
    _drag_select(page, "span-text-A", "司匹")  # inside the Chinese drug name: the whole word
    page.wait_for_selector("#span-toolbar:not([hidden])")
    quote = page.inner_text("#span-toolbar .span-quote-text")
    assert "司匹" in quote and len(quote) > 2 and quote in TEXT


def test_a_study_by_character_keeps_exactly_the_selected_characters(page, login, make_user, make_study):
    study = make_study(
        ask_ranking=False, ask_spans=True, include_reference=False, sample_size=1, spans_by_character=True
    )
    StudyAnswer.objects.filter(question__study=study).update(text=TEXT)
    login(make_user("ranker"))
    _start(page, study)
    _drag_select(page, "span-text-A", "ily with fo")
    page.wait_for_selector("#span-toolbar:not([hidden])")
    assert page.inner_text("#span-toolbar .span-quote-text") == "ily with fo"
