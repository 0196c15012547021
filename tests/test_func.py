"""``gradwalk.func`` and ``gradwalk.autograd.functional`` beside ``torch.func`` and
``torch.autograd.functional``; derivatives up to third order against analytic values."""
import math

import numpy as np
import pytest
import torch  # real PyTorch: these tests compare against it and must fail without it
import torch.func

import gradwalk
import gradwalk.func
from conftest import assert_same_error


def _flat(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _flat(item)]
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _flat(tree[key])]
    return [tree]


def assert_same_results(ours, theirs, rtol=1e-10):
    ours, theirs = _flat(ours), _flat(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert str(o.dtype) == str(t.dtype)
        assert o.requires_grad == t.requires_grad
        np.testing.assert_allclose(np.asarray(o.detach().tolist()), t.detach().numpy(), rtol=rtol, atol=1e-12)


def both(make):
    """Run ``make(lib, func)`` with gradwalk and with PyTorch."""
    return make(gradwalk, gradwalk.func), make(torch, torch.func)


def seed_f(lib):
    return lambda x: lib.tanh(x ** 3 + 2 * x + 1)


def f64(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# ---------------------------------------------------------------- the seeds' numbers

def test_the_seeds_numbers():
    x0 = f64(gradwalk, 0.5)
    assert gradwalk.func.grad(seed_f(gradwalk))(x0).item() == 0.15252425581397377
    primal, tangent = gradwalk.func.jvp(seed_f(gradwalk), (x0,), (f64(gradwalk, 1.0),))
    assert (primal.item(), tangent.item()) == (0.971872745913509, 0.15252425581397377)
    out, vjp_fn = gradwalk.func.vjp(seed_f(gradwalk), x0)
    assert vjp_fn(f64(gradwalk, 1.0))[0].item() == 0.15252425581397377
    # the power rule at x = 2: 3 * 2**2 = 12; tanh' at 2 = 1 - tanh(2)**2 = 0.0707
    assert gradwalk.func.grad(lambda x: x ** 3)(f64(gradwalk, 2.0)).item() == 12.0
    assert round(gradwalk.func.grad(gradwalk.tanh)(f64(gradwalk, 2.0)).item(), 4) == 0.0707
    assert round(gradwalk.func.hessian(seed_f(gradwalk))(x0).item(), 4) == -0.6489


def test_jacrev_and_hessian_from_the_facts():
    v = f64(gradwalk, [0.5, 1.0])
    assert gradwalk.func.jacrev(lambda v: v ** 2)(v).tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert gradwalk.func.hessian(lambda v: (v ** 2).sum() * v[0])(v).tolist() == [[3.0, 2.0], [2.0, 1.0]]


# ---------------------------------------------------------------- each transform vs torch.func

CASES = {
    "grad": lambda t, fn: fn.grad(seed_f(t))(f64(t, 0.5)),
    "grad_argnums": lambda t, fn: fn.grad(lambda a, b: (a * b.exp()).sum(), argnums=1)(
        f64(t, [0.1, 0.2]), f64(t, [0.3, -0.4])),
    "grad_argnums_tuple": lambda t, fn: fn.grad(lambda a, b: (a.sin() * b).sum(), argnums=(0, 1))(
        f64(t, [0.1, 0.2]), f64(t, [0.3, -0.4])),
    "grad_has_aux": lambda t, fn: fn.grad(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(
        f64(t, [1.0, 3.0])),
    "grad_dict_input": lambda t, fn: fn.grad(lambda p: (p["w"] * p["b"]).sum())(
        {"w": f64(t, [1.0, 2.0]), "b": f64(t, [3.0, 4.0])}),
    "grad_and_value": lambda t, fn: fn.grad_and_value(lambda a: a.exp().sum())(f64(t, [0.1, 0.2])),
    "vjp": lambda t, fn: (lambda r: (r[0], r[1](f64(t, [1.0, -2.0]))))(
        fn.vjp(lambda a: a.sin() * 2, f64(t, [0.1, 0.2]))),
    "vjp_two_outputs": lambda t, fn: (lambda r: (r[0], r[1]((f64(t, [1.0, 1.0]), f64(t, 2.0)))))(
        fn.vjp(lambda a: (a.exp(), a.sum()), f64(t, [0.1, 0.2]))),
    "vjp_has_aux": lambda t, fn: (lambda r: (r[0], r[1](f64(t, 1.0)), r[2]))(
        fn.vjp(lambda a: (a.sum(), a * 2), f64(t, [0.1, 0.2]), has_aux=True)),
    "jvp": lambda t, fn: fn.jvp(seed_f(t), (f64(t, 0.5),), (f64(t, 1.0),)),
    "jvp_two_inputs": lambda t, fn: fn.jvp(lambda a, b: a * b.cos(), (f64(t, [1.0, 2.0]), f64(t, [0.5, 0.1])),
                                           (f64(t, [1.0, 0.0]), f64(t, [0.0, 1.0]))),
    "jvp_has_aux": lambda t, fn: fn.jvp(lambda a: (a.exp(), a * 3), (f64(t, [1.0]),), (f64(t, [2.0]),),
                                        has_aux=True),
    "jacrev": lambda t, fn: fn.jacrev(lambda a: a.sin() * a.sum())(f64(t, [0.1, 0.2, 0.3])),
    "jacrev_argnums": lambda t, fn: fn.jacrev(lambda a, b: a @ b, argnums=(0, 1))(
        f64(t, [[1.0, 2.0], [3.0, 4.0]]), f64(t, [0.5, -1.0])),
    "jacrev_tuple_output": lambda t, fn: fn.jacrev(lambda a: (a.exp(), a.sum()))(f64(t, [0.1, 0.2])),
    "jacrev_has_aux": lambda t, fn: fn.jacrev(lambda a: (a ** 2, a.sum()), has_aux=True)(f64(t, [0.1, 0.2])),
    "jacfwd": lambda t, fn: fn.jacfwd(lambda a: a.sin() * a.sum())(f64(t, [0.1, 0.2, 0.3])),
    "jacfwd_matrix_input": lambda t, fn: fn.jacfwd(lambda m: m.tanh().sum(0))(
        f64(t, [[0.1, 0.2], [0.3, 0.4]])),
    "jacfwd_argnums": lambda t, fn: fn.jacfwd(lambda a, b: a * b, argnums=1)(
        f64(t, [1.0, 2.0]), f64(t, [3.0, 4.0])),
    "hessian": lambda t, fn: fn.hessian(lambda a: (a.sin() * a.exp()).sum())(f64(t, [0.1, 0.2, 0.3])),
    "hessian_argnums": lambda t, fn: fn.hessian(lambda a, b: (a * a * b).sum(), argnums=1)(
        f64(t, [1.0, 2.0]), f64(t, [3.0, 4.0])),
    "jacrev_of_jacrev": lambda t, fn: fn.jacrev(fn.jacrev(lambda a: a.exp() * a.sum()))(f64(t, [0.1, 0.2])),
    "jacfwd_of_jacfwd": lambda t, fn: fn.jacfwd(fn.jacfwd(lambda a: a.exp() * a.sum()))(f64(t, [0.1, 0.2])),
    "jacrev_of_jacfwd": lambda t, fn: fn.jacrev(fn.jacfwd(lambda a: a.tanh() * a.sum()))(f64(t, [0.1, 0.2])),
    "grad_of_grad_of_grad": lambda t, fn: fn.grad(fn.grad(fn.grad(seed_f(t))))(f64(t, 0.5)),
    "vmap": lambda t, fn: fn.vmap(lambda a: a.sum() * a)(f64(t, [[1.0, 2.0], [3.0, 4.0]])),
    "vmap_in_dims": lambda t, fn: fn.vmap(lambda a, b: a * b, in_dims=(1, None))(
        f64(t, [[1.0, 2.0], [3.0, 4.0]]), f64(t, [5.0, 6.0])),
    "vmap_of_grad": lambda t, fn: fn.vmap(fn.grad(lambda a: (a ** 3).sum()))(
        f64(t, [[1.0, 2.0], [3.0, 4.0]])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_matches_torch_func(name):
    ours, theirs = both(CASES[name])
    assert_same_results(ours, theirs)


def test_results_keep_a_graph_when_the_input_requires_grad():
    ours, theirs = both(lambda t, fn: fn.grad(lambda a: (a ** 3).sum())(
        t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)))
    assert ours.requires_grad and theirs.requires_grad
    assert_same_results(ours, theirs)


@pytest.mark.parametrize("snippet", [
    "torch.func.grad(lambda x: x * 2)(torch.ones(3))",
    "torch.func.grad(lambda x: 3)(torch.ones(()))",
    "torch.func.grad(lambda x: x.sum(), has_aux=True)(torch.ones(3))",
    "torch.func.grad(lambda x: x.sum(), argnums=1)(torch.ones(3))",
    "torch.func.grad(lambda x: x.sum(), argnums=(0, 0))(torch.ones(3))",
    "torch.func.jvp(lambda x: x, torch.ones(2), torch.ones(2))",
])
def test_errors_match_torch_func(snippet):
    import gradwalk.func  # noqa: F401  (torch.func under gradwalk)

    assert_same_error(snippet)


# ---------------------------------------------------------------- higher order vs analytic values

def test_derivatives_up_to_third_order_against_analytic_values():
    """f = sin(x) * x**2:  f' = cos x x^2 + 2x sin x,  f'' = -sin x x^2 + 4x cos x + 2 sin x,
    f''' = -cos x x^2 - 6x sin x + 6 cos x."""
    x = 0.7
    s, c = math.sin(x), math.cos(x)
    analytic = [c * x * x + 2 * x * s, -s * x * x + 4 * x * c + 2 * s, -c * x * x - 6 * x * s + 6 * c]
    for lib, fn in ((gradwalk, gradwalk.func), (torch, torch.func)):
        f = lambda t: t.sin() * t ** 2
        d1, d2, d3 = fn.grad(f), fn.grad(fn.grad(f)), fn.grad(fn.grad(fn.grad(f)))
        got = [d(f64(lib, x)).item() for d in (d1, d2, d3)]
        np.testing.assert_allclose(got, analytic, rtol=1e-12)
        # the same through autograd.grad with create_graph=True
        t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        y = f(t)
        (g1,) = lib.autograd.grad(y, t, create_graph=True)
        (g2,) = lib.autograd.grad(g1, t, create_graph=True)
        (g3,) = lib.autograd.grad(g2, t)
        np.testing.assert_allclose([g1.item(), g2.item(), g3.item()], analytic, rtol=1e-12)
        # and forward over forward over reverse
        third = fn.jacfwd(fn.jacfwd(fn.grad(f)))(f64(lib, x))
        np.testing.assert_allclose(third.item(), analytic[2], rtol=1e-12)


def test_third_order_node_names_match_pytorch():
    names = []
    for lib in (gradwalk, torch):
        t = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        (g1,) = lib.autograd.grad(t.tanh(), t, create_graph=True)
        (g2,) = lib.autograd.grad(g1, t, create_graph=True)
        names.append((type(g1.grad_fn).__name__, type(g2.grad_fn).__name__))
    assert names[0] == names[1]


# ---------------------------------------------------------------- autograd.functional

def _funcs(lib):
    return {
        "f": lambda a, b: (a.sin() * a).sum() * b.exp().sum(),
        "g": lambda a: (a ** 2, a.tanh() * 3),
        "cube": lambda a: (a ** 3).sum(),
    }


FUNCTIONAL = {
    "jacobian": lambda t, F, fs, x, y, v: F.jacobian(lambda a: a ** 2, x),
    "jacobian_tuples": lambda t, F, fs, x, y, v: F.jacobian(fs["f"], (x, y)),
    "jacobian_two_outputs": lambda t, F, fs, x, y, v: F.jacobian(fs["g"], x),
    "jacobian_create_graph": lambda t, F, fs, x, y, v: F.jacobian(fs["g"], x, create_graph=True),
    "jacobian_forward_mode": lambda t, F, fs, x, y, v: F.jacobian(fs["g"], x, vectorize=True,
                                                                  strategy="forward-mode"),
    "jacobian_vectorize": lambda t, F, fs, x, y, v: F.jacobian(fs["g"], x, vectorize=True),
    "hessian": lambda t, F, fs, x, y, v: F.hessian(fs["f"], (x, y)),
    "hessian_single": lambda t, F, fs, x, y, v: F.hessian(fs["cube"], x),
    "vjp": lambda t, F, fs, x, y, v: F.vjp(lambda a: a.exp(), x, v),
    "vjp_scalar": lambda t, F, fs, x, y, v: F.vjp(fs["cube"], x),
    "jvp": lambda t, F, fs, x, y, v: F.jvp(lambda a: a.exp() * a, x, v),
    "jvp_create_graph": lambda t, F, fs, x, y, v: F.jvp(lambda a: a.exp() * a, x, v, create_graph=True),
    "vhp": lambda t, F, fs, x, y, v: F.vhp(fs["cube"], x, v),
    "hvp": lambda t, F, fs, x, y, v: F.hvp(fs["cube"], x, v),
    "hvp_tuple": lambda t, F, fs, x, y, v: F.hvp(fs["f"], (x, y), (v, y)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_autograd_functional_matches_pytorch(name):
    def make(lib, _):
        x = f64(lib, [0.5, 1.0, -0.3])
        y = f64(lib, [2.0, 0.1])
        v = f64(lib, [1.0, 2.0, 3.0])
        return FUNCTIONAL[name](lib, lib.autograd.functional, _funcs(lib), x, y, v)

    ours, theirs = both(make)
    assert_same_results(ours, theirs)


@pytest.mark.parametrize("snippet", [
    "torch.autograd.functional.vjp(lambda a: a * 2, torch.ones(3))",
    "torch.autograd.functional.vjp(lambda a: a * 2, torch.ones(3), torch.ones(2))",
    "torch.autograd.functional.jacobian(lambda a: a * 2, [1.0])",
    "torch.autograd.functional.jacobian(lambda a, b: a * 2, (torch.ones(2), torch.ones(2)), strict=True)",
    "torch.autograd.functional.hessian(lambda a: a * 2, torch.ones(2))",
    "torch.autograd.functional.jvp(lambda a: a * 2, torch.ones(2))",
    "torch.autograd.functional.vhp(lambda a: (a * 2).sum(), torch.ones(2), torch.ones(2), strict=True)",
])
def test_functional_errors_match_pytorch(snippet):
    assert_same_error(snippet)
