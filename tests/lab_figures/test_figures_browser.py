"""Each figure page in headless chromium: it renders, moving its control changes the drawing,
and the numbers it shows are the API's (gradwalk's) and, where one applies, PyTorch's. Then the
lab's "Check against PyTorch" panel on every preset and the profiler's download."""
import json
import re

import httpx
import pytest
import torch
import torch.autograd.forward_ad as fwAD
from playwright.sync_api import expect

from gradwalk.lab.presets import presets

T64 = torch.float64
WIDE = {"width": 1280, "height": 800}


def api(live_server, figure, **params):
    return httpx.get(f"{live_server}/api/figures/{figure}", params=params, timeout=30).json()


def renders(page):
    return int(page.locator("#figure").get_attribute("data-renders") or 0)


GUIDE_SEEN = "localStorage.setItem('gradwalk.lab.guide-seen', '1')"


def open_lab(page, live_server):
    """The lab page (/lab), its first-visit guide already seen."""
    page.add_init_script(GUIDE_SEEN)
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server}/lab")
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=20000)


def open_figure(page, live_server, figure, size=WIDE):
    page.set_viewport_size(size)
    page.goto(f"{live_server}/figures/{figure}")
    expect(page.locator(f'#figure[data-figure="{figure}"]')).to_have_attribute(
        "data-renders", re.compile(r"[1-9]"), timeout=20000)


def wait_for_render(page, before):
    # (no wait_for_function: the page's Content-Security-Policy forbids evaluating strings)
    expect(page.locator("#figure")).not_to_have_attribute("data-renders", str(before), timeout=20000)


def set_control(page, control_id, value):
    """Move a slider (or pick an option) the way a user's drag does: value, then events."""
    before = renders(page)
    page.eval_on_selector(f"#figure #{control_id}", """(el, v) => {
        if (el.type === 'checkbox') el.checked = v; else el.value = String(v);
        const kind = el.tagName === 'SELECT' || el.type === 'checkbox' ? 'change' : 'input';
        el.dispatchEvent(new Event(kind, {bubbles: true}));
    }""", value)
    wait_for_render(page, before)


def drawing(page):
    return page.locator("#figure .figure-main").screenshot()


def readout(page, key):
    raw = page.locator(f'#figure [data-value="{key}"]').get_attribute("data-raw")
    return raw if raw in ("", "true", "false") else float(raw)


def shot(page, screenshots, name):
    page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)


def torch_grad(fn, x):
    t = torch.tensor(x, dtype=T64, requires_grad=True)
    fn(t).backward()
    return t.grad.item()


def test_menu_links_every_figure(page, live_server):
    page.goto(f"{live_server}/lab")
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=20000)
    links = page.locator('#menu a[data-kind="figure"]')
    expect(links).to_have_count(8)
    page.click('#menu a[data-route="dead-relu"]')
    expect(page.locator('#figure[data-figure="dead-relu"]')).to_be_visible()
    expect(page.locator("#lab-page")).to_be_hidden()
    page.click('#menu a[data-route="lab"]')
    expect(page.locator("#lab-page")).to_be_visible()


def test_chain_rule(page, live_server, screenshots):
    open_figure(page, live_server, "chain-rule")
    expected = api(live_server, "chain-rule")
    for key in ("inner_slope", "outer_slope", "product", "composite", "finite_difference"):
        assert readout(page, key) == expected[key]
    shot(page, screenshots, "figure-1-chain-rule")
    before = drawing(page)
    set_control(page, "x", -1.2)
    assert drawing(page) != before
    assert readout(page, "composite") == api(live_server, "chain-rule", x=-1.2)["composite"]
    assert readout(page, "composite") == pytest.approx(torch_grad(lambda t: torch.sin(t ** 2), -1.2), rel=1e-12)
    set_control(page, "outer", "tanh(u)")
    assert readout(page, "product") == pytest.approx(torch_grad(lambda t: torch.tanh(t ** 2), -1.2), rel=1e-12)


