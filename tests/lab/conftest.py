"""Fixtures for the lab's tests: the app in-process (``client``), the app on a real port
(``live_server``, uvicorn in a thread) and Playwright on Debian's chromium.

Playwright never downloads a browser here: ``browser_type_launch_args`` points it at
/usr/bin/chromium (scripts/setup.sh installs it). A missing browser or page bundle makes the
browser tests fail, not skip.
"""
import warnings

import pytest
from browser_support import ServerThread

with warnings.catch_warnings():  # Starlette 1.10 would like httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from gradwalk.lab.server import create_app


@pytest.fixture(scope="session")
def serve():
    """``with serve(app) as url:`` runs ``app`` on a real loopback port for the block."""
    return ServerThread


@pytest.fixture(scope="session")
def lab_app():
    return create_app()


@pytest.fixture(scope="session")
def client(lab_app):
    """The app in-process, its worker pool started (one pool for the whole session)."""
    with TestClient(lab_app) as c:
        yield c
