"""Anomaly detection (facts §10): find the forward line behind a bad backward.

    with torch.autograd.detect_anomaly():
        y = x.sqrt()            # x = 0: fine forward, inf * 0 = nan backward
        (y * 0).sum().backward()
    # UserWarning: Error detected in SqrtBackward0. Traceback of forward call that caused the error:
    #   File "example.py", line 2, in <module>
    #     y = x.sqrt()
    # RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

While it is on, every node keeps the Python stack of the moment it was made
(``node.metadata["traceback_"]``, stored by ``ops/core.py`` and ``record``); the engine notes
which node it is running, so a node made by a backward formula (``create_graph=True``) also
keeps its parent, the node whose formula made it (``node.metadata["parent_"]``); after each node
runs, its outputs are checked for NaN; and when a node fails, the warning shows where in the
user's code that node was made (gradwalk's own frames left out, as PyTorch's C++ frames are),
then one more warning per ancestor: "Previous calculation was induced by PowBackward0. ..."
"""
import os
import sys
import threading
import traceback
import warnings

ANOMALY_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                   "should only be enabled for debugging.")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class _Running(threading.local):
    node = None  # the node the engine is evaluating in this thread (only in anomaly mode)


class _AnomalyState:
    enabled = False
    check_nan = True
    running = _Running()

    def record(self, node, skip=1):
        """Keep the stack of this moment on a new node, and the node being run, if any, as its
        parent (PyTorch's Node constructor in anomaly mode: store_stack, assign_parent)."""
        node._anomaly = traceback.extract_stack()[:-skip]
        metadata = node.metadata
        metadata["traceback_"] = traceback.format_list(node._anomaly)
        parent = self.running.node
        if parent is not None:
            metadata["parent_"] = parent

    def evaluate(self, task, fn, inputs):
        """The engine's ``evaluate_function`` in anomaly mode (PyTorch's NodeGuard and
        ``set_exception``): ``fn`` is the running node while it runs, and any error warns."""
        running = self.running
        previous = running.node
        running.node = fn
        try:
            task.evaluate_function(fn, inputs, watched=True)
        except Exception:
            self.warn_for(fn)
            raise
        finally:
            running.node = previous

    def warn_for(self, node):
        """The UserWarnings PyTorch prints before a node's error propagates: where the node was
        made, then where each node whose backward made it (its parent, grandparent...) was made."""
        _warn_stack(node, is_parent=False)
        parent = node._metadata.get("parent_") if node._metadata else None
        while parent is not None:
            _warn_stack(parent, is_parent=True)
            parent = parent._metadata.get("parent_") if parent._metadata else None


def _warn_stack(node, is_parent):
    stack = node._anomaly
    if stack is None:
        message = (f"Error detected in {node.name()}. No forward pass information available. "
                   "Enable detect anomaly during forward pass for more information.")
    else:
        user_frames = [frame for frame in stack
                       if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)]
        trace = "".join(traceback.format_list(user_frames))
        if is_parent:
            message = (f"\n\nPrevious calculation was induced by {node.name()}. Traceback of "
                       f"forward call that induced the previous calculation:\n{trace}")
        else:
            message = (f"Error detected in {node.name()}. Traceback of forward call that caused "
                       f"the error:\n{trace}")
    try:
        warnings.warn(message, UserWarning, stacklevel=4)
    except Warning:  # warnings turned into errors: printed instead, as PyTorch's C++ handler
        # prints a warning it cannot raise while an error is already on its way out
        print(f"UserWarning: {message}", file=sys.stderr)


_anomaly = _AnomalyState()


def is_anomaly_enabled():
    return _anomaly.enabled


def is_anomaly_check_nan_enabled():
    return _anomaly.check_nan


def _set_anomaly(mode, check_nan):
    from ..ops.core import observers

    _anomaly.enabled = bool(mode)
    _anomaly.check_nan = bool(check_nan)
    observers.anomaly = _anomaly.enabled
    observers.refresh()


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` switches anomaly mode on (no warning); used as a context
    manager it switches back on exit, as PyTorch's does."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _set_anomaly(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set_anomaly(*self.prev)
        return False


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on, with PyTorch's warning."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn(ANOMALY_WARNING, UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _set_anomaly(True, self.check_nan)

    def __exit__(self, *exc):
        _set_anomaly(*self.prev)
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper
