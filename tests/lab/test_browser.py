"""The lab in a real browser (Playwright + Debian's chromium, headless): load the page, run each
preset, step to the end and check the panels against the API; backward() again fails, and
passes with retain_graph; the mode switch; no console errors and no request that leaves the
machine. Screenshots go to artifacts/screenshots/.

The page is the bundle built from web/ (`cd web && npm ci && npm run build`); without it these
tests fail, they do not skip.
"""
import re
from pathlib import Path

import httpx
import pytest
import torch
from playwright.sync_api import expect

from gradwalk.lab.presets import PRESETS
from gradwalk.lab.server import STATIC_DIR
from browser_support import watched_page

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
NEURON = PRESETS[0]["source"]
ERR_TWICE = "Trying to backward through the graph a second time"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


GUIDE_SEEN = "localStorage.setItem('gradwalk.lab.guide-seen', '1')"


@pytest.fixture
def lab(page, live_server):
    """The lab (/lab), loaded and ready, its first-visit guide already seen; after the test: no
    console errors, nothing fetched from anywhere but the lab's own server."""
    page.add_init_script(GUIDE_SEEN)
    yield from open_lab(page, live_server)


@pytest.fixture
def first_visit(page, live_server):
    """The lab as a student opens it the first time (nothing in localStorage)."""
    yield from open_lab(page, live_server)


def open_lab(page, live_server):
    for page in watched_page(page, live_server, {"width": 1280, "height": 800}, STATIC_DIR):
        page.goto(f"{live_server}/lab")
        expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        yield page


def api_run(live_server, source, mode="pytorch", **fields):
    response = httpx.post(f"{live_server}/api/run", json={"source": source, "mode": mode, **fields})
    assert response.status_code == 200
    return response.json()


def run_and_wait(page, action):
    """Do ``action`` (which starts a run) and wait until the page has the answer."""
    before = page.locator("body").get_attribute("data-runs") or "0"
    action()
    expect(page.locator("body")).not_to_have_attribute("data-runs", before, timeout=20_000)
    expect(page.locator("body")).to_have_attribute("data-busy", "0")


def go_to_end(page):
    page.click("#end")
    frames = int(page.locator("body").get_attribute("data-frames"))
    expect(page.locator("body")).to_have_attribute("data-frame", str(frames - 1))


def on_screen(text):
    """A step text as the page writes it: shapes as "(2, 3)" everywhere (the server writes 2x3)."""
    return re.sub(r"\b(\d+(?:x\d+)+) tensor\b", lambda m: f"({', '.join(m[1].split('x'))}) tensor", text)


def numbers(text):
    return [float(n) for n in NUMBER.findall(text)]


def flat(data):
    if isinstance(data, list):
        return [x for item in data for x in flat(item)]
    return [data]


def assert_leaf_grads_shown(page, answer):
    for leaf in answer["leaves"]:
        cell = page.locator(f'#leafgrads tr[data-leaf="{leaf["name"]}"] td').nth(2)
        expected = flat(leaf["grad"]["data"])
        # on screen: 4 significant digits, as the step log writes them; in the tooltip: in full
        shown = numbers(cell.inner_text())
        full = numbers(cell.get_attribute("title").split("\n")[0])
        assert len(shown) == len(full) == len(expected), (leaf["name"], shown, expected)
        for s, f, e in zip(shown, full, expected):
            assert f == e, leaf["name"]
            assert s == float(f"{e:.4g}"), leaf["name"]


def screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("preset", PRESETS, ids=[p["id"] for p in PRESETS])
def test_each_preset_steps_to_the_end_with_the_apis_gradients(lab, live_server, preset):
    run_and_wait(lab, lambda: lab.select_option("#preset", preset["id"]))
    answer = api_run(live_server, preset["source"])
    steps = answer["passes"][0]["steps"]
    expect(lab.locator("body")).to_have_attribute("data-frames", str(len(steps) + 1))
    nodes = answer["passes"][0]["graph"]["nodes"]
    expect(lab.locator("#graph svg g.node[data-name]")).to_have_count(len(nodes))
    for node in nodes:
        expect(lab.locator(f'#graph svg g.node[data-id="{node["id"]}"]')).to_have_attribute(
            "data-name", node["name"])

    lab.click("#step")
    expect(lab.locator("body")).to_have_attribute("data-step", "0")
    expect(lab.locator("#log")).to_contain_text(on_screen(steps[0]["text"]))
    go_to_end(lab)
    expect(lab.locator("#log")).to_contain_text(on_screen(steps[-1]["text"]))
    expect(lab.locator("#error")).to_be_hidden()
    assert_leaf_grads_shown(lab, answer)
    for panel in ("#queue", "#deps", "#buffers", "#saved"):
        expect(lab.locator(panel)).not_to_be_empty()
    screenshot(lab, f"preset-{preset['id']}")


def test_backward_again_shows_pytorchs_error_and_retain_graph_fixes_it(lab, live_server):
    run_and_wait(lab, lambda: lab.click("#again"))
    expect(lab.locator("#error")).to_be_visible()
    expect(lab.locator("#error")).to_contain_text(ERR_TWICE)
    go_to_end(lab)
    expect(lab.locator("body")).to_have_attribute("data-step-error", "1")
    screenshot(lab, "backward-again-error")

    run_and_wait(lab, lambda: lab.check("#retain"))
    expect(lab.locator("#error")).to_be_hidden()
    go_to_end(lab)
    answer = api_run(live_server, NEURON.replace("y.backward()", "y.backward(retain_graph=True)")
                     + "y.backward()\n")
    assert answer["ok"] and len(answer["passes"]) == 2
    assert_leaf_grads_shown(lab, answer)  # accumulated over both passes
    screenshot(lab, "backward-again-retain-graph")


def graph_seqs(page):
    """``{node id: seq}`` of the graph's nodes that have a sequence number (not AccumulateGrad)."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
        '#graph svg g.node[data-seq]')].map(g => [g.dataset.id, Number(g.dataset.seq)]))""")


def test_new_forward_pass_records_new_sequence_numbers_and_grad_keeps_accumulating(lab, live_server):
    answer = api_run(live_server, NEURON)
    created = answer["next_sequence_nr"]  # the neuron makes 3 nodes: seq 0, 1, 2
    first = graph_seqs(lab)
    assert first == {n["id"]: n["seq"] for n in answer["passes"][0]["graph"]["nodes"]
                     if n["seq"] is not None}
    assert sorted(first.values()) == list(range(created))
    for again in (1, 2):
        run_and_wait(lab, lambda: lab.click("#newforward"))
        expect(lab.locator("body")).to_have_attribute("data-sequence-start", str(again * created))
        assert graph_seqs(lab) == {id_: seq + again * created for id_, seq in first.items()}
        expect(lab.locator("#error")).to_be_hidden()
    lab.click("#step")
    expect(lab.locator("#log")).to_contain_text(f"popped TanhBackward0 (seq {3 * created - 1})")
    go_to_end(lab)
    # In PyTorch .grad keeps accumulating across forward passes: three passes, three times.
    w, x, b = (torch.tensor(v, requires_grad=True) for v in (0.5, 2.0, -0.3))
    for _ in range(3):
        torch.tanh(w * x + b).backward()
    third = api_run(live_server, NEURON, sequence_start=2 * created, earlier_passes=2)
    assert_leaf_grads_shown(lab, third)
    for leaf, t in zip(third["leaves"], (w, x, b)):
        assert leaf["grad"]["data"] == pytest.approx(t.grad.item(), rel=1e-6)
        shown = numbers(lab.locator(f'#leafgrads tr[data-leaf="{leaf["name"]}"] td').nth(2).inner_text())
        assert shown[0] == pytest.approx(t.grad.item(), rel=1e-3)
    # "this pass" is what this pass's AccumulateGrad added: one pass's gradient
    added = lab.locator('#leafgrads tr[data-leaf="w"] td.added').inner_text()
    assert numbers(added)[0] == pytest.approx(answer["leaves"][0]["grad"]["data"], rel=1e-3)
    expect(lab.locator("#leafgrads .accumulating")).to_contain_text("2 earlier forward+backward passes")
    screenshot(lab, "new-forward-pass")
    run_and_wait(lab, lambda: lab.click("#run"))  # Run starts again at 0, .grad from None
    expect(lab.locator("body")).to_have_attribute("data-sequence-start", "0")
    assert graph_seqs(lab) == first
    go_to_end(lab)
    assert_leaf_grads_shown(lab, answer)
    expect(lab.locator("#leafgrads .accumulating")).to_have_count(0)


