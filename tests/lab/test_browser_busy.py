"""The page under a full lab: a 503 with Retry-After (docs/lab-api.md, "Under load") is asked
again after that long, and the student sees the answer, not an error. In a real browser
(Playwright + Debian's chromium); the bundle must be built (`cd web && npm run build`)."""
import json
from pathlib import Path

from playwright.sync_api import expect

from gradwalk.lab.server import STATIC_DIR

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
BUSY = json.dumps({"detail": "the lab is running 16 requests already; try again in a moment",
                   "error": {"type": "Busy", "message": "the lab is running 16 requests already; "
                             "try again in a moment", "line": None, "col": None}})


def test_the_page_retries_a_run_the_full_lab_refused(page, live_server):
    assert (STATIC_DIR / "main.js").is_file(), "build the page: cd web && npm run build"
    calls = []

    def busy_once(route):
        calls.append(route.request.url)
        if len(calls) == 1:
            route.fulfill(status=503, headers={"Retry-After": "1", "Content-Type": "application/json"},
                          body=BUSY)
        else:
            route.continue_()

    page.add_init_script("localStorage.setItem('gradwalk.lab.guide-seen', '1')")
    page.route("**/api/run", busy_once)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server}/lab")
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
    before = page.locator("body").get_attribute("data-runs") or "0"
    page.click("#run")
    expect(page.locator("body")).not_to_have_attribute("data-runs", before, timeout=20_000)
    expect(page.locator("body")).to_have_attribute("data-busy", "0")
    assert len(calls) >= 2  # refused once, asked again
    assert "try again in a moment" not in page.locator("body").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "lab-after-a-503-retry.png"))
