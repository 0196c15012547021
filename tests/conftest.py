"""pytest configuration for the core tests. The side-by-side helpers live in ``parity.py``;
they are re-exported here for tests written as ``from conftest import run_both``."""
from parity import *  # noqa: F401,F403
from parity import (LIBRARIES, all_nodes, assert_same, assert_same_error,  # noqa: F401
                    assert_same_order, central_difference, dtype_name, gradwalk_functional,
                    graph_structure, message, node_label, raised_by, record_order, run_both,
                    run_in, to_numpy)
