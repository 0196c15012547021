"""A unit that passes no gradient passes exactly 0: relu and clamp mask with ``where``, so a
negative (or nan) upstream gradient does not leave ``-0.`` (or ``nan``) behind, as in PyTorch."""
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
