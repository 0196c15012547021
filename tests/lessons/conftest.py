"""Fixtures for the lesson pages' browser tests: the whole lab on a real loopback port (uvicorn in
a thread, as in tests/lab/conftest.py) and Playwright on Debian's chromium. A missing browser or
page bundle makes the tests fail, not skip."""
from pathlib import Path

import pytest
from browser_support import CHROMIUM, CHROMIUM_FLAGS, ServerThread

from gradwalk.lab.server import create_app

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="session")
def live_server():
    """The real server (lessons, figures, runs) on a free loopback port: its base URL."""
    with ServerThread(create_app(allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True,
            "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