def test_activation_slopes(page, live_server, screenshots):
    open_figure(page, live_server, "activation")
    assert readout(page, "slope") == pytest.approx(torch_grad(torch.sigmoid, 1.0), rel=1e-12)
    before = drawing(page)
    set_control(page, "x", -3)
    assert drawing(page) != before
    assert readout(page, "slope") == api(live_server, "activation", x=-3.0)["slope"]
    before = drawing(page)
    set_control(page, "depth", 25)
    assert drawing(page) != before
    t = torch.tensor(-3.0, dtype=T64, requires_grad=True)
    a = t
    for _ in range(25):
        a = torch.sigmoid(a)
    a.backward()
    assert readout(page, "deep") == pytest.approx(t.grad.item(), rel=1e-12)
    set_control(page, "activation", "relu")
    set_control(page, "x", 2)
    assert readout(page, "deep") == 1.0  # relu's slope 1 never shrinks
    shot(page, screenshots, "figure-2-activation")


def test_gradient_check(page, live_server, screenshots):
    open_figure(page, live_server, "gradient-check")
    assert readout(page, "exact") == pytest.approx(0.15252425581397377, rel=1e-15)
    before = drawing(page)
    set_control(page, "log-h", -12)
    assert drawing(page) != before
    expected = api(live_server, "gradient-check", h=1e-12)
    assert readout(page, "central") == expected["at"]["central"]
    assert readout(page, "best_central") == expected["best_central"]["h"]
    shot(page, screenshots, "figure-3-gradient-check")


def test_learning_rate(page, live_server, screenshots):
    open_figure(page, live_server, "learning-rate")
    assert readout(page, "diverges") == "false"
    before = drawing(page)
    set_control(page, "lr", 0.15)
    assert drawing(page) != before
    expected = api(live_server, "learning-rate", lr=0.15, steps=30)
    assert readout(page, "diverges") == "true"
    assert readout(page, "final_loss") == expected["loss"][-1]
    assert readout(page, "max_grad_difference") == 0.0  # exact gradients while diverging
    shot(page, screenshots, "figure-4-learning-rate")


def test_xor_streams_the_loss_and_draws_the_boundary(page, live_server, screenshots):
    open_figure(page, live_server, "xor")
    expect(page.locator("#figure")).to_have_attribute("data-streamed", "100")
    expected = api(live_server, "xor", lr=0.05, seed=0)
    assert readout(page, "final_loss") == expected["final_loss"]
    assert readout(page, "loss") == expected["loss"][-1]
    before = drawing(page)
    set_control(page, "lr", 0.3)
    assert drawing(page) != before
    assert readout(page, "final_loss") == api(live_server, "xor", lr=0.3, seed=0)["final_loss"]
    shot(page, screenshots, "figure-5-xor")


def test_paths_sum_and_the_assignment_bug(page, live_server, screenshots):
    open_figure(page, live_server, "paths-sum")
    # it opens at step 0: nothing has gone backward yet
    expect(page.locator("#step-position")).to_have_text(re.compile(r"step 0 of \d"))
    assert readout(page, "x_grad") == ""
    page.click("#end-steps")
    x = torch.tensor(2.0, requires_grad=True)
    (x * 3.0 + x * 4.0).backward()
    assert readout(page, "x_grad") == x.grad.item() == 7.0
    shot(page, screenshots, "figure-6-paths-sum")
    before = drawing(page)
    set_control(page, "bug", True)
    assert drawing(page) != before
    assert readout(page, "x_grad") == api(live_server, "paths-sum", bug=True)["x_grad"] == 3.0
    page.click("#reset-steps")
    assert readout(page, "x_grad") == ""
    page.click("#step-backward")
    page.click("#step-backward")
    expect(page.locator("#step-position")).to_have_text(re.compile(r"step 2 of \d"))
    shot(page, screenshots, "figure-6-paths-sum-bug")


