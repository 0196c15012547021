"""The start page and every lesson in a real browser (Playwright + Debian's chromium, headless),
the way a student uses them: answer every quiz question wrong and right and read the feedback and
the score line, write and mark exam answers, flip every card, open every worked answer, move every
embedded figure, run every embedded snippet; progress survives a reload and "Reset my progress"
clears it. Then axe-core on every page, a 390 px phone, and print. No console errors, and nothing
fetched from anywhere but the lab's own server.

The lessons are whatever GET /api/lessons lists (the content folder), never a fixed list of ids.
"""
import re
from pathlib import Path

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from gradwalk.lab.server import STATIC_DIR
from gradwalk.lessons import LessonStore
from browser_support import watched_page

LESSON_IDS = [entry["id"] for entry in LessonStore().index()]
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SLOW = 120_000  # a lesson is computed the first time it is asked for
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def site(page, live_server):
    """The page, with the console and the network watched; after the test: no console errors,
    no request that left the machine."""
    yield from watched_page(page, live_server, WIDE, STATIC_DIR)


def api(live_server, path):
    response = httpx.get(f"{live_server}{path}", timeout=SLOW / 1000)
    assert response.status_code == 200, response.text
    return response.json()


def blocks(lesson, kind):
    every = lesson["intro"] + [b for s in lesson["sections"] for b in s["blocks"]]
    return [b for b in every if b["type"] == kind]


def open_lesson(page, live_server, lesson_id):
    page.goto(f"{live_server}/lessons/{lesson_id}")
    expect(page.locator(f'article.lesson[data-lesson="{lesson_id}"]')).to_have_attribute(
        "data-ready", "1", timeout=SLOW)


def block(page, block_id):
    return page.locator(f'[data-block="{block_id}"]')


def score(answered, total, correct):
    return f"{answered} / {total} answered · {correct} correct"


def marks(value):
    return ("%.2f" % value).rstrip("0").rstrip(".")


