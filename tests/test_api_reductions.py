"""Products, reductions, statistics and linear algebra that scripts call (issue 12), each run
beside PyTorch: values, dtype, shape, the backward node's name and the gradients."""
import numpy as np
import pytest
import torch

import gradwalk


def _both(*shapes, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [gradwalk.tensor(a, requires_grad=True) for a in arrays])


def _same(f, shapes, dtype="float64", grad=True, seed=0, atol=1e-6):
    """Run ``f(lib, *inputs)`` under both libraries; compare result, node name and gradients."""
    T, G = _both(*shapes, dtype=dtype, seed=seed)
    expected, got = f(torch, *T), f(gradwalk, *G)
    if isinstance(expected, tuple):
        expected, got = expected[0], got[0]
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), atol=atol, equal_nan=True)
    name = expected.grad_fn.name() if expected.grad_fn is not None else None
    assert (got.grad_fn.name() if got.grad_fn is not None else None) == name
    if grad and name is not None:
        w = np.random.default_rng(1).standard_normal(tuple(expected.shape))
        expected.backward(torch.tensor(w, dtype=expected.dtype))
        got.backward(gradwalk.tensor(w, dtype=got.dtype))
        for t, g in zip(T, G):
            if t.grad is None:
                assert g.grad is None
            else:
                np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), atol=atol)
    return got


PRODUCTS = {
    "addmv": (lambda t, a, m, v: t.addmv(a, m, v, beta=0.5, alpha=2), [(3,), (3, 4), (4,)]),
    "addmv broadcast": (lambda t, a, m, v: t.addmv(a, m, v), [(1,), (3, 4), (4,)]),
    "addr": (lambda t, a, u, v: t.addr(a, u, v, alpha=3), [(3, 4), (3,), (4,)]),
    "addr method": (lambda t, a, u, v: a.addr(u, v, beta=2), [(4,), (3,), (4,)]),
    "baddbmm": (lambda t, a, b1, b2: t.baddbmm(a, b1, b2, beta=0.5), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm": (lambda t, a, b1, b2: t.addbmm(a, b1, b2, alpha=2), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "addmm_": (lambda t, a, m1, m2: (a * 1).addmm_(m1, m2, alpha=2), [(3, 5), (3, 4), (4, 5)]),
    "addmv_": (lambda t, a, m, v: (a * 1).addmv_(m, v), [(3,), (3, 4), (4,)]),
    "addr_": (lambda t, a, u, v: (a * 1).addr_(u, v), [(3, 4), (3,), (4,)]),
    "baddbmm_": (lambda t, a, b1, b2: (a * 1).baddbmm_(b1, b2), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addbmm_": (lambda t, a, b1, b2: (a * 1).addbmm_(b1, b2), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    "vdot": (lambda t, a, b: t.vdot(a, b), [(4,), (4,)]),
    "ger": (lambda t, a, b: a.ger(b), [(4,), (3,)]),
    "inner": (lambda t, a, b: t.inner(a, b), [(2, 4), (3, 4)]),
    "inner of a number": (lambda t, a, b: t.inner(a, b), [(), (4,)]),
    "tensordot dims lists": (lambda t, a, b: t.tensordot(a, b, dims=([1, 0], [0, 2])), [(3, 4, 5), (4, 2, 3)]),
    "tensordot int": (lambda t, a, b: t.tensordot(a, b), [(3, 4, 5), (4, 5, 2)]),
    "kron": (lambda t, a, b: t.kron(a, b), [(2, 3), (4, 2)]),
    "kron of ranks 1 and 3": (lambda t, a, b: a.kron(b), [(3,), (2, 2, 2)]),
}


@pytest.mark.parametrize("case", PRODUCTS)
def test_products_match_pytorch(case):
    f, shapes = PRODUCTS[case]
    _same(f, shapes)


def test_a_float32_addmv_stays_float32():
    _same(lambda t, a, m, v: t.addmv(a, m, v), [(3,), (3, 4), (4,)], dtype="float32", atol=1e-5)


def _message(f):
    with pytest.raises(Exception) as caught:
        f()
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("call", [
    lambda t: t.addmv(t.ones(3), t.ones(3, 3), t.ones(2)),
    lambda t: t.addr(t.ones(3, 3), t.ones(3, 3), t.ones(3)),
    lambda t: t.baddbmm(t.ones(2, 3, 3), t.ones(2, 3, 3), t.ones(2, 4, 3)),
    lambda t: t.addbmm(t.ones(3, 3), t.ones(2, 3, 3), t.ones(3, 3, 3)),
    lambda t: t.vdot(t.ones(3), t.ones(2)),
    lambda t: t.tensordot(t.ones(3, 3), t.ones(4, 3), ([0], [0])),
    lambda t: t.tensordot(t.ones(3, 3), t.ones(3, 3), ([0], [0, 1])),
    lambda t: t.inner(t.ones(3, 3), t.ones(2, 2)),
    lambda t: t.ones(3, 3).addmm_(t.ones(2, 3), t.ones(3, 3)),
])
def test_product_errors_match_pytorch(call):
    assert _message(lambda: call(gradwalk)) == _message(lambda: call(torch))
