"""gradcheck / gradgradcheck beside PyTorch's, and gradcheck_sweep (the step-size figure)."""
import math
import warnings

import numpy as np
import pytest
import torch  # real PyTorch: these tests compare against it and must fail without it

import gradwalk
from gradwalk.autograd import gradcheck, gradcheck_sweep, gradgradcheck
from gradwalk.autograd.gradcheck import GradcheckError
from conftest import assert_same_error, run_both

WRONG_SIN = """
class WrongSin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos() * 1.5   # wrong by 50%
x = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
"""


def test_the_defaults_are_pytorchs():
    import inspect

    pairs = ((gradcheck, torch.autograd.gradcheck), (gradgradcheck, torch.autograd.gradgradcheck))
    for ours, theirs in pairs:
        mine = {k: v.default for k, v in inspect.signature(ours).parameters.items()}
        torchs = {k: v.default for k, v in inspect.signature(theirs).parameters.items()}
        assert mine == torchs
    assert inspect.signature(gradcheck).parameters["eps"].default == 1e-6
    assert inspect.signature(gradcheck).parameters["atol"].default == 1e-5
    assert inspect.signature(gradcheck).parameters["rtol"].default == 1e-3


@pytest.mark.parametrize("expression", [
    "torch.tanh(x)", "(x ** 3).sum()", "(x.exp() * x.sin(), x.sum())", "x.norm()", "x.softmax(0)",
])
def test_correct_gradients_pass_in_both_modes(expression):
    gw, pt = run_both(f"""
x = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
f = lambda x: {expression}
ok = torch.autograd.gradcheck(f, (x,), check_forward_ad=True)
ok2 = torch.autograd.gradgradcheck(f, (x,))
""")
    assert gw["ok"] is pt["ok"] is True
    assert gw["ok2"] is pt["ok2"] is True


def test_a_wrong_gradient_raises_pytorchs_message():
    assert_same_error(WRONG_SIN + "torch.autograd.gradcheck(WrongSin.apply, (x,))")
    gw, _ = run_both(WRONG_SIN + """
try:
    torch.autograd.gradcheck(WrongSin.apply, (x,))
except RuntimeError as e:
    error = e
""")
    assert type(gw["error"]) is GradcheckError and isinstance(gw["error"], RuntimeError)
    assert str(gw["error"]).startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")


def test_raise_exception_false_returns_false():
    gw, pt = run_both(WRONG_SIN + "ok = torch.autograd.gradcheck(WrongSin.apply, (x,), "
                                  "raise_exception=False)")
    assert gw["ok"] is pt["ok"] is False


def test_forward_mode_is_checked_too():
    code = """
class WrongJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x.exp()
    @staticmethod
    def backward(ctx, g):
        return g
    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return t * x.exp() * 2
x = torch.tensor([0.1, 0.2], dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
"""
    import gradwalk.autograd.forward_ad  # noqa: F401

    assert_same_error(code.replace("torch.autograd.forward_ad", "torch.autograd.forward_ad"))


def test_no_input_requiring_grad_is_a_value_error():
    assert_same_error("torch.autograd.gradcheck(torch.sin, (torch.ones(2, dtype=torch.float64),))")


def test_single_precision_warns_as_pytorch_does():
    messages = []
    for lib in (gradwalk, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lib.sin, (lib.tensor([0.3], requires_grad=True),), raise_exception=False)
        messages.append([str(w.message) for w in caught if w.category is UserWarning])
    assert messages[0] == messages[1]
    assert messages[0][0].startswith("Input #0 requires gradient and is not a double precision")


def test_gradgradcheck_catches_a_wrong_second_derivative():
    code = """
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x.detach() ** 2   # right value, but its own derivative is lost
x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
ok1 = torch.autograd.gradcheck(Cube.apply, (x,))
ok2 = torch.autograd.gradgradcheck(Cube.apply, (x,), raise_exception=False)
"""
    gw, pt = run_both(code)
    assert (gw["ok1"], gw["ok2"]) == (pt["ok1"], pt["ok2"]) == (True, False)


# ---------------------------------------------------------------- the seeds' numbers

def test_the_power_rule_numeric_check_from_the_seeds():
    # ((2.001)^3 - (1.999)^3) / 0.002 = 12.000001: central differences agree with 3 * 2**2 = 12
    x = gradwalk.tensor(2.0, dtype=gradwalk.float64, requires_grad=True)
    (x ** 3).backward()
    assert x.grad.item() == 12.0
    sweep = gradcheck_sweep(lambda t: t ** 3, 2.0, hs=[0.001])
    assert sweep["exact"] == 12.0
    assert abs(sweep["central_errors"][0] - 1e-6) < 1e-9


def test_tanh_slope_at_two():
    sweep = gradcheck_sweep(gradwalk.tanh, 2.0)
    assert round(sweep["exact"], 4) == 0.0707
    assert abs(sweep["exact"] - (1 - math.tanh(2.0) ** 2)) < 1e-15


# ---------------------------------------------------------------- gradcheck_sweep

def test_sweep_shows_truncation_then_cancellation():
    sweep = gradcheck_sweep(lambda t: t.sin() * t, 0.7)
    hs = sweep["hs"]
    assert hs[0] == 1e-1 and hs[-1] == pytest.approx(1e-14) and len(hs) == 27
    assert all(a > b for a, b in zip(hs, hs[1:]))
    best = sweep["best_h"]
    # one-sided differences do best near sqrt(eps) ~ 1e-8, central ones near eps**(1/3) ~ 1e-5
    assert 1e-10 <= best["forward"] <= 1e-6
    assert 1e-7 <= best["central"] <= 1e-3
    assert sweep["best_error"]["central"] < sweep["best_error"]["forward"]
    central = dict(zip(hs, sweep["central_errors"]))
    # truncation side: shrinking h by 10x shrinks the central error by ~100x (error ~ h**2)
    assert central[1e-1] / central[1e-2] == pytest.approx(100, rel=0.1)
    # cancellation side: the smallest h is far worse than the best one
    assert central[hs[-1]] > 1000 * sweep["best_error"]["central"]
    regions = sweep["regions"]["central"]
    assert regions["truncation"] == [best["central"], 1e-1]
    assert regions["cancellation"][1] < best["central"]


def test_sweep_is_json_friendly_and_works_on_tensors():
    import json

    x = gradwalk.tensor([0.5, -0.2], dtype=gradwalk.float64)
    sweep = gradcheck_sweep(lambda t: (t.exp() * t).sum(), x, hs=[1e-2, 1e-4, 1e-6])
    assert json.loads(json.dumps(sweep)) == sweep
    exact = sum(math.exp(v) * (1 + v) for v in (0.5, -0.2))
    assert sweep["exact"] == pytest.approx(exact, rel=1e-14)
    assert sweep["dtype"] == "float64" and sweep["machine_epsilon"] == np.finfo(np.float64).eps


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(GradcheckError):
        x = gradwalk.tensor([1.0], dtype=gradwalk.float64, requires_grad=True)
        gradcheck(lambda t: t.detach() * t, (x,))


def test_gradgradcheck_of_a_scalar_output_perturbs_its_0dim_grad_output():
    """The grad_outputs gradgradcheck makes for a 0-dim output are 0-dim tensors; the numerical
    Jacobian must perturb them (their data may be held as a NumPy scalar)."""
    x = gradwalk.tensor([0.3, 0.7], dtype=gradwalk.float64, requires_grad=True)
    assert gradwalk.autograd.gradgradcheck(lambda x: (x ** 3).mean(), (x,))
