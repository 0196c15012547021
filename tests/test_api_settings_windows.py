"""The first lines of many training scripts (reproducibility switches, matmul precision) and the
window functions of signal code, beside PyTorch."""
import warnings

import numpy as np
import pytest
import torch

import gradwalk
from parity import assert_same_error, run_both


@pytest.fixture(autouse=True)
def restore_switches():
    yield
    for library in (torch, gradwalk):
        library.use_deterministic_algorithms(False)
        library.set_float32_matmul_precision("highest")
        library.set_warn_always(False)


def test_reproducibility_switches_read_back_as_in_pytorch():
    gw, pt = run_both("""
        before = torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode()
        torch.use_deterministic_algorithms(True)
        strict = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
        torch.use_deterministic_algorithms(True, warn_only=True)
        warn_only = torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_deterministic_debug_mode()
        torch.set_deterministic_debug_mode("error")
        error = torch.get_deterministic_debug_mode(), torch.is_deterministic_algorithms_warn_only_enabled()
        torch.set_deterministic_debug_mode(0)
        off = torch.are_deterministic_algorithms_enabled()
        torch.set_float32_matmul_precision("high")
        precision = torch.get_float32_matmul_precision()
        torch.set_warn_always(True)
        always = torch.is_warn_always_enabled()
    """)
    for name in ("before", "strict", "warn_only", "error", "off", "precision", "always"):
        assert gw[name] == pt[name], name


@pytest.mark.parametrize("call", [
    "torch.use_deterministic_algorithms('yes')",
    "torch.use_deterministic_algorithms(True, warn_only=1)",
    "torch.set_deterministic_debug_mode('x')",
    "torch.set_deterministic_debug_mode(5)",
    "torch.set_float32_matmul_precision(3)",
    "torch.hann_window(-1)",
    "torch.hann_window(3, dtype=torch.int64)",
])
def test_bad_settings_are_refused_with_pytorchs_message(call):
    assert_same_error(call)


def test_an_unknown_matmul_precision_warns_and_changes_nothing():
    for library in (torch, gradwalk):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            library.set_float32_matmul_precision("low")
        assert "low is not one of 'highest', 'high', or 'medium'" in str(caught[0].message)
        assert library.get_float32_matmul_precision() == "highest"


def test_typename_names_tensors_by_legacy_type_and_objects_by_qualified_name():
    gw, pt = run_both("""
        names = [torch.typename(v) for v in (torch.ones(2), torch.ones(2, dtype=torch.int64),
                 torch.ones(2, dtype=torch.bool), 3, None, torch.nn.Linear(2, 2), torch.nn.Linear)]
    """)
    assert gw["names"] == pt["names"]


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "bartlett_window", "blackman_window"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_functions_give_pytorchs_values_bit_for_bit(name, periodic, dtype):
    for length in (0, 1, 2, 5, 10, 51, 400):
        ours = getattr(gradwalk, name)(length, periodic, dtype=getattr(gradwalk, dtype)).numpy()
        theirs = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype)).numpy()
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert np.array_equal(ours, theirs), (length, np.mean(ours == theirs))


def test_a_window_made_with_requires_grad_is_a_leaf():
    gw, pt = run_both("w = torch.hann_window(4, requires_grad=True)\nleaf = w.is_leaf, w.requires_grad, w.grad_fn")
    assert gw["leaf"] == pt["leaf"] == (True, True, None)


def test_clamp_and_clip_in_place_as_functions_and_is_inference():
    gw, pt = run_both("""
        x = torch.tensor([-2., 3.])
        same = torch.clamp_(x, 0, 1) is x
        torch.clip_(x, 0.5)
        with torch.inference_mode():
            y = torch.ones(1)
        flags = torch.is_inference(x), torch.is_inference(y)
    """)
    assert gw["same"] and pt["same"]
    assert gw["x"].tolist() == pt["x"].tolist()
    assert gw["flags"] == pt["flags"] == (False, True)