def serious_violations(page):
    results = Axe().run(page)
    return [(v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"]][:3])
            for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def no_sideways_scroll(page):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] + 1, f"the page scrolls sideways ({width}px)"


def test_there_are_lessons_and_the_api_lists_them(live_server):
    listed = api(live_server, "/api/lessons")
    assert [entry["id"] for entry in listed] == LESSON_IDS
    assert LESSON_IDS, "no lesson in the content folder"


# ---- the start page and the routes ------------------------------------------------------------

def test_start_page_suggests_the_lessons_in_order_then_the_lab(site, live_server, screenshots):
    page = site
    page.goto(f"{live_server}/")
    path = page.locator("ol.path")
    expect(path).to_have_attribute("data-ready", "1", timeout=30_000)
    listed = api(live_server, "/api/lessons")
    steps = path.locator("li.lesson-step")
    expect(steps).to_have_count(len(listed))
    for i, entry in enumerate(listed):
        step = steps.nth(i)
        expect(step).to_have_attribute("data-lesson", entry["id"])
        expect(step.locator("h3")).to_contain_text(entry["title"])
        expect(step.locator(".summary")).to_have_text(entry["summary"])
        expect(step.locator(".step-progress")).to_have_text("Not started")
    expect(path.locator("li.lab-step a")).to_have_attribute("href", "/lab")
    # the menu: Start, every lesson, the lab and the figures
    expect(page.locator('#menu a[data-kind="lesson"]')).to_have_count(len(listed))
    expect(page.locator('#menu a[data-route="start"]')).to_have_attribute("aria-current", "page")
    expect(page.locator('#menu a[data-route="lab"]')).to_be_visible()
    assert page.locator('#menu a[data-kind="figure"]').count() == 8
    page.screenshot(path=str(screenshots / "start.png"), full_page=True)
    assert serious_violations(page) == []
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
    page.screenshot(path=str(screenshots / "start-390.png"), full_page=True)


def test_links_navigate_without_a_reload_and_back_and_forward_work(site, live_server):
    page = site
    page.goto(f"{live_server}/")
    expect(page.locator("ol.path")).to_have_attribute("data-ready", "1", timeout=30_000)
    page.evaluate("window.__stayed = 'yes'")  # gone if the page reloads
    first = LESSON_IDS[0]
    page.locator(f'ol.path li[data-lesson="{first}"] h3 a').click()
    expect(page).to_have_url(f"{live_server}/lessons/{first}")
    expect(page.locator(f'article.lesson[data-lesson="{first}"]')).to_have_attribute(
        "data-ready", "1", timeout=SLOW)
    expect(page.locator("#start-page")).to_be_hidden()
    page.click('#menu a[data-route="lab"]')
    expect(page).to_have_url(f"{live_server}/lab")
    expect(page.locator("#lab-page")).to_be_visible()
    page.click('#menu a[data-route="dead-relu"]')
    expect(page).to_have_url(f"{live_server}/figures/dead-relu")
    expect(page.locator('#figure[data-figure="dead-relu"]')).to_be_visible()
    page.go_back()
    expect(page).to_have_url(f"{live_server}/lab")
    expect(page.locator("#lab-page")).to_be_visible()
    page.go_back()
    expect(page.locator(f'article.lesson[data-lesson="{first}"]')).to_be_visible(timeout=SLOW)
    page.go_forward()
    expect(page.locator("#lab-page")).to_be_visible()
    assert page.evaluate("window.__stayed") == "yes"


def test_old_hash_addresses_still_open_their_pages(site, live_server):
    page = site
    page.goto(f"{live_server}/#/figure/xor")
    expect(page).to_have_url(f"{live_server}/figures/xor")
    expect(page.locator('#figure[data-figure="xor"]')).to_be_visible()
    page.goto(f"{live_server}/#/")
    expect(page).to_have_url(f"{live_server}/lab")
    expect(page.locator("#lab-page")).to_be_visible()


def test_the_lab_opens_preloaded_and_keeps_its_state_across_pages(site, live_server):
    page = site
    presets = api(live_server, "/api/presets")
    last = presets[-1]
    page.goto(f"{live_server}/lab?preset={last['id']}")
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
    expect(page.locator("#preset")).to_have_value(last["id"])
    expect(page.locator("#editor .cm-content")).to_contain_text(last["source"].splitlines()[0])
    # a lesson's "Open in the lab": the code in the address
    lesson = api(live_server, f"/api/lessons/{LESSON_IDS[0]}")
    snippets = blocks(lesson, "snippet")
    if snippets:
        open_lesson(page, live_server, LESSON_IDS[0])
        # the lab starts (hidden) under every page: wait for its first run
        expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        runs = page.locator("body").get_attribute("data-runs")
        first = block(page, snippets[0]["id"])
        first.locator("a.snippet-lab").click()
        expect(page).to_have_url(re.compile(r"/lab#code=[A-Za-z0-9_-]+$"))
        expect(page.locator("#lab-page")).to_be_visible()
        expect(page.locator("body")).not_to_have_attribute("data-runs", runs, timeout=30_000)
        code_line = next(line for line in snippets[0]["code"].splitlines() if line.strip())
        expect(page.locator("#editor .cm-content")).to_contain_text(code_line.strip())
        # away and back: the lab still holds that code and that run
        runs = page.locator("body").get_attribute("data-runs")
        page.click('#menu a[data-route="start"]')
        expect(page.locator("#lab-page")).to_be_hidden()
        page.click('#menu a[data-route="lab"]')
        expect(page.locator("#editor .cm-content")).to_contain_text(code_line.strip())
        assert page.locator("body").get_attribute("data-runs") == runs


def test_an_unknown_lesson_says_so(site, live_server):
    page = site
    page.expected_console_errors.append("404")  # the answer of /api/lessons/no-such-lesson
    page.goto(f"{live_server}/lessons/no-such-lesson")
    expect(page.locator("article.lesson-missing")).to_contain_text("There is no lesson named", timeout=30_000)


# ---- every lesson: the self-checks -----------------------------------------------------------

@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_self_checks_and_progress(site, live_server, lesson_id, screenshots):
    page = site
    lesson = api(live_server, f"/api/lessons/{lesson_id}")
    open_lesson(page, live_server, lesson_id)
    page.evaluate("localStorage.clear()")
    page.reload()
    expect(page.locator(f'article.lesson[data-lesson="{lesson_id}"]')).to_have_attribute(
        "data-ready", "1", timeout=SLOW)
    expect(page.locator(".lesson-toc li")).to_have_count(
        len(lesson["sections"]) + (1 if lesson["glossary"] else 0))

    quizzes, exams = blocks(lesson, "quiz"), blocks(lesson, "exam")
    cards, exercises = blocks(lesson, "cards"), blocks(lesson, "exercise")

    # quizzes: every question wrong where it can be, then Retry, then every question right
    for quiz in quizzes:
        el = block(page, quiz["id"])
        questions = quiz["questions"]
        n = len(questions)
        expect(el.locator(".quiz-score")).to_have_text(score(0, n, 0))
        correct = 0
        for i, q in enumerate(questions):
            wrong = [c for c in q["choices"] if not c["correct"]]
            choice = wrong[0] if wrong else next(c for c in q["choices"] if c["correct"])
            item = el.locator(f'li.quiz-question[data-question="{q["id"]}"]')
            item.locator(f'button.choice[data-choice="{choice["id"]}"]').click()
            feedback = item.locator(f'.choice-feedback[data-choice="{choice["id"]}"]')
            expect(feedback).to_be_visible()
            expect(feedback).to_contain_text("Not quite." if wrong else "Correct.")
            correct += 0 if wrong else 1
            expect(el.locator(".quiz-score")).to_have_text(score(i + 1, n, correct))
            # a second click on another choice changes nothing: the first answer stands
            other = next(c for c in q["choices"] if c["id"] != choice["id"]) if len(q["choices"]) > 1 else None
            if other:
                locked = item.locator(f'button.choice[data-choice="{other["id"]}"]')
                expect(locked).to_have_attribute("aria-disabled", "true")
                locked.dispatch_event("click")
                expect(item.locator(f'.choice-feedback[data-choice="{other["id"]}"]')).to_be_hidden()
            # ... and the page says the answer is locked, and how to unlock it
            expect(item.locator(".quiz-locked")).to_be_visible()
            expect(item.locator("button.quiz-again")).to_be_visible()
            expect(el.locator("button.quiz-retry")).to_be_visible()
        el.locator("button.quiz-retry").click()
        expect(el.locator(".quiz-score")).to_have_text(score(0, n, 0))
        expect(el.locator(".choice-feedback:visible")).to_have_count(0)
        for i, q in enumerate(questions):
            right = next(c for c in q["choices"] if c["correct"])
            item = el.locator(f'li.quiz-question[data-question="{q["id"]}"]')
            item.locator(f'button.choice[data-choice="{right["id"]}"]').click()
            feedback = item.locator(f'.choice-feedback[data-choice="{right["id"]}"]')
            expect(feedback).to_contain_text("Correct.")
            expect(el.locator(".quiz-score")).to_have_text(score(i + 1, n, i + 1))

    # exam questions: write, reveal, mark: full, half, none, in turn
    exam_totals = {}
    for exam in exams:
        el = block(page, exam["id"])
        total = sum(q["marks"] for q in exam["questions"])
        expect(el.locator(".exam-total")).to_have_text(f"Marks: 0 / {marks(total)}")
        got = 0
        for i, q in enumerate(exam["questions"]):
            item = el.locator(f'li.exam-question[data-question="{q["id"]}"]')
            item.locator("textarea").fill(f"My answer to question {i + 1}.")
            expect(item.locator(".model-answer")).to_be_hidden()
            item.locator("button.reveal").click()
            expect(item.locator(".model-answer")).to_be_visible()
            mark, share = [("full", 1), ("half", 0.5), ("zero", 0)][i % 3]
            item.locator(f'button.mark[data-mark="{mark}"]').click()
            expect(item.locator(f'button.mark[data-mark="{mark}"]')).to_have_attribute("aria-pressed", "true")
            got += q["marks"] * share
            expect(el.locator(".exam-total")).to_have_text(f"Marks: {marks(got)} / {marks(total)}")
        exam_totals[exam["id"]] = f"Marks: {marks(got)} / {marks(total)}"

    # flip cards: every one, with the keyboard for the first
    for deck in cards:
        el = block(page, deck["id"])
        for i, card in enumerate(deck["cards"]):
            item = el.locator(f'li.flip-card[data-card="{card["id"]}"]')
            button = item.locator("button.flip")
            expect(item.locator(".card-back")).to_be_hidden()
            if i == 0:
                button.focus()
                page.keyboard.press("Enter")
            else:
                button.click()
            expect(button).to_have_attribute("aria-pressed", "true")
            expect(item.locator(".card-back")).to_be_visible()
            expect(item.locator(".card-front")).to_be_visible()  # both sides stay readable

    # worked answers: every one
    for exercise in exercises:
        el = block(page, exercise["id"])
        expect(el.locator(".worked-answer")).to_be_hidden()
        el.locator("button.show-answer").click()
        expect(el.locator(".worked-answer")).to_be_visible()
        expect(el.locator("button.show-answer")).to_have_attribute("aria-expanded", "true")

    page.screenshot(path=str(screenshots / f"lesson-{lesson_id}-answered.png"))

    # progress survives a reload
    page.reload()
    expect(page.locator(f'article.lesson[data-lesson="{lesson_id}"]')).to_have_attribute(
        "data-ready", "1", timeout=SLOW)
    for quiz in quizzes:
        n = len(quiz["questions"])
        expect(block(page, quiz["id"]).locator(".quiz-score")).to_have_text(score(n, n, n))
    for exam in exams:
        expect(block(page, exam["id"]).locator(".exam-total")).to_have_text(exam_totals[exam["id"]])
        first = block(page, exam["id"]).locator("li.exam-question").first
        expect(first.locator("textarea")).to_have_value("My answer to question 1.")
    for deck in cards:
        expect(block(page, deck["id"]).locator('li.flip-card[data-flipped="1"]')).to_have_count(len(deck["cards"]))
    for exercise in exercises:
        expect(block(page, exercise["id"]).locator(".worked-answer")).to_be_visible()
    checks = sum(len(q["questions"]) for q in quizzes + exams) + sum(len(d["cards"]) for d in cards) + len(exercises)
    if checks:
        expect(page.locator(".lesson-progress")).to_contain_text("all")

    # the start page shows the progress
    page.click('#menu a[data-route="start"]')
    if checks:
        expect(page.locator(f'ol.path li[data-lesson="{lesson_id}"] .step-progress')).to_have_text(
            f"All {checks} self-checks done", timeout=30_000)
    page.go_back()
    expect(page.locator(f'article.lesson[data-lesson="{lesson_id}"]')).to_have_attribute(
        "data-ready", "1", timeout=SLOW)

    # "Reset my progress" asks first (inline); Cancel keeps everything
    page.click("button.reset-progress")
    expect(page.locator(".reset-confirm")).to_be_visible()
    page.click("button.reset-cancel")
    expect(page.locator(".reset-confirm")).to_be_hidden()
    for quiz in quizzes:
        n = len(quiz["questions"])
        expect(block(page, quiz["id"]).locator(".quiz-score")).to_have_text(score(n, n, n))
    # "Yes, clear it" clears it all, and it stays cleared after a reload
    page.click("button.reset-progress")
    page.click("button.reset-yes")
    expect(page.locator("button.reset-progress")).to_be_focused()
    for _ in range(2):
        for quiz in quizzes:
            n = len(quiz["questions"])
            expect(block(page, quiz["id"]).locator(".quiz-score")).to_have_text(score(0, n, 0))
        for exam in exams:
            total = sum(q["marks"] for q in exam["questions"])
            expect(block(page, exam["id"]).locator(".exam-total")).to_have_text(f"Marks: 0 / {marks(total)}")
            expect(block(page, exam["id"]).locator(".model-answer:visible")).to_have_count(0)
        for deck in cards:
            expect(block(page, deck["id"]).locator('li.flip-card[data-flipped="1"]')).to_have_count(0)
        for exercise in exercises:
            expect(block(page, exercise["id"]).locator(".worked-answer")).to_be_hidden()
        page.reload()
        expect(page.locator(f'article.lesson[data-lesson="{lesson_id}"]')).to_have_attribute(
            "data-ready", "1", timeout=SLOW)
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('gradwalk.progress/')).length") == 0