def test_mode_switch_same_gradients_other_order(lab, live_server):
    mixed = next(p for p in PRESETS if p["id"] == "mixed")
    run_and_wait(lab, lambda: lab.select_option("#preset", "mixed"))
    run_and_wait(lab, lambda: lab.select_option("#mode", "topo"))
    topo = api_run(live_server, mixed["source"], "topo")
    pytorch = api_run(live_server, mixed["source"], "pytorch")
    order = [s["node"] for s in topo["passes"][0]["steps"]]
    assert order != [s["node"] for s in pytorch["passes"][0]["steps"]]
    lab.click("#step")
    expect(lab.locator("#log")).to_contain_text(topo["passes"][0]["steps"][0]["text"])
    go_to_end(lab)
    assert_leaf_grads_shown(lab, topo)
    assert_leaf_grads_shown(lab, pytorch)  # the same gradients
    # the page says where the two orders part
    first = next(i for i, (a, b) in enumerate(zip(order, (s["node"] for s in pytorch["passes"][0]["steps"])))
                 if a != b)
    expect(lab.locator("#order-note")).to_be_visible()
    expect(lab.locator("#order-note")).to_contain_text(f"step {first + 1}:")
    expect(lab.locator("#log li.step.differs").first).to_have_attribute("data-index", str(first))
    screenshot(lab, "mode-topo")


def test_micrograd_order_shows_no_gradient_before_its_step(lab, live_server):
    """micrograd has no ready queue: no node is 'in ready queue', and a node's gradient is what
    has arrived so far, never what a later step will give it."""
    mixed = next(p for p in PRESETS if p["id"] == "mixed")
    run_and_wait(lab, lambda: lab.select_option("#preset", "mixed"))
    run_and_wait(lab, lambda: lab.select_option("#mode", "topo"))
    topo = api_run(live_server, mixed["source"], "topo")["passes"][0]
    expect(lab.locator("#legend-ready")).to_have_text("still to run (topological order)")
    for k in (1, 2, 3):
        lab.click("#step")
        expect(lab.locator("body")).to_have_attribute("data-step", str(k - 1))
        assert lab.locator("#graph g.node.ready").count() == 0
        step = topo["steps"][k - 1]
        received = {b["node"] for b in step["buffers"]} | {s["node"] for s in topo["steps"][:k]}
        for node in topo["graph"]["nodes"]:
            g = lab.locator(f'#graph g.node[data-id="{node["id"]}"]')
            if node["id"] in received or node["id"] == topo["graph"]["root"]:
                continue
            expect(g).to_have_class(re.compile(r"\bpending\b|\bwaiting\b"))
            grad = g.locator("text.t-grad")
            if grad.count():
                expect(grad).to_have_text("grad: not yet")
    # the queue panel lists what is still to run, with what has arrived so far
    expect(lab.locator("#queue")).to_contain_text("micrograd has no ready queue")


def test_keyboard_alone_steps_and_a_narrow_window(lab):
    lab.locator("#controls").focus()
    lab.keyboard.press("ArrowRight")
    expect(lab.locator("body")).to_have_attribute("data-step", "0")
    lab.keyboard.press("End")
    frames = int(lab.locator("body").get_attribute("data-frames"))
    expect(lab.locator("body")).to_have_attribute("data-frame", str(frames - 1))
    lab.set_viewport_size({"width": 480, "height": 900})
    expect(lab.locator("#graph svg")).to_be_visible()
    screenshot(lab, "narrow")


def type_snippet(page, text):
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.locator("#editor .cm-content").fill(text)


