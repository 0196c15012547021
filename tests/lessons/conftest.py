"""Fixtures for the lesson pages' browser tests; the live server and Playwright on Debian's
chromium come from tests/conftest.py. A missing browser or page bundle makes the tests fail, not
skip."""
from pathlib import Path

import pytest

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