# ---- every lesson: figures, snippets, glossary -----------------------------------------------

def expected_run(live_server, code):
    """What the lab's API gives for ``code``: the type of its error (None when it runs cleanly)
    and what it printed."""
    response = httpx.post(f"{live_server}/api/run", json={"source": code, "mode": "pytorch"}, timeout=60)
    body = response.json()
    if response.status_code != 200:
        return body["error"]["type"], []
    failed = [body["error"]] if body["error"] else [p["error"] for p in body["passes"] if p["error"]]
    return (failed[0]["type"] if failed else None), body["prints"]


def readouts(figure):
    """What a figure shows: its readouts and the text of its drawing (a diagram's values)."""
    values = figure.locator("[data-value]").evaluate_all("els => els.map(e => e.dataset.raw ?? e.textContent)")
    return values + [figure.locator(".figure-main").inner_text()]


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_figures_snippets_and_terms(site, live_server, lesson_id):
    page = site
    lesson = api(live_server, f"/api/lessons/{lesson_id}")
    open_lesson(page, live_server, lesson_id)

    # every embedded figure: drawn from its params, and its first control moves its readouts
    for fig in blocks(lesson, "figure"):
        root = block(page, fig["id"]).locator(".figure.embedded")
        expect(root).to_have_attribute("data-renders", re.compile(r"[1-9]"), timeout=60_000)
        expect(block(page, fig["id"]).locator("a.figure-link")).to_have_attribute("href", f"/figures/{fig['figure']}")
        before_renders = root.get_attribute("data-renders")
        before = readouts(root)
        control = root.locator(".figure-controls input[type=range], .figure-controls select").first
        control.scroll_into_view_if_needed()
        control.evaluate("""el => {
            if (el.tagName === 'SELECT') {
                el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
                el.dispatchEvent(new Event('change', {bubbles: true}));
            } else {
                const v = Number(el.value), max = Number(el.max), min = Number(el.min);
                el.value = String(v === max ? min : max);
                el.dispatchEvent(new Event('input', {bubbles: true}));
            }
        }""")
        expect(root).not_to_have_attribute("data-renders", before_renders, timeout=60_000)
        expect(root.locator(".figure-error")).to_be_hidden()
        assert readouts(root) != before, fig["id"]

    # every snippet (and every exercise's): Run shows its output, or its own error in its box
    snippets = [(b["id"], b["code"], b["step"]) for b in blocks(lesson, "snippet")]
    snippets += [(f"{b['id']}-snippet", b["snippet"], False) for b in blocks(lesson, "exercise") if b["snippet"]]
    for block_id, code, step in snippets:
        el = block(page, block_id)
        el.scroll_into_view_if_needed()
        el.locator("button.snippet-run").click()
        expect(el).to_have_attribute("data-runs", "1", timeout=60_000)
        error, prints = expected_run(live_server, code)
        assert el.get_attribute("data-state") != "failed", (block_id, el.locator(".snippet-error").inner_text())
        if error is None:
            expect(el).to_have_attribute("data-state", "ok")
            expect(el.locator(".snippet-error")).to_be_hidden()
            printed = "\n".join(p.rstrip("\n") for p in prints) or "(nothing printed)"
            expect(el.locator(".snippet-output")).to_have_text(printed)
        else:
            expect(el).to_have_attribute("data-state", "error")
            expect(el.locator(f'.snippet-error .error-item[data-type="{error}"]')).to_be_visible()
        if step:
            expect(el.locator(".snippet-stepper")).to_be_visible()
        if el.locator("button.snippet-steps").is_enabled():
            if not step:
                el.locator("button.snippet-steps").click()
            stepper = el.locator(".snippet-stepper")
            expect(stepper.locator(".lesson-graph svg")).to_be_visible()
            caption = stepper.locator(".stepper-caption").inner_text()
            stepper.locator("button.stepper-step").click()
            expect(stepper.locator(".stepper-caption")).not_to_have_text(caption)
            expect(el).to_have_attribute("data-frame", "1")
            stepper.locator("button.stepper-back").click()
            expect(el).to_have_attribute("data-frame", "0")

    # listings show their code and what it printed; recordings show both engines' tables
    for listing in blocks(lesson, "listing"):
        el = block(page, listing["id"])
        expect(el.locator("pre.lesson-output")).to_have_text(listing["output"].rstrip("\n") or "(nothing)")
        first_line = next(line for line in listing["code"].splitlines() if line.strip())
        expect(el.locator("pre.lesson-code")).to_contain_text(first_line.strip())
    for recording in blocks(lesson, "recording"):
        el = block(page, recording["id"])
        for engine in ("pytorch", "gradwalk"):
            side = recording[engine]
            box = el.locator(f'.recording-side[data-engine="{side["engine"]}"]')
            expect(box).to_have_attribute("data-source", side["source"])
            expect(box.locator("h4")).to_contain_text(side["version"])
            expect(box.locator("tbody tr")).to_have_count(len(side["rows"]))

    # glossary terms: meaning on keyboard focus (and Escape closes it), and the list at the end
    terms = page.locator("span.term:not(.plain):visible")
    if terms.count():
        term = terms.first
        term.scroll_into_view_if_needed()
        term.focus()
        tip = page.locator(f'#{term.get_attribute("aria-describedby")}')
        expect(tip).to_be_visible()
        page.keyboard.press("Escape")
        expect(tip).to_be_hidden()
        term.blur()
        page.mouse.move(0, 0)
        term.hover()
        expect(tip).to_be_visible()
        page.mouse.move(0, 0)
        expect(tip).to_be_hidden()
    glossary = page.locator("#glossary dl.glossary-list dt")
    expect(glossary).to_have_count(len(lesson["glossary"]))


