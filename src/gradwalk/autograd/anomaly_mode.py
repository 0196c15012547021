"""Anomaly detection (facts §10): find the forward line behind a bad backward.

    with torch.autograd.detect_anomaly():
        y = x.sqrt()            # x = 0: fine forward, inf * 0 = nan backward
        (y * 0).sum().backward()
    # UserWarning: Error detected in SqrtBackward0. Traceback of forward call that caused the error:
    #   File "example.py", line 2, in <module>
    #     y = x.sqrt()
    # RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.

While it is on, every node an op creates keeps the Python stack of that moment
(``node.metadata["traceback_"]``, stored by ``ops/core.py``); after each node runs, the engine
checks its outputs for NaN (``engine.py``); and when a node fails, the warning shows where in the
user's code that node was made (gradwalk's own frames left out, as PyTorch's C++ frames are).
"""
import os
import traceback
import warnings

ANOMALY_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                   "should only be enabled for debugging.")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class _AnomalyState:
    enabled = False
    check_nan = True

    def warn_for(self, node):
        """The UserWarning PyTorch prints before a node's error propagates."""
        stack = node._anomaly
        if stack is None:
            return
        user_frames = [frame for frame in stack
                       if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)]
        trace = "".join(traceback.format_list(user_frames))
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                      f"error:\n{trace}", UserWarning, stacklevel=2)


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
