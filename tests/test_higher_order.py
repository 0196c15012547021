"""Derivatives of derivatives: backward formulas are written with gradwalk's own ops, so
``create_graph=True`` records a differentiable graph (facts §6)."""
import pytest

import gradwalk
import torch
from parity import assert_same, graph_structure, run_both


def derivatives(lib, f, x0, order=3):
    x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
    y = f(lib, x)
    out = [y]
    for _ in range(order):
        (g,) = lib.autograd.grad(out[-1], x, create_graph=True)
        out.append(g)
    return out[1:]


FUNCTIONS = {
    "cube": (lambda lib, x: x ** 3, 2.0),
    "tanh": (lambda lib, x: lib.tanh(x), 0.3),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), -0.4),
    "exp_sin": (lambda lib, x: lib.exp(lib.sin(x)), 0.7),
    "log_cos": (lambda lib, x: lib.log(x) * lib.cos(x), 1.3),
    "div_sqrt": (lambda lib, x: 1 / lib.sqrt(x) + x / (x + 1), 0.8),
    "pow_tensor": (lambda lib, x: x ** (x * 0.5), 1.4),
    "rpow": (lambda lib, x: 2 ** x - x.neg().exp(), 0.5),
    "relu_square": (lambda lib, x: lib.relu(x) * x, 0.6),
    "mean_of_vector": (lambda lib, x: (x * lib.arange(1.0, 4.0, dtype=lib.float64)).pow(2).mean(), 0.5),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_first_second_third_derivatives_match_pytorch(name):
    f, x0 = FUNCTIONS[name]
    ours, theirs = derivatives(gradwalk, f, x0), derivatives(torch, f, x0)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_same(a.detach(), b.detach(), rtol=1e-10)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__, k


def test_cube_derivatives_are_12_12_6():
    d1, d2, d3 = derivatives(gradwalk, lambda lib, x: x ** 3, 2.0)
    assert (d1.item(), d2.item(), d3.item()) == (12.0, 12.0, 6.0)
    assert repr(d1) == "tensor(12., dtype=torch.float64, grad_fn=<MulBackward0>)"


def test_graph_of_the_first_derivative_matches_pytorch():
    """``d(x**3)/dx``: MulBackward0 <- MulBackward1 <- PowBackward0; ``d tanh/dx``:
    TanhBackwardBackward0 <- TanhBackward0."""
    for f in (lambda lib, x: x ** 3, lambda lib, x: lib.tanh(x), lambda lib, x: x * x * x,
              lambda lib, x: lib.sin(x).exp()):
        ours, theirs = derivatives(gradwalk, f, 0.5, 1)[0], derivatives(torch, f, 0.5, 1)[0]
        assert graph_structure(ours) == graph_structure(theirs)


def test_create_graph_backward_gives_grad_with_copy_backwards():
    gw, pt = run_both("""
        import warnings
        x = torch.tensor(2.0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x ** 3).backward(create_graph=True)
        first = x.grad
        name = type(x.grad.grad_fn).__name__
        (g2,) = torch.autograd.grad(x.grad, x)
    """)
    assert gw["name"] == pt["name"] == "CopyBackwards"
    assert_same(gw["first"].detach(), pt["first"].detach())
    assert_same(gw["g2"], pt["g2"])


def test_nodes_made_during_create_graph_consume_sequence_numbers():
    """Facts §2: grad(create_graph=True) of ``x**3`` creates PowBackward0, MulBackward1,
    MulBackward0 with the next three numbers."""
    for ns in run_both("""
        x = torch.tensor(2.0, requires_grad=True)
        f = x ** 3
        s = f.sum()
        (g,) = torch.autograd.grad(s, x, create_graph=True)
        after = (x * 1).grad_fn._sequence_nr()
        start = s.grad_fn._sequence_nr()
    """):
        assert ns["g"].grad_fn._sequence_nr() == ns["start"] + 3
        assert ns["after"] == ns["start"] + 4


def test_hessian_vector_product_matches_pytorch():
    gw, pt = run_both("""
        W = torch.tensor([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]], dtype=torch.float64, requires_grad=True)
        x = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
        v = torch.tensor([[1.0, 0.5, -1.0], [0.2, 0.3, 0.4]], dtype=torch.float64)
        loss = torch.tanh(W @ x).pow(2).sum() + (W * W).sum().sqrt()
        (g,) = torch.autograd.grad(loss, W, create_graph=True)
        (hv,) = torch.autograd.grad((g * v).sum(), W)
    """)
    assert_same(gw["g"].detach(), pt["g"].detach(), rtol=1e-12)
    assert_same(gw["hv"], pt["hv"], rtol=1e-10)


def test_second_derivatives_through_broadcast_and_reductions():
    gw, pt = run_both("""
        a = torch.tensor([[0.5], [1.5]], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([0.2, -0.3, 0.9], dtype=torch.float64, requires_grad=True)
        y = (a * b).exp().sum(1).log().mean() + (a - b).pow(2).amax()
        ga, gb = torch.autograd.grad(y, [a, b], create_graph=True)
        gga, ggb = torch.autograd.grad(ga.sum() + (gb * gb).sum(), [a, b])
    """)
    for name in ("gga", "ggb"):
        assert_same(gw[name], pt[name], rtol=1e-10)


def test_second_derivative_of_softmax_cross_entropy():
    gw, pt = run_both("""
        z = torch.tensor([[0.3, -1.2, 0.8], [1.1, 0.5, -0.4]], dtype=torch.float64, requires_grad=True)
        loss = -(z.log_softmax(1) * z.softmax(1).detach()).sum()
        (g,) = torch.autograd.grad(loss, z, create_graph=True)
        (h,) = torch.autograd.grad(g.pow(2).sum(), z)
    """)
    assert_same(gw["h"], pt["h"], rtol=1e-10)


def test_without_create_graph_gradients_do_not_require_grad():
    for lib in (gradwalk, torch):
        x = lib.tensor(2.0, requires_grad=True)
        (g,) = lib.autograd.grad(x ** 3, x)
        assert not g.requires_grad and g.grad_fn is None