# ---- every lesson: accessibility, a phone, print ----------------------------------------------

@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_accessible_narrow_and_printable(site, live_server, lesson_id, screenshots):
    page = site
    lesson = api(live_server, f"/api/lessons/{lesson_id}")
    open_lesson(page, live_server, lesson_id)
    for fig in blocks(lesson, "figure"):
        expect(block(page, fig["id"]).locator(".figure.embedded")).to_have_attribute(
            "data-renders", re.compile(r"[1-9]"), timeout=60_000)
    page.screenshot(path=str(screenshots / f"lesson-{lesson_id}.png"))
    assert serious_violations(page) == []
    # KaTeX typeset every formula
    assert page.locator(".math:not([data-typeset])").count() == 0

    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)  # charts follow their box's width
    no_sideways_scroll(page)
    page.screenshot(path=str(screenshots / f"lesson-{lesson_id}-390.png"))

    page.set_viewport_size(WIDE)
    page.emulate_media(media="print")
    for exam in blocks(lesson, "exam"):
        expect(block(page, exam["id"]).locator(".model-answer").first).to_be_visible()
    for exercise in blocks(lesson, "exercise"):
        expect(block(page, exercise["id"]).locator(".worked-answer")).to_be_visible()
    for deck in blocks(lesson, "cards"):
        for card in deck["cards"]:
            back = block(page, deck["id"]).locator(f'li.flip-card[data-card="{card["id"]}"] .card-back')
            expect(back).to_be_visible()
    for quiz in blocks(lesson, "quiz"):
        for q in quiz["questions"]:
            right = next(c for c in q["choices"] if c["correct"])
            item = block(page, quiz["id"]).locator(f'li.quiz-question[data-question="{q["id"]}"]')
            expect(item.locator(f'.choice-feedback[data-choice="{right["id"]}"]')).to_be_visible()
    expect(page.locator("#menu")).to_be_hidden()
    expect(page.locator("button.reset-progress")).to_be_hidden()
    page.screenshot(path=str(screenshots / f"lesson-{lesson_id}-print.png"))
    page.emulate_media(media="screen")


