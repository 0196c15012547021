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
from playwright.sync_api import expect

from gradwalk.lab.presets import PRESETS
from gradwalk.lab.server import STATIC_DIR

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
NEURON = PRESETS[0]["source"]
ERR_TWICE = "Trying to backward through the graph a second time"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


@pytest.fixture
def lab(page, live_server):
    """The page, loaded and ready; after the test: no console errors, nothing fetched from
    anywhere but the lab's own server."""
    for name in ("index.html", "main.js", "main.css"):
        assert (STATIC_DIR / name).is_file(), (
            f"the lab's page is not built ({STATIC_DIR / name} is missing): "
            f"run `cd web && npm ci && npm run build`")
    errors, external = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def guard(route):
        url = route.request.url
        if url.startswith(live_server) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            external.append(url)
            route.abort()

    page.route("**/*", guard)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.expected_console_errors = []  # a test that expects a 4xx answer adds its pattern here
    page.goto(f"{live_server}/lab")
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
    yield page
    unexpected = [e for e in errors
                  if not any(re.search(p, e) for p in page.expected_console_errors)]
    assert unexpected == []
    assert external == []


def api_run(live_server, source, mode="pytorch"):
    response = httpx.post(f"{live_server}/api/run", json={"source": source, "mode": mode})
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


def numbers(text):
    return [float(n) for n in NUMBER.findall(text)]


def flat(data):
    if isinstance(data, list):
        return [x for item in data for x in flat(item)]
    return [data]


def assert_leaf_grads_shown(page, answer):
    for leaf in answer["leaves"]:
        cell = page.locator(f'#leafgrads tr[data-leaf="{leaf["name"]}"] td').nth(2)
        shown = numbers(cell.inner_text())
        expected = flat(leaf["grad"]["data"])
        assert len(shown) == len(expected), (leaf["name"], shown, expected)
        for s, e in zip(shown, expected):
            assert s == pytest.approx(e, abs=6e-7), leaf["name"]


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
    expect(lab.locator("#log")).to_contain_text(steps[0]["text"])
    go_to_end(lab)
    expect(lab.locator("#log")).to_contain_text(steps[-1]["text"])
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


def test_new_forward_pass_records_new_sequence_numbers(lab, live_server):
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
    assert_leaf_grads_shown(lab, answer)  # the same gradients
    screenshot(lab, "new-forward-pass")
    run_and_wait(lab, lambda: lab.click("#run"))  # Run starts again at 0
    expect(lab.locator("body")).to_have_attribute("data-sequence-start", "0")
    assert graph_seqs(lab) == first


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
    screenshot(lab, "mode-topo")


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


def test_a_refused_snippet_is_shown_with_its_line(lab):
    # chromium logs every 4xx answer as "Failed to load resource"
    lab.expected_console_errors.append(r"status of 400 \(Bad Request\)")
    editor = lab.locator("#editor .cm-content")
    editor.click()
    lab.keyboard.press("Control+a")
    lab.keyboard.type("x = torch.tensor(1.0, requires_grad=True)\nimport os\n")
    run_and_wait(lab, lambda: lab.click("#run"))
    expect(lab.locator("#error")).to_be_visible()
    expect(lab.locator("#error")).to_contain_text("imports are not allowed")
    screenshot(lab, "refused-snippet")


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
    expect(lab.locator("#zoom-fit")).to_have_attribute("aria-pressed", "true")
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
    lab.click("#zoom-fit")
    expect(lab.locator("#zoom-fit")).to_have_attribute("aria-pressed", "true")
    assert graph.evaluate("g => g.scrollHeight > g.clientHeight")  # 18 nodes: it scrolls
