"""Fixtures for the figures' tests: the figure routes in a bare app (``client``), the whole lab
on a real port (``live_server``: server.py's app with its worker pool, uvicorn in a thread), and
Playwright on Debian's chromium (never a downloaded browser). A missing browser or page bundle
makes the browser tests fail, not skip.
"""
import warnings
from pathlib import Path

import pytest
from browser_support import CHROMIUM, CHROMIUM_FLAGS, ServerThread
from starlette.applications import Starlette

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from gradwalk.lab import figure_routes
from gradwalk.lab.server import STATIC_DIR, create_app

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="session")
def client():
    """The figure routes alone; the tools (compare, profile) run in a thread here."""
    with TestClient(Starlette(routes=figure_routes.routes)) as c:
        yield c


@pytest.fixture(scope="session")
def live_server():
    assert (STATIC_DIR / "main.js").is_file(), (
        "the page bundle is missing: cd web && npm ci && npm run build")
    with ServerThread(create_app(pool_size=1)) as base:
        yield base


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