def test_forward_mode(page, live_server, screenshots):
    open_figure(page, live_server, "forward-mode")
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor(0.5, dtype=T64), torch.tensor(1.0, dtype=T64))
        _, tangent = fwAD.unpack_dual(torch.tanh(d ** 3 + 2 * d + 1))
    assert readout(page, "tangent") == pytest.approx(tangent.item(), rel=1e-14)
    assert readout(page, "reverse") == pytest.approx(0.15252425581397377, rel=1e-14)
    expect(page.locator("#figure table.duals tbody tr")).to_have_count(6)
    before = drawing(page)
    set_control(page, "x", 1.0)
    assert drawing(page) != before
    assert readout(page, "tangent") == api(live_server, "forward-mode", x=1.0)["tangent"]
    shot(page, screenshots, "figure-7-forward-mode")


def test_dead_relu(page, live_server, screenshots):
    open_figure(page, live_server, "dead-relu")
    assert (readout(page, "grad_x1"), readout(page, "grad_x2"), readout(page, "grad_b")) == (3.0, 2.0, 1.0)
    before = drawing(page)
    set_control(page, "b", -10)
    assert drawing(page) != before
    leaves = [torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, -10.0)]
    torch.relu(leaves[0] * leaves[1] + leaves[2]).backward()
    assert [readout(page, k) for k in ("grad_x1", "grad_x2", "grad_b")] == [t.grad.item() for t in leaves]
    assert readout(page, "dead") == "true"
    shot(page, screenshots, "figure-8-dead-relu")


PHONE = {"width": 390, "height": 844}


@pytest.mark.parametrize("figure", ["chain-rule", "xor", "paths-sum", "dead-relu", "activation"])
def test_figures_fit_a_narrow_screen(page, live_server, screenshots, figure):
    open_figure(page, live_server, figure, size=PHONE)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, f"the page scrolls sideways ({width}px)"
    # the lab's own selectors (preset, engine) are not on a figure's page
    expect(page.locator(".topbar .toolbar")).to_be_hidden()
    # a diagram is drawn whole, top to bottom, never cut off on the right
    for svg in page.locator("#figure svg.diagram").all():
        box, frame_box = svg.bounding_box(), page.locator("#figure .figure-main").bounding_box()
        assert box["x"] >= frame_box["x"] - 1
        assert box["x"] + box["width"] <= frame_box["x"] + frame_box["width"] + 1
        assert svg.evaluate("s => s.parentElement.scrollWidth <= s.parentElement.clientWidth + 1")
    shot(page, screenshots, f"narrow-{figure}")


@pytest.mark.parametrize("figure, lesson", [
    ("chain-rule", "chain-rule"), ("dead-relu", "chain-rule"), ("forward-mode", "chain-rule"),
    ("paths-sum", "chain-rule"), ("gradient-check", "chain-rule"), ("xor", "chain-rule"),
    ("activation", "autodiff"), ("learning-rate", "autodiff"),
])
def test_each_figure_page_teaches_and_links_back_to_its_lesson(page, live_server, figure, lesson):
    open_figure(page, live_server, figure)
    teach = page.locator("#figure .figure-teach")
    expect(teach).to_be_visible()
    expect(teach.locator(".figure-question")).to_contain_text("?")
    expect(teach).to_contain_text("Try this")
    expect(teach.locator("a")).to_have_attribute("href", f"/lessons/{lesson}")


def test_chain_rule_drag_the_point_on_the_curve(page, live_server, screenshots):
    open_figure(page, live_server, "chain-rule")
    over = page.locator('#figure .chart[data-chart^="y = f(g(x))"] .u-over')
    box = over.bounding_box()
    before = renders(page)
    # press on the chart at about x = -1 (the axis runs from -2 to 2) and drag to about x = 1
    page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.75, box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()
    wait_for_render(page, before)
    x = float(page.locator("#figure #x").input_value())
    assert 0.9 <= x <= 1.1
    expect(page.locator('#figure [data-value="composite"]')).to_have_attribute(
        "data-raw", str(api(live_server, "chain-rule", x=x)["composite"]))
    assert readout(page, "composite") == pytest.approx(
        torch_grad(lambda t: torch.sin(t ** 2), x), rel=1e-12)
    # inner × outer = backward() = the finite difference (to its own error)
    assert readout(page, "product") == pytest.approx(readout(page, "composite"), rel=1e-12)
    assert readout(page, "finite_difference") == pytest.approx(readout(page, "composite"), rel=1e-6)
    # three tangents: composite and inner on the first chart, outer on the second
    expect(page.locator('#figure .chart[data-chart^="y = f(u)"]')).to_be_visible()
    expect(page.locator("#figure .u-legend").first).to_contain_text("inner tangent")
    expect(page.locator("#figure .u-legend").nth(1)).to_contain_text("outer tangent")
    # the keyboard moves the same point, through the slider
    before = renders(page)
    page.locator("#figure #x").focus()
    page.keyboard.press("ArrowLeft")
    wait_for_render(page, before)
    shot(page, screenshots, "figure-1-chain-rule-drag")


def test_chain_rule_drag_by_touch(browser, live_server):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    open_figure(page, live_server, "chain-rule", size=PHONE)
    over = page.locator('#figure .chart[data-chart^="y = f(g(x))"] .u-over')
    box = over.bounding_box()
    before = renders(page)
    # a tap is a pointerdown/up pair on a touch screen: the point jumps to the finger
    page.touchscreen.tap(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)
    wait_for_render(page, before)
    assert float(page.locator("#figure #x").input_value()) < -1.2
    context.close()


def test_a_log_chart_says_what_it_cannot_draw(page, live_server):
    open_figure(page, live_server, "activation")
    set_control(page, "activation", "relu")
    set_control(page, "x", -3)  # relu's slope is 0 there: every stacked gradient is exactly 0
    note = page.locator('#figure .chart[data-chart^="d aₙ"] + .chart-note')
    expect(note).to_be_visible()
    expect(note).to_contain_text("exactly 0")


def test_the_lab_on_a_phone_shows_both_profiler_lanes(page, live_server, screenshots):
    page.add_init_script(GUIDE_SEEN)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server}/lab")
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=20000)
    page.locator("#profile-run").scroll_into_view_if_needed()
    page.click("#profile-run")
    timeline = page.locator("#profile svg.timeline")
    expect(timeline).to_be_visible(timeout=30000)
    # the first backward node starts at the left edge, on screen, not after the forward ops
    first_backward = timeline.locator("g.event.backward rect").first.bounding_box()
    assert first_backward["x"] + first_backward["width"] <= 390
    page.locator("#lab-tools").scroll_into_view_if_needed()
    shot(page, screenshots, "narrow-lab-profile")


def test_compare_panel_shows_no_difference_on_every_preset(page, live_server, screenshots):
    open_lab(page, live_server)
    panel = page.locator("#compare")
    for i, preset in enumerate(presets()):
        runs = int(page.locator("body").get_attribute("data-runs") or 0)
        if i:
            page.select_option("#preset", preset["id"])
            expect(page.locator("body")).not_to_have_attribute("data-runs", str(runs), timeout=20000)
        page.click("#compare-run")
        expect(panel).to_have_attribute("data-runs", str(i + 1), timeout=30000)
        expect(panel).to_have_attribute("data-differences", "0")
        expect(panel.locator(".verdict-line.same")).to_be_visible()
        assert panel.locator("tr.differs").count() == 0
    page.locator("#lab-tools").scroll_into_view_if_needed()
    shot(page, screenshots, "lab-compare")


def test_profiler_view_and_chrome_trace_download(page, live_server, screenshots):
    open_lab(page, live_server)
    page.click("#profile-run")
    timeline = page.locator("#profile svg.timeline")
    expect(timeline).to_be_visible(timeout=30000)
    expect(timeline.locator("g.event.forward")).to_have_count(3)  # the neuron: mul, add, tanh
    expect(timeline.locator("path.seq-link")).to_have_count(3)
    expect(timeline.locator('g.event.backward[data-name="MulBackward0"]')).to_have_count(1)
    with page.expect_download() as info:
        page.click("#profile-download")
    trace = json.loads(open(info.value.path()).read())
    assert trace["traceEvents"] and info.value.suggested_filename == "gradwalk-trace.json"
    page.locator("#lab-tools").scroll_into_view_if_needed()
    shot(page, screenshots, "lab-profile")


# ---- accessibility, XOR's steps, a busy lab ------------------------------------------------------

FIGURES = ["chain-rule", "activation", "gradient-check", "learning-rate", "xor", "paths-sum",
           "forward-mode", "dead-relu"]


def serious_violations(page):
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page).response["violations"]
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in results if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("figure", FIGURES)
def test_every_figure_page_has_no_serious_accessibility_violation(page, live_server, figure):
    open_figure(page, live_server, figure)
    assert serious_violations(page) == []
    # the hand-drawn diagrams say what they show: every box, with its values
    for svg in page.locator('#figure svg.diagram').all():
        label = svg.get_attribute("aria-label")
        titles = svg.locator(".dtitle").evaluate_all("ts => ts.map(t => t.textContent)")
        assert label and all(t in label for t in titles), (label, titles)
    if figure == "paths-sum":  # still-to-run steps in the log, readable
        page.click("#step-backward")
        expect(page.locator("#step-position")).to_have_text(re.compile(r"step 1 of \d"))
        assert serious_violations(page) == []


def test_xor_trains_the_steps_asked_for_and_names_its_axes(page, live_server, screenshots):
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/xor/stream" in r.url else None)
    open_figure(page, live_server, "xor")
    assert "steps=100" in asked[-1]
    expect(page.locator("#train")).to_have_text("Train 100 steps")
    expect(page.locator("#figure")).to_have_attribute("data-streamed", "100")
    set_control(page, "steps", 40)
    assert "steps=40" in asked[-1]
    expect(page.locator("#train")).to_have_text("Train 40 steps")
    expect(page.locator("#figure")).to_have_attribute("data-streamed", "40")
    expect(page.locator(".boundary-plot .axis-label.x")).to_contain_text("x₁")
    expect(page.locator(".boundary-plot .axis-label.y")).to_contain_text("x₂")
    expect(page.locator(".boundary-plot .axis-label.y")).to_be_visible()
    shot(page, screenshots, "figure-xor-40-steps")


def test_a_figure_rides_out_a_busy_lab(page, live_server):
    """The first answers are a 503 past its retries (no Retry-After) and a time limit hit under
    load: the figure says "busy, retrying…", asks again and draws; no raw error."""
    answers = [
        {"status": 503, "content_type": "application/json", "body": '{"detail": "busy"}'},
        {"status": 422, "content_type": "application/json",
         "body": json.dumps({"error": {"type": "LimitError", "message": "the snippet ran longer than 5 s",
                                       "line": None, "col": None},
                             "detail": "LimitError: the snippet ran longer than 5 s"})},
    ]

    def busy(route):
        if answers:
            route.fulfill(**answers.pop(0))
        else:
            route.continue_()

    page.route("**/api/figures/dead-relu?*", busy)
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server}/figures/dead-relu")
    expect(page.locator("#figure .figure-busy")).to_have_text("The lab is busy, retrying…")
    expect(page.locator("#figure")).to_have_attribute("data-renders", re.compile(r"[1-9]"), timeout=30000)
    expect(page.locator("#figure .figure-busy")).to_be_hidden()
    expect(page.locator("#figure .figure-error")).to_be_hidden()
    assert answers == []