# ---- the test lesson: every block kind, a snippet that raises ----------------------------------

@pytest.fixture(scope="module")
def test_lesson_server():
    """The lab serving only tests/lessons/fixtures/ (a lesson with every block kind)."""
    from browser_support import ServerThread

    from gradwalk.lab.server import create_app
    with ServerThread(create_app(allowed_hosts=["127.0.0.1", "localhost"],
                                 lessons_dir=FIXTURES)) as url:
        yield url


def test_a_snippet_that_raises_shows_its_error_on_its_line_with_the_stepper_open(page, test_lesson_server):
    url = test_lesson_server
    page.goto(f"{url}/lessons/test-lesson")
    expect(page.locator('article.lesson[data-lesson="test-lesson"]')).to_have_attribute(
        "data-ready", "1", timeout=SLOW)
    lesson = api(url, "/api/lessons/test-lesson")
    stepped = next(b for b in blocks(lesson, "snippet") if b["step"])
    el = block(page, stepped["id"])
    el.locator("button.snippet-run").click()
    expect(el).to_have_attribute("data-runs", "1", timeout=60_000)
    expect(el).to_have_attribute("data-state", "error")
    item = el.locator('.snippet-error .error-item[data-type="RuntimeError"]')
    expect(item).to_contain_text("backward through the graph a second time")
    expect(el.locator(".snippet-editor")).to_have_attribute("data-error-line", "3")
    stepper = el.locator(".snippet-stepper")
    expect(stepper).to_be_visible()  # `step`: the stepper opens after Run
    frames = int(el.get_attribute("data-frames"))
    for _ in range(frames - 1):
        stepper.locator("button.stepper-step").click()
    expect(stepper.locator(".stepper-caption")).to_contain_text("RuntimeError")
    stepper.locator("button.stepper-reset").click()
    expect(el).to_have_attribute("data-frame", "0")
    # a refused snippet (outside the lab's language) is the snippet's error too, not an HTTP error
    editor = el.locator(".snippet-editor .cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type("import os\n")
    el.locator("button.snippet-run").click()
    expect(el).to_have_attribute("data-runs", "2", timeout=60_000)
    expect(el).to_have_attribute("data-state", "error")
    assert not re.match(r"HTTP|NetworkError", el.get_attribute("data-error-type"))


# ---- the reported page bugs, one test each ------------------------------------------------------

def every_block(lesson):
    return lesson["intro"] + [b for s in lesson["sections"] for b in s["blocks"]]


def find_block(live_server, kind, predicate=lambda b: True):
    for lesson_id in LESSON_IDS:
        lesson = api(live_server, f"/api/lessons/{lesson_id}")
        for b in every_block(lesson):
            if b["type"] == kind and predicate(b):
                return lesson_id, b
    pytest.fail(f"no lesson has a {kind} block like that")


def test_a_quiz_question_can_be_tried_again_on_its_own(site, live_server):
    page = site
    lesson_id, quiz = find_block(live_server, "quiz", lambda b: any(
        len(q["choices"]) > 1 for q in b["questions"]))
    open_lesson(page, live_server, lesson_id)
    page.evaluate("localStorage.clear()")
    page.reload()
    expect(page.locator("article.lesson")).to_have_attribute("data-ready", "1", timeout=SLOW)
    el = block(page, quiz["id"])
    expect(el.locator("button.quiz-retry")).to_be_hidden()  # nothing to retry yet
    q = next(q for q in quiz["questions"] if len(q["choices"]) > 1)
    item = el.locator(f'li.quiz-question[data-question="{q["id"]}"]')
    first, second = q["choices"][0], q["choices"][1]
    item.locator(f'button.choice[data-choice="{first["id"]}"]').click()
    expect(item.locator(".quiz-locked")).to_contain_text("Answer locked")
    item.locator("button.quiz-again").click()
    expect(item.locator(".quiz-locked")).to_be_hidden()
    expect(el.locator(".quiz-score")).to_have_text(score(0, len(quiz["questions"]), 0))
    item.locator(f'button.choice[data-choice="{second["id"]}"]').click()
    expect(item.locator(f'.choice-feedback[data-choice="{second["id"]}"]')).to_be_visible()


def test_step_works_before_run_and_the_stepper_shows_the_engines_state(site, live_server):
    page = site
    lesson_id, snippet = find_block(live_server, "snippet", lambda b: b["step"])
    open_lesson(page, live_server, lesson_id)
    el = block(page, snippet["id"])
    el.scroll_into_view_if_needed()
    stepper = el.locator(".snippet-stepper")
    expect(stepper).to_be_visible()  # `step`: open before any run
    expect(el.locator("button.snippet-steps")).to_be_enabled()
    expect(stepper.locator("button.stepper-step")).not_to_have_attribute("aria-disabled", "true")
    stepper.locator("button.stepper-step").click()  # runs the snippet first
    expect(el).to_have_attribute("data-runs", "1", timeout=60_000)
    expect(el).to_have_attribute("data-frame", "0")
    expect(stepper.locator(".lesson-graph svg")).to_be_visible()
    state = stepper.locator(".stepper-state")
    # before the first step: the root waits in the ready queue, its inputs' counts shown
    expect(state.locator('[data-part="queue"] li.chip')).to_have_count(1)
    expect(state.locator('[data-part="queue"] li.chip.next')).to_contain_text("seq")
    stepper.locator("button.stepper-step").click()
    expect(el).to_have_attribute("data-frame", "1")
    # after a step: the queue holds what that step made ready, the step's count changes marked
    run = httpx.post(f"{live_server}/api/run", json={"source": snippet["code"], "mode": "pytorch"},
                     timeout=60).json()
    first = run["passes"][0]["steps"][0]
    expect(state.locator('[data-part="queue"] li.chip')).to_have_count(len(first["ready"]))
    for entry in first["ready"]:
        expect(state.locator(f'[data-part="queue"] li[data-node="{entry["node"]}"]')).to_be_visible()
    for change in first["dependencies"]:
        chip = state.locator(f'[data-part="deps"] li.changed[data-node="{change["node"]}"]')
        expect(chip).to_contain_text(f'{change["before"]} → {change["after"]}')
    expect(state.locator('[data-part="buffers"] li.chip')).to_have_count(len(first["buffers"]))

    # a snippet without `step`: "Step through backward()" runs it first, then opens the stepper
    lesson = api(live_server, f"/api/lessons/{lesson_id}")
    plain = next((b for b in blocks(lesson, "snippet") if not b["step"] and "backward" in b["code"]), None)
    if plain:
        other = block(page, plain["id"])
        other.scroll_into_view_if_needed()
        expect(other.locator(".snippet-stepper")).to_be_hidden()
        other.locator("button.snippet-steps").click()
        expect(other).to_have_attribute("data-runs", "1", timeout=60_000)
        if other.get_attribute("data-frames"):
            expect(other.locator(".snippet-stepper")).to_be_visible()


def test_recordings_fit_their_column_and_write_2_64_minus_1(site, live_server, screenshots):
    page = site
    lesson_id, recording = find_block(live_server, "recording", lambda b: any(
        r.get("seq") == 2**64 - 1 for r in b["pytorch"]["rows"]))
    open_lesson(page, live_server, lesson_id)
    el = block(page, recording["id"])
    el.scroll_into_view_if_needed()
    for engine in ("pytorch", "gradwalk"):
        box = el.locator(f'.recording-side[data-engine="{engine}"] .table-box')
        widths = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
        assert widths[0] <= widths[1] + 1, f"{engine}'s table is cut off at 1280 px: {widths}"
        rows = recording[engine]["rows"]
        for i, row in enumerate(rows):
            tr = box.locator("tbody tr").nth(i)
            if row["seq"] == 2**64 - 1:
                seq = tr.locator("td.seq")
                expect(seq).to_have_text("2⁶⁴−1")
                expect(seq).to_have_attribute("title", re.compile(r"^18446744073709551615\b"))
            if row["node"] == "torch::autograd::AccumulateGrad":
                node = tr.locator("td.node")
                expect(node).to_have_text("AccumulateGrad")
                expect(node).to_have_attribute("title", "torch::autograd::AccumulateGrad")
        # rows one line high (they were ~54 px, wrapped)
        heights = box.locator("tbody tr").evaluate_all("rows => rows.map(r => r.offsetHeight)")
        assert max(heights) < 44, heights
    # PyTorch's table above gradwalk's
    tops = el.locator(".recording-side").evaluate_all("s => s.map(e => e.getBoundingClientRect().top)")
    assert tops[0] < tops[1]
    el.screenshot(path=str(screenshots / "recording-1280.png"))


GUTTERS = """() => [...document.querySelectorAll('.lesson-snippet .cm-editor')].map(ed => {
  const numbers = [...ed.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
    .filter(g => g.style.visibility !== 'hidden' && g.textContent.trim());
  const lines = [...ed.querySelectorAll('.cm-content > .cm-line')];
  const top = e => Math.round(e.getBoundingClientRect().top);
  return {block: ed.closest('[data-block]').dataset.block,
          numbers: numbers.slice(-lines.length).map(top), lines: lines.map(top)};
})"""


@pytest.mark.parametrize("size", [WIDE, PHONE], ids=["1280", "390"])
def test_every_snippet_editors_line_numbers_sit_beside_their_lines(site, live_server, size):
    page = site
    page.set_viewport_size(size)
    lesson_id = max(LESSON_IDS, key=lambda i: len(blocks(api(live_server, f"/api/lessons/{i}"), "snippet")))
    open_lesson(page, live_server, lesson_id)
    page.wait_for_timeout(300)
    # without scrolling to them: the editors out of sight (a full-page screenshot shows them)
    for editor in page.evaluate(GUTTERS):
        assert editor["lines"], editor
        misplaced = [(n, line) for n, line in zip(editor["numbers"], editor["lines"]) if abs(n - line) > 1]
        assert misplaced == [], editor


def test_inline_code_stays_whole_and_printed_output_wraps(site, live_server):
    page = site
    lesson_id = LESSON_IDS[0]
    open_lesson(page, live_server, lesson_id)
    # inline code in prose is never split across lines (unless wider than the column)
    split = page.evaluate("""() => [...document.querySelectorAll('.lesson .prose p code')]
      .filter(c => c.textContent.length < 30)
      .filter(c => c.getBoundingClientRect().height > 1.8 * parseFloat(getComputedStyle(c).lineHeight))
      .map(c => c.textContent)""")
    assert split == []
    # ... and sits right against punctuation: no space inside the code box before or after it
    gaps = page.evaluate("""() => [...document.querySelectorAll('.lesson .prose code')].slice(0, 40)
      .map(c => parseFloat(getComputedStyle(c).paddingLeft) + parseFloat(getComputedStyle(c).marginLeft))""")
    assert max(gaps) < 3.5, gaps
    # what a snippet printed wraps instead of running out of its box
    lesson = api(live_server, f"/api/lessons/{lesson_id}")
    exercise = next(b for b in blocks(lesson, "exercise") if b["snippet"])
    el = block(page, f"{exercise['id']}-snippet")
    el.scroll_into_view_if_needed()
    el.locator("button.snippet-run").click()
    expect(el).to_have_attribute("data-runs", "1", timeout=60_000)
    out = el.locator(".snippet-output")
    widths = out.evaluate("o => [o.scrollWidth, o.clientWidth]")
    assert widths[0] <= widths[1] + 1, widths


def test_tables_that_scroll_sideways_on_a_phone_say_so(site, live_server, screenshots):
    page = site
    page.set_viewport_size(PHONE)
    marked = 0
    for lesson_id in LESSON_IDS:
        open_lesson(page, live_server, lesson_id)
        page.wait_for_timeout(300)
        boxes = page.evaluate("""() => [...document.querySelectorAll('.lesson .table-box, .lesson .prose table')]
          .filter(b => b.scrollWidth > b.clientWidth + 1)
          .map(b => ({scrolls: b.dataset.scrolls, tab: b.tabIndex, bg: getComputedStyle(b).backgroundImage}))""")
        for box in boxes:
            assert box["scrolls"] == "1" and box["tab"] == 0, box
            assert "radial-gradient" in box["bg"], box  # the shadow on the side with more
        marked += len(boxes)
        # no empty header cell without a name
        assert page.locator(".lesson th:not(:has(*))").evaluate_all(
            "ths => ths.filter(t => !t.textContent.trim()).length") == 0
    assert marked, "no table scrolls sideways at 390 px: the test shows nothing"
    page.screenshot(path=str(screenshots / "lesson-table-390.png"))


def test_a_busy_lab_reads_busy_retrying_and_recovers(site, live_server):
    """The first answers are 503s (past fetchRetrying's tries: no Retry-After) and a 500: the
    snippet and the figure say "busy, retrying…", ask again, and then show their result."""
    page = site
    page.expected_console_errors.append("50[03]")
    lesson_id, snippet = find_block(live_server, "snippet")
    refused = {"run": 0, "figure": 0}

    def busy_run(route):
        if refused["run"] < 2:
            refused["run"] += 1
            route.fulfill(status=503, content_type="application/json",
                          body='{"detail": "the lab is busy", "error": null}')
        else:
            route.continue_()

    def busy_figure(route):
        if refused["figure"] < 1:
            refused["figure"] += 1
            route.fulfill(status=500, content_type="text/plain", body="Internal Server Error")
        else:
            route.continue_()

    page.route("**/api/run", busy_run)
    page.route("**/api/figures/**", busy_figure)
    open_lesson(page, live_server, lesson_id)
    el = block(page, snippet["id"])
    el.scroll_into_view_if_needed()
    el.locator("button.snippet-run").click()
    expect(el.locator(".snippet-busy")).to_have_text("The lab is busy, retrying…")
    expect(el).to_have_attribute("data-runs", "1", timeout=60_000)
    expect(el).not_to_have_attribute("data-state", "failed")
    expect(el.locator(".snippet-busy")).to_be_hidden()
    expect(el.locator(".snippet-error")).to_be_hidden()
    assert refused["run"] == 2
    lesson = api(live_server, f"/api/lessons/{lesson_id}")
    for fig in blocks(lesson, "figure"):
        if fig["figure"] == "xor":
            continue
        root = block(page, fig["id"]).locator(".figure.embedded")
        expect(root).to_have_attribute("data-renders", re.compile(r"[1-9]"), timeout=60_000)
        expect(root.locator(".figure-error")).to_be_hidden()
    assert refused["figure"] == 1


def test_exercise_titles_are_markdown_and_figure_params_reach_the_figure(site, live_server):
    """An exercise's title is its `title_html` (code and math in it), and an XOR figure block's
    `steps` param is the number of steps it trains (sent to the stream, named on the button)."""
    page = site
    lesson_id, exercise = find_block(live_server, "exercise")
    xor_lesson, xor_block = find_block(live_server, "figure", lambda b: b["figure"] == "xor")
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/xor/stream" in r.url else None)

    def edited(route):
        lesson = route.fetch().json()
        for b in every_block(lesson):
            if b["id"] == exercise["id"] and lesson["id"] == lesson_id:
                b["title_html"] = "The <code>x.grad</code> of <span class=\"math inline\">x^2</span>"
            if b["id"] == xor_block["id"] and lesson["id"] == xor_lesson:
                b["params"] = {**b["params"], "steps": 30}
        route.fulfill(json=lesson)

    page.route(re.compile(r".*/api/lessons/[\w-]+$"), edited)
    open_lesson(page, live_server, lesson_id)
    title = block(page, exercise["id"]).locator(".block-title").first
    expect(title.locator("code")).to_have_text("x.grad")
    expect(title.locator(".math[data-typeset]")).to_have_count(1)
    assert "`" not in title.inner_text()
    if xor_lesson != lesson_id:
        open_lesson(page, live_server, xor_lesson)
    root = block(page, xor_block["id"]).locator(".figure.embedded")
    expect(root).to_have_attribute("data-streamed", "30", timeout=60_000)
    expect(root.locator("button", has_text="Train 30 steps")).to_be_visible()
    assert any("steps=30" in url for url in asked), asked
