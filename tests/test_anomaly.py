"""Anomaly mode names the forward line whose node made the NaN (facts §10), as PyTorch does."""
import warnings

import numpy as np
import pytest
import torch

import gradwalk


def run_anomalous(lib, make_output, x_value):
    """Run backward under detect_anomaly; return (error message, warning messages)."""
    x = lib.tensor(x_value, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            out = make_output(lib, x)
            with pytest.raises(RuntimeError) as info:
                out.backward()
    return str(info.value), [str(w.message) for w in caught]


def sqrt_at_zero(lib, x):
    y = x.sqrt()  # the line the warning must point at
    return (y * 0).sum()


def log_of_zero(lib, x):
    y = lib.log(x)  # the line the warning must point at
    return (y * 0).sum()


def zero_over_zero(lib, x):
    y = x / x  # the line the warning must point at
    return y.sum()


@pytest.mark.parametrize("make_output, node, output", [
    (sqrt_at_zero, "SqrtBackward0", 0), (log_of_zero, "LogBackward0", 0),
    (zero_over_zero, "DivBackward0", 1)])  # x/x at 0: d/dself = 1/0 = inf, d/dother = -0/0 = nan
def test_anomaly_mode_finds_the_op_that_made_the_nan(make_output, node, output):
    error, messages = run_anomalous(gradwalk, make_output, [0.0, 1.0])
    t_error, t_messages = run_anomalous(torch, make_output, [0.0, 1.0])
    assert error == t_error == f"Function '{node}' returned nan values in its {output}th output."
    assert messages[0] == t_messages[0] == (
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
        "be enabled for debugging.")
    ours = [m for m in messages if m.startswith("Error detected")]
    theirs = [m for m in t_messages if m.startswith("Error detected")]
    assert len(ours) == len(theirs) == 1
    ours, theirs = ours[0], theirs[0]
    header = f"Error detected in {node}. Traceback of forward call that caused the error:\n"
    assert ours.startswith(header) and theirs.startswith(header)
    # the innermost frame: this file, the line marked in make_output, in both libraries
    assert ours.rstrip().splitlines()[-1].strip().endswith("# the line the warning must point at")
    assert "# the line the warning must point at" in theirs
    assert "src/gradwalk" not in ours  # gradwalk's own frames are left out


def test_without_anomaly_mode_the_nan_lands_in_grad():
    x = gradwalk.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0.0
    assert x.sqrt().grad_fn.metadata == {}


def test_nodes_keep_the_forward_traceback_and_modes_restore():
    assert not gradwalk.is_anomaly_enabled()
    with gradwalk.autograd.set_detect_anomaly(True):
        assert gradwalk.is_anomaly_enabled()
        x = gradwalk.tensor(2.0, requires_grad=True)
        y = x * 3
    assert not gradwalk.is_anomaly_enabled()
    assert any("y = x * 3" in frame for frame in y.grad_fn.metadata["traceback_"])
    gradwalk.autograd.set_detect_anomaly(True, check_nan=False)
    try:
        assert gradwalk.is_anomaly_enabled() and not gradwalk.is_anomaly_check_nan_enabled()
        z = gradwalk.tensor([0.0], requires_grad=True)
        z.sqrt().mul(0).sum().backward()  # check_nan=False: no error, the NaN lands in .grad
        assert np.isnan(z.grad.numpy()).all()
    finally:
        gradwalk.autograd.set_detect_anomaly(False)
    assert gradwalk.is_anomaly_check_nan_enabled()


def test_an_error_in_a_node_warns_with_its_forward_line():
    x = gradwalk.tensor(2.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with gradwalk.autograd.detect_anomaly():
            y = x.exp()  # made here
            y.add_(1)  # ExpBackward0 saved its result: backward must fail
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.backward()
    warning = [str(w.message) for w in caught if "Error detected" in str(w.message)]
    assert warning and "y = x.exp()  # made here" in warning[0]