@pytest.mark.parametrize("snippet, line, words", [
    ("x = torch.tensor(1.0, requires_grad=True)\nimport os\n", 2, "imports are not allowed"),
    ("x = torch.tensor(1.0, requires_grad=True)\ny = (x *\n", 2, "SyntaxError"),
    ("x = torch.tensor(1.0, requires_grad=True)\ny = open('f')\n", 2, "open"),
])
def test_a_refused_snippet_is_shown_with_its_line(lab, snippet, line, words):
    # chromium logs every 4xx answer as "Failed to load resource"
    lab.expected_console_errors.append(r"status of 4\d\d")
    type_snippet(lab, snippet)
    run_and_wait(lab, lambda: lab.click("#run"))
    error = lab.locator("#error")
    expect(error).to_be_visible()
    expect(error).to_contain_text(words)
    expect(error).to_contain_text(f"line {line}")
    expect(error).not_to_contain_text("HTTP 4")
    expect(error).not_to_contain_text("The request failed")
    expect(lab.locator("#position")).to_contain_text("Not run: ")
    expect(lab.locator("#editor")).to_have_attribute("data-error-line", str(line))
    # the message is written in the editor, right under its line, and that line is in view
    message = lab.locator("#editor .cm-error-message")
    expect(message).to_be_visible()
    expect(message).to_contain_text(words)
    marked = lab.locator("#editor .cm-error-line")
    expect(marked).to_be_visible()
    scroller = lab.locator("#editor .cm-scroller").bounding_box()
    box = marked.bounding_box()
    assert scroller["y"] - 1 <= box["y"] and box["y"] + box["height"] <= scroller["y"] + scroller["height"] + 1
    screenshot(lab, "refused-snippet")


def test_the_error_box_never_squeezes_the_editor(lab):
    """A long error message: the editor keeps its height, the message is readable in full
    (scrolling in its box), and the marked line stays in view."""
    lab.expected_console_errors.append(r"status of 4\d\d")
    long_snippet = "".join(f"a{i} = torch.tensor({i}.0, requires_grad=True)\n" for i in range(14))
    type_snippet(lab, long_snippet + "b = a1.frobnicate(a2)\n")
    run_and_wait(lab, lambda: lab.click("#run"))
    expect(lab.locator("#error")).to_be_visible()
    assert lab.locator("#editor").bounding_box()["height"] >= 200
    marked = lab.locator("#editor .cm-error-line")
    expect(marked).to_be_in_viewport()
    text = lab.locator("#error pre").first
    assert text.evaluate("el => el.scrollWidth <= el.clientWidth + 1")  # wrapped, not cut


def test_ctrl_enter_runs_once(lab):
    runs = int(lab.locator("body").get_attribute("data-runs"))
    lab.locator("#editor .cm-content").click()
    lab.keyboard.press("Control+Enter")
    expect(lab.locator("body")).to_have_attribute("data-runs", str(runs + 1))
    expect(lab.locator("body")).to_have_attribute("data-busy", "0")
    lab.wait_for_timeout(600)  # a second run would have been started by now
    expect(lab.locator("body")).to_have_attribute("data-runs", str(runs + 1))
    # a favicon the page carries itself (no request for /favicon.ico, no 404)
    assert lab.locator('link[rel="icon"]').get_attribute("href").startswith("data:image/svg+xml")


def test_the_check_and_the_profiler_forget_the_previous_snippet(lab):
    lab.locator("#lab-tools").scroll_into_view_if_needed()
    lab.click("#profile-run")
    expect(lab.locator("#profile svg.timeline")).to_be_visible(timeout=30_000)
    lab.click("#compare-run")
    expect(lab.locator("#compare")).to_have_attribute("data-runs", "1", timeout=30_000)
    expect(lab.locator("#compare .verdict-line")).to_be_visible()
    run_and_wait(lab, lambda: lab.select_option("#preset", "mixed"))
    expect(lab.locator("#profile svg.timeline")).to_have_count(0)
    expect(lab.locator("#profile")).to_contain_text("Press “Profile”")
    expect(lab.locator("#compare .verdict-line")).to_have_count(0)
    expect(lab.locator("#compare")).to_contain_text("Run on both engines")
    # the same snippet run again keeps them
    lab.click("#profile-run")
    expect(lab.locator("#profile svg.timeline")).to_be_visible(timeout=30_000)
    run_and_wait(lab, lambda: lab.click("#run"))
    expect(lab.locator("#profile svg.timeline")).to_be_visible()


