"""Anomaly detection: nodes remember the forward stack that made them; a NaN produced in
backward raises; an error in a node warns with that node's forward traceback."""
import warnings


ANOMALY_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                   "should only be enabled for debugging.")


class _AnomalyState:
    enabled = False
    check_nan = True

    def warn_for(self, node):
        stack = node._anomaly
        if stack is None:
            return
        import traceback

        trace = "".join(traceback.format_list(stack))
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                      f"{trace}", UserWarning, stacklevel=2)


_anomaly = _AnomalyState()


def is_anomaly_enabled():
    return _anomaly.enabled


def is_anomaly_check_nan_enabled():
    return _anomaly.check_nan


def set_detect_anomaly(mode, check_nan=True):
    from ..ops.core import observers

    _anomaly.enabled = bool(mode)
    _anomaly.check_nan = bool(check_nan)
    observers.anomaly = _anomaly.enabled
    observers.refresh()


class set_detect_anomaly_ctx:
    pass


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn(ANOMALY_WARNING, UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        set_detect_anomaly(True, self.check_nan)

    def __exit__(self, *exc):
        set_detect_anomaly(*self.prev)
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper
