"""Fixtures for the figures' tests: the figure routes in a bare app (``client``), the whole lab
on a real port (``live_server``: server.py's app with its worker pool, uvicorn in a thread), and
Playwright on Debian's chromium (never a downloaded browser). A missing browser or page bundle
makes the browser tests fail, not skip.
"""
import contextlib
import socket
import threading
import time
import warnings
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette

with warnings.catch_warnings():  # Starlette would like httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from gradwalk.lab import figure_routes
from gradwalk.lab.server import STATIC_DIR, create_app

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-pings",
                  "--dns-prefetch-disable"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def free_port():
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1 in a daemon thread, for as long as the block runs."""

    def __init__(self, app):
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(800):
            if self.server.started:
                break
            time.sleep(0.025)
        else:
            raise RuntimeError("uvicorn did not start")
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


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
