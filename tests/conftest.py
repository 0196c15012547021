"""pytest configuration for the core tests. The side-by-side helpers live in ``parity.py``;
they are re-exported here for tests written as ``from conftest import run_both``.

The browser tests' two shared fixtures live here too (tests/lab, tests/lessons; tests/lab_figures
overrides ``live_server`` with a one-worker app): the whole lab on a free loopback port, and
Playwright pointed at Debian's chromium (never a downloaded browser)."""
import pytest
from browser_support import CHROMIUM, CHROMIUM_FLAGS, ServerThread

from parity import *  # noqa: F401,F403
from parity import (LIBRARIES, all_nodes, assert_same, assert_same_error,  # noqa: F401
                    assert_same_order, central_difference, dtype_name, gradwalk_functional,
                    graph_structure, message, node_label, raised_by, record_order, run_both,
                    run_in, to_numpy)


@pytest.fixture(scope="session")
def live_server():
    """The real server (lessons, figures, runs) on a free loopback port: its base URL."""
    from gradwalk.lab.server import create_app

    with ServerThread(create_app(allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True,
            "args": CHROMIUM_FLAGS}