def test_first_visit_guide(first_visit):
    page = first_visit
    guide = page.locator("#guide")
    expect(guide).to_be_visible()
    expect(guide).to_have_attribute("role", "dialog")
    expect(page.locator("#guide-title")).to_have_text("Welcome to the lab")
    screenshot(page, "guide-first-visit")
    # the page is not blocked while the guide is open: Step works
    page.click("#step")
    expect(page.locator("body")).to_have_attribute("data-step", "0")
    for _ in range(3):
        page.click("#guide-next")
    expect(page.locator("#guide-next")).to_have_text("Got it")
    page.click("#guide-next")
    expect(guide).to_be_hidden()
    expect(page.locator("#guide-open")).to_be_focused()
    # remembered: a reload does not show it again
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
    expect(page.locator("#guide")).to_be_hidden()
    # "How to use the lab" opens it again, from the keyboard; Escape closes it
    page.locator("#guide-open").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#guide")).to_be_visible()
    expect(page.locator("#guide-open")).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Escape")
    expect(page.locator("#guide")).to_be_hidden()


@pytest.mark.parametrize("panel", ["editor", "graph", "queue", "deps", "buffers", "saved",
                                   "leafgrads", "log", "compare", "profile"])
def test_every_panel_has_a_question_mark(lab, panel):
    toggle = lab.locator(f"#{panel}-title .help-toggle")
    help_box = lab.locator(f"#{panel}-help")
    expect(help_box).to_be_hidden()
    toggle.scroll_into_view_if_needed()
    toggle.focus()
    lab.keyboard.press("Enter")
    expect(help_box).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    assert len(help_box.inner_text()) > 60
    toggle.click()
    expect(help_box).to_be_hidden()


