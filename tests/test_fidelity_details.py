"""Small details a user can see: a unit that passes no gradient passes exactly 0 (relu and clamp
mask with ``where``, so a negative or nan upstream gradient leaves no ``-0.`` or ``nan``), and
matrix products refuse mixed dtypes with PyTorch's words."""
import pytest
import torch

import gradwalk

CASES = {
    "relu": lambda x: x.relu(),
    "clamp(0, 3)": lambda x: x.clamp(0, 3),
    "clamp(min=0)": lambda x: x.clamp(min=0),
    "clamp(max=0)": lambda x: x.clamp(max=0),
    "clamp_min": lambda x: x.clamp_min(0.0),
    "clamp_max": lambda x: x.clamp_max(0.0),
}


@pytest.mark.parametrize("upstream", [-3.0, float("nan")])
@pytest.mark.parametrize("name", CASES)
def test_masked_units_pass_exactly_zero(name, upstream):
    def grad_repr(lib):
        x = lib.tensor([-1.0, 2.0, 5.0], requires_grad=True)
        (CASES[name](x) * upstream).sum().backward()
        return repr(x.grad)

    assert grad_repr(gradwalk) == grad_repr(torch)


MIXED_DTYPE_PRODUCTS = {
    "2d@2d": lambda lib: lib.ones(2, 3) @ lib.ones(3, 2, dtype=lib.float64),
    "mm double float": lambda lib: lib.mm(lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 2)),
    "long@float": lambda lib: lib.ones(2, 3, dtype=lib.int64) @ lib.ones(3, 2),
    "dot": lambda lib: lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "2d@1d": lambda lib: lib.ones(2, 3, dtype=lib.float64) @ lib.ones(3),
    "1d@2d": lambda lib: lib.ones(3) @ lib.ones(3, 2, dtype=lib.float64),
    "bmm": lambda lib: lib.bmm(lib.ones(2, 2, 3, dtype=lib.float64), lib.ones(2, 3, 2)),
    "3d@3d": lambda lib: lib.ones(2, 2, 3) @ lib.ones(2, 3, 2, dtype=lib.float64),
    "addmm bias": lambda lib: lib.addmm(lib.ones(2, dtype=lib.float64), lib.ones(2, 3), lib.ones(3, 2)),
    "addmm mat1": lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 2)),
}


@pytest.mark.parametrize("name", MIXED_DTYPE_PRODUCTS)
def test_matrix_products_refuse_mixed_dtypes_with_pytorchs_words(name):
    """Matrix products never promote: float32 @ float64 is an error, worded per ATen kernel."""
    def message(lib):
        with pytest.raises(RuntimeError) as info:
            MIXED_DTYPE_PRODUCTS[name](lib)
        return str(info.value)

    assert message(gradwalk) == message(torch)


def test_inf_minus_inf_is_nan_without_a_warning_as_torch():
    """IEEE results (nan, inf) come silently from gradwalk's ops, forward and backward, as from
    PyTorch's; the user's own NumPy code still warns. Run in a fresh interpreter: pytest imports
    gradwalk inside its own ``catch_warnings``, which drops the filter gradwalk installs."""
    import subprocess
    import sys

    snippet = """
import numpy as np
import {lib} as torch
x = torch.tensor([float("inf"), 1.0, -float("inf")], requires_grad=True)
y = (x - x) + x * 1e38 * 1e38 + torch.nn.functional.softmax(x.reshape(1, 3), 1).sum()
y.sum().backward()
print([str(v) for v in y.tolist()], [str(v) for v in x.grad.tolist()])
"""
    runs = {lib: subprocess.run([sys.executable, "-W", "default", "-c", snippet.format(lib=lib)],
                                capture_output=True, text=True, check=True) for lib in ("torch", "gradwalk")}
    assert runs["gradwalk"].stdout == runs["torch"].stdout
    assert runs["gradwalk"].stderr == ""
    numpy_own = subprocess.run([sys.executable, "-W", "default", "-c",
                                "import gradwalk, numpy as np; np.array([np.inf]) - np.inf"],
                               capture_output=True, text=True, check=True)
    assert "RuntimeWarning: invalid value encountered in subtract" in numpy_own.stderr


def test_calling_a_node_returns_a_tensor_for_one_input_and_a_tuple_for_more_as_torch():
    results = {}
    for lib in (gradwalk, torch):
        x = lib.tensor(0.5, requires_grad=True)
        one = lib.tanh(x).grad_fn(lib.tensor(1.0))
        two = (x * x).grad_fn(lib.tensor(1.0))
        results[lib.__name__] = (type(one).__name__, type(two).__name__, len(two),
                                 one.detach().item(), two[0].detach().item())
    assert results["gradwalk"] == results["torch"]


def test_cpp_nodes_name_themselves_as_pytorch_does():
    """PyTorch's nodes written in C++ by hand carry their namespace in ``name()`` (and so in the
    profiler's events); the generated ones do not."""
    def names(lib):
        a = lib.zeros(3, requires_grad=True)
        copied = a.clone()
        copied.copy_(lib.ones(3, requires_grad=True))
        sliced = a * 1
        sliced[0] = 5.0
        total = a.sum()
        return (copied.grad_fn.name(), sliced.grad_fn.name(), total.grad_fn.name(),
                total.grad_fn.next_functions[0][0].name(), repr(copied.grad_fn).split(" object")[0])

    assert names(gradwalk) == names(torch) == (
        "torch::autograd::CopyBackwards", "torch::autograd::CopySlices", "SumBackward0",
        "torch::autograd::AccumulateGrad", "<CopyBackwards")
