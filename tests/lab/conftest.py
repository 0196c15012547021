"""Fixtures for the lab's tests: the app in-process (``client``), the app on a real port
(``live_server``, uvicorn in a thread) and Playwright on Debian's chromium.

Playwright never downloads a browser here: ``browser_type_launch_args`` points it at
/usr/bin/chromium (scripts/setup.sh installs it). A missing browser or page bundle makes the
browser tests fail, not skip.
"""
import contextlib
import socket
import threading
import time
import warnings

import pytest
import uvicorn

with warnings.catch_warnings():  # Starlette 1.10 would like httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from gradwalk.lab.server import create_app

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-pings",
                  "--dns-prefetch-disable"]


def free_port():
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1 in a daemon thread, for as long as the block runs."""

    def __init__(self, app):
        self.app = app
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(400):
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


@pytest.fixture(scope="session")
def live_server():
    """The real server on a free loopback port: its base URL."""
    with ServerThread(create_app(allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True,
            "args": CHROMIUM_FLAGS}