@pytest.mark.parametrize("word", ["waits", "input buffer", "seq 2⁶⁴−1", "AccumulateGrad", "freed"])
def test_terms_are_explained_where_they_appear(lab, word):
    term = lab.locator(f'#lab-page .panels .term[data-term="{word}"] >> visible=true').first
    term.scroll_into_view_if_needed()
    term.focus()  # keyboard focus shows the meaning, as hover does
    tip = lab.locator("#term-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text(word)
    assert len(tip.inner_text()) > 60
    expect(term).to_have_attribute("aria-describedby", "term-tip")
    lab.keyboard.press("Escape")
    expect(tip).to_be_hidden()


# Every card's content stays inside the card (tables, lists); the graph and the wide tools scroll
# in their own boxes instead.
OVERFLOWS = """() => {
  const out = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) out.push(`the page scrolls sideways (${doc.scrollWidth}px)`);
  for (const card of document.querySelectorAll('#lab-page .card')) {
    const right = card.getBoundingClientRect().right;
    for (const el of card.querySelectorAll('td, th, li, span, button, p, h2, pre')) {
      if (el.closest('.graph, .cm-editor')) continue;
      const r = el.getBoundingClientRect();
      if (r.width && r.right > right + 1)
        out.push(`${card.querySelector('h2')?.textContent}: "${el.textContent.slice(0, 40)}"`);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("width", [1280, 500, 390])
def test_the_mixed_example_fits_and_stays_readable(lab, width):
    run_and_wait(lab, lambda: lab.select_option("#preset", "mixed"))
    lab.set_viewport_size({"width": width, "height": 800})
    go_to_end(lab)
    assert lab.evaluate(OVERFLOWS) == []
    # the graph is never shrunk below 3/4 of its size: it scrolls, and the node just run is in view
    assert float(lab.locator("#graph").get_attribute("data-scale")) >= 0.75
    current = lab.locator("#graph svg g.node.current > path")
    view = lab.locator("#graph").bounding_box()

    def in_view():
        box = current.bounding_box()
        return (view["y"] - 8 <= box["y"] and box["y"] + box["height"] <= view["y"] + view["height"] + 8
                and view["x"] - 8 <= box["x"] and box["x"] + box["width"] <= view["x"] + view["width"] + 8)
    for _ in range(40):  # it scrolls smoothly
        if in_view():
            break
        lab.wait_for_timeout(50)
    assert in_view(), (current.bounding_box(), view)
    # AccumulateGrad is written as PyTorch's repr writes it; data-name keeps the API's name
    leaf = lab.locator('#graph svg g.node[data-variable="q"]')
    expect(leaf).to_have_attribute("data-name", "torch::autograd::AccumulateGrad")
    expect(leaf.locator("text").first).to_have_text("AccumulateGrad (q)")
    expect(lab.locator("#deps")).to_contain_text("AccumulateGrad(q)")
    expect(lab.locator("#deps")).not_to_contain_text("torch::")


def test_zoom_buttons(lab):
    run_and_wait(lab, lambda: lab.select_option("#preset", "mixed"))
    graph = lab.locator("#graph")
    expect(lab.locator("#zoom-fit")).to_have_attribute("aria-pressed", "false")  # readable size
    lab.click("#zoom-actual")
    expect(graph).to_have_attribute("data-scale", "1.000")
    expect(lab.locator("#zoom-level")).to_have_text("100%")
    lab.locator("#zoom-in").focus()
    lab.keyboard.press("Enter")
    expect(graph).to_have_attribute("data-scale", "1.250")
    lab.click("#zoom-out")
    lab.click("#zoom-out")
    expect(graph).to_have_attribute("data-scale", "0.800")
    expect(lab.locator("#zoom-fit")).to_have_attribute("aria-pressed", "false")
    assert graph.evaluate("g => g.scrollHeight > g.clientHeight")  # 18 nodes: it scrolls
    expect(lab.locator("#overview")).to_be_visible()  # with an overview of the whole graph
    lab.click("#zoom-fit")
    expect(lab.locator("#zoom-fit")).to_have_attribute("aria-pressed", "true")
    assert float(graph.get_attribute("data-scale")) < 0.75  # Fit goes below 75% when it must
    assert graph.evaluate("g => g.scrollHeight <= g.clientHeight + 1 && g.scrollWidth <= g.clientWidth + 1")
    expect(lab.locator("#overview")).to_be_hidden()  # nothing to scroll to


def test_a_60_term_sum_fits_and_has_an_overview(lab):
    terms = " + ".join(f"x * {i}.0" for i in range(1, 61))
    type_snippet(lab, f"x = torch.tensor(1.0, requires_grad=True)\ny = {terms}\ny.backward()\n")
    run_and_wait(lab, lambda: lab.click("#run"))
    graph = lab.locator("#graph")
    overview = lab.locator("#overview")
    expect(overview).to_be_visible()
    # dragging the overview's box moves the view
    before = graph.evaluate("g => [g.scrollLeft, g.scrollTop]")
    box = overview.bounding_box()
    lab.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] * 0.9)
    assert graph.evaluate("g => [g.scrollLeft, g.scrollTop]") != before
    lab.click("#zoom-fit")
    assert graph.evaluate("g => g.scrollHeight <= g.clientHeight + 1 && g.scrollWidth <= g.clientWidth + 1")
    screenshot(lab, "sum-60-fit")


def test_the_mixed_example_needs_no_scrolling_at_1280x800(lab):
    """The ready queue's head and the leaf .grad panel are on screen, and Follow keeps the node
    being run in view of the graph panel at every step."""
    run_and_wait(lab, lambda: lab.select_option("#preset", "mixed"))
    assert lab.evaluate("window.scrollY") == 0
    for _ in range(6):
        lab.click("#step")
        expect(lab.locator("#queue li.next")).to_be_in_viewport(ratio=1)
        expect(lab.locator("#leafgrads table")).to_be_in_viewport(ratio=1)
    expect(lab.locator("#zoom-follow")).to_have_attribute("aria-pressed", "true")
    current = lab.locator("#graph svg g.node.current")
    expect(current).to_be_in_viewport()
    screenshot(lab, "mixed-1280")


# ---- printed output, 2**64 - 1, accessibility ---------------------------------------------------

def test_the_step_log_shows_prints_without_blank_lines_between_them(lab, live_server):
    source = NEURON + "print(w.grad)\nprint(x.grad)\nprint()\nprint(b.grad)\n"
    run_and_wait(lab, lambda: (type_snippet(lab, source), lab.click("#run")))
    prints = api_run(live_server, source)["prints"]
    # each print() chunk ends with its own newline: joined as printed, no line added
    expect(lab.locator("#log li.prints pre")).to_have_text("".join(prints).removesuffix("\n"))
    assert "".join(prints).count("\n\n") == 1  # only the empty print() makes an empty line


MAX_SEQ = "18446744073709551615"


def assert_accumulate_grad_seq_shown(page):
    """Every place the lab shows AccumulateGrad's sequence number says 2⁶⁴−1 (the full value
    in the tooltip), never "max" nor 2**64 (18446744073709551616)."""
    page.click("#step")  # TanhBackward0 ran: AddBackward0 in the queue
    page.click("#step")  # AddBackward0 ran: AccumulateGrad(b) and MulBackward0 in the queue
    badge = page.locator(f'#queue li[data-seq="{MAX_SEQ}"] .badge.seq').first
    expect(badge).to_have_text("seq 2⁶⁴−1")
    expect(badge).to_have_attribute("title", re.compile(rf"^{MAX_SEQ}\b"))
    accumulate = page.locator("#graph svg g.node.kind-accumulate").first
    expect(accumulate).not_to_have_attribute("data-seq", re.compile("."))  # only real counters
    expect(accumulate.locator("title")).to_contain_text(f"2⁶⁴−1 = {MAX_SEQ}")
    node_id = accumulate.get_attribute("data-id")
    seq_cell = page.locator(f'#deps tr[data-node="{node_id}"] td').nth(1)
    expect(seq_cell).to_have_text("2⁶⁴−1")
    expect(seq_cell).to_have_attribute("title", re.compile(rf"^{MAX_SEQ}\b"))
    for panel in ("#queue", "#deps", "#graph", "#log"):
        text = page.locator(panel).inner_text()
        assert "18446744073709551616" not in text and " max" not in text, panel


def test_accumulate_grads_sequence_number_is_2_64_minus_1_everywhere(lab):
    assert_accumulate_grad_seq_shown(lab)
    lab.click("#compare-run")
    panel = lab.locator("#compare")
    expect(panel).to_have_attribute("data-runs", "1", timeout=30_000)
    cells = panel.locator("td.num[title]")
    expect(cells.first).to_have_text("2⁶⁴−1")
    expect(cells.first).to_have_attribute("title", re.compile(rf"^{MAX_SEQ}\b"))
    assert "MAX" not in panel.inner_text()


def test_the_page_reads_2_64_minus_1_sent_as_a_json_integer(lab):
    """docs/lab-api.md sends null for AccumulateGrad's seq; should an answer carry the integer
    itself (which JSON.parse reads as 2**64), the page still writes 2⁶⁴−1."""
    def as_integer(route):
        response = route.fetch()
        body = response.text()
        body = re.sub(r'("name": ?"torch::autograd::AccumulateGrad", ?"seq": ?)null', rf"\g<1>{MAX_SEQ}", body)
        assert MAX_SEQ in body
        route.fulfill(response=response, body=body)

    lab.route("**/api/run", as_integer)
    run_and_wait(lab, lambda: lab.click("#run"))
    assert_accumulate_grad_seq_shown(lab)


def test_the_lab_has_no_serious_accessibility_violation(lab, live_server):
    from axe_playwright_python.sync_playwright import Axe

    for preset in ("neuron", "mixed"):
        if lab.locator("#preset").input_value() != preset:
            run_and_wait(lab, lambda: lab.select_option("#preset", preset))
        for _ in range(3):  # some nodes done, some ready, saved tensors freed
            lab.click("#step")
        results = Axe().run(lab).response["violations"]
        serious = [(v["id"], [n["target"] for n in v["nodes"]][:3])
                   for v in results if v["impact"] in ("serious", "critical")]
        assert serious == [], preset
