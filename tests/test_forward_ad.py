"""Forward-mode AD: dual numbers on tensors, beside PyTorch's ``torch.autograd.forward_ad``.

The central test runs every core op through forward mode (one unit tangent per input element)
and through reverse mode (one backward pass per output element) and checks that the two
Jacobians agree with each other and with PyTorch's.
"""
import numpy as np
import pytest
import torch  # real PyTorch: these tests compare against it and must fail without it

import gradwalk
import gradwalk.autograd.forward_ad as fwAD
from conftest import assert_same_error


def test_the_seeds_dual_number_exercise():
    # tanh(x**3 + 2x + 1) at 0.5: x**3 = (0.125, 0.75), 2x = (1, 2), sum (2.125, 2.75),
    # tanh gives (0.97187, (1 - 0.97187**2) * 2.75) = (0.97187, 0.15252)
    f = lambda torch, x: torch.tanh(x ** 3 + 2 * x + 1)
    for lib, ad in ((gradwalk, fwAD), (torch, torch.autograd.forward_ad)):
        x0 = lib.tensor(0.5, dtype=lib.float64)
        with ad.dual_level():
            out = f(lib, ad.make_dual(x0, lib.tensor(1.0, dtype=lib.float64)))
            primal, tangent = ad.unpack_dual(out)
            assert out.grad_fn is None and not out.requires_grad
        assert primal.item() == 0.971872745913509
        assert tangent.item() == 0.15252425581397377


def test_reverse_mode_gives_the_same_number():
    x = gradwalk.tensor(0.5, dtype=gradwalk.float64, requires_grad=True)
    gradwalk.tanh(x ** 3 + 2 * x + 1).backward()
    assert x.grad.item() == 0.15252425581397377


def test_unpack_dual_is_a_named_tuple():
    with fwAD.dual_level():
        dual = fwAD.make_dual(gradwalk.tensor([1.0, 2.0]), gradwalk.tensor([3.0, 4.0]))
        unpacked = fwAD.unpack_dual(dual)
        assert type(unpacked).__name__ == "UnpackedDualTensor"
        assert unpacked._fields == ("primal", "tangent")
        assert unpacked.tangent.tolist() == [3.0, 4.0]
        plain = gradwalk.tensor([1.0])
        assert fwAD.unpack_dual(plain).tangent is None
    # outside any level: the tensor itself and no tangent; tangents of a closed level are gone
    after = fwAD.unpack_dual(dual)
    assert after.primal is dual and after.tangent is None


def test_the_tangent_is_stored_as_given_and_the_dual_is_a_view():
    for lib, ad in ((gradwalk, fwAD), (torch, torch.autograd.forward_ad)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        t = lib.tensor([1.0, 0.0])
        with ad.dual_level() as level:
            assert level == 0
            dual = ad.make_dual(x, t)
            assert type(dual.grad_fn).__name__ == "ViewBackward0"
            assert dual._base is x
            primal, tangent = ad.unpack_dual(dual)
            assert tangent is t
            assert primal.grad_fn.name() == "torch::autograd::Identity"


def test_tangents_flow_when_no_input_requires_grad_and_under_no_grad():
    for lib, ad in ((gradwalk, fwAD), (torch, torch.autograd.forward_ad)):
        with ad.dual_level(), lib.no_grad():
            d = ad.make_dual(lib.tensor([0.3, 0.6], dtype=lib.float64),
                             lib.tensor([1.0, 2.0], dtype=lib.float64))
            tangent = ad.unpack_dual((d * d).sin()).tangent
        expected = np.cos(np.array([0.09, 0.36])) * 2 * np.array([0.3, 0.6]) * np.array([1.0, 2.0])
        np.testing.assert_allclose(np.asarray(tangent.tolist()), expected)


def test_an_in_place_op_with_a_dual_operand_makes_the_tensor_dual():
    results = []
    for lib, ad in ((gradwalk, fwAD), (torch, torch.autograd.forward_ad)):
        with ad.dual_level():
            c = lib.tensor([1.0, 3.0])
            c.mul_(ad.make_dual(lib.tensor([2.0, 2.0]), lib.tensor([1.0, 0.5])))
            c.sin_()
            results.append(ad.unpack_dual(c).tangent.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_tangents_carry_a_graph_when_the_primal_requires_grad():
    """Reverse over forward: the tangent is differentiable with respect to the primal."""
    grads = []
    for lib, ad in ((gradwalk, fwAD), (torch, torch.autograd.forward_ad)):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        with ad.dual_level():
            out = ad.make_dual(x, lib.ones(2, dtype=lib.float64)).sin() * x
            tangent = ad.unpack_dual(out).tangent
            assert tangent.requires_grad
            tangent.sum().backward()
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1])


@pytest.mark.parametrize("snippet", [
    "torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2))",
    """
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(3))
    """,
    """
    with torch.autograd.forward_ad.dual_level():
        with torch.autograd.forward_ad.dual_level():
            pass
    """,
    """
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2), level=5)
    """,
    """
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.tensor([1, 2]), torch.ones(2))
    """,
    "torch.autograd.forward_ad.exit_dual_level()",
    """
    level = torch.autograd.forward_ad.enter_dual_level()
    try:
        torch.autograd.forward_ad.exit_dual_level(level=3)
    finally:
        torch.autograd.forward_ad.exit_dual_level(level=level)
    """,
])
def test_errors_match_pytorch(snippet):
    import gradwalk.autograd.forward_ad  # noqa: F401  (torch.autograd.forward_ad under gradwalk)

    assert_same_error(snippet)


# ---------------------------------------------------------------- forward == reverse on every op

def _uniform(shape, lo=0.2, hi=1.2, seed=0):
    return np.random.default_rng(seed + len(shape)).uniform(lo, hi, shape)


def _mixed(shape, seed=0):
    values = _uniform(shape, seed=seed)
    signs = np.where(np.arange(values.size).reshape(shape) % 2 == 0, 1.0, -1.0) if shape else -1.0
    return values * signs


P = _uniform  # positive values: safe for log, sqrt, pow
M = _mixed  # both signs, never at a kink
TARGET = [1, 0, 2]

OPS = {
    # name: (function of (torch, F, *inputs), input arrays)
    "add": (lambda t, F, a, b: a + b, [P((2, 3)), P((3,))]),
    "add_alpha": (lambda t, F, a, b: t.add(a, b, alpha=2.5), [P((3,)), P((3,))]),
    "sub": (lambda t, F, a, b: a - b, [P((3,)), P((2, 3))]),
    "rsub": (lambda t, F, a: 2.0 - a, [P((3,))]),
    "mul": (lambda t, F, a, b: a * b, [M((2, 3)), M((3,))]),
    "mul_scalar": (lambda t, F, a: a * 2.5, [M((3,))]),
    "div": (lambda t, F, a, b: a / b, [M((3,)), P((3,))]),
    "rdiv": (lambda t, F, a: 2.0 / a, [P((3,))]),
    "reciprocal": (lambda t, F, a: a.reciprocal(), [P((3,))]),
    "neg": (lambda t, F, a: -a, [M((3,))]),
    "pow_scalar": (lambda t, F, a: a ** 3, [M((3,))]),
    "pow_fraction": (lambda t, F, a: a ** 2.5, [P((3,))]),
    "pow_tensor": (lambda t, F, a, b: a ** b, [P((3,)), M((3,))]),
    "rpow": (lambda t, F, a: 2 ** a, [M((3,))]),
    "exp": (lambda t, F, a: a.exp(), [M((3,))]),
    "log": (lambda t, F, a: a.log(), [P((3,))]),
    "sin": (lambda t, F, a: a.sin(), [M((3,))]),
    "cos": (lambda t, F, a: a.cos(), [M((3,))]),
    "tan": (lambda t, F, a: a.tan(), [M((3,))]),
    "tanh": (lambda t, F, a: a.tanh(), [M((3,))]),
    "sigmoid": (lambda t, F, a: a.sigmoid(), [M((3,))]),
    "relu": (lambda t, F, a: a.relu(), [M((4,))]),
    "sqrt": (lambda t, F, a: a.sqrt(), [P((3,))]),
    "rsqrt": (lambda t, F, a: a.rsqrt(), [P((3,))]),
    "abs": (lambda t, F, a: a.abs(), [M((4,))]),
    "log1p": (lambda t, F, a: a.log1p(), [P((3,))]),
    "expm1": (lambda t, F, a: a.expm1(), [M((3,))]),
    "sign_floor_round": (lambda t, F, a: a.sign() + a.floor() + a.round() + a, [M((3,))]),
    "clamp": (lambda t, F, a: a.clamp(-0.5, 0.5), [M((4,))]),
    "clamp_min_max": (lambda t, F, a: a.clamp_min(-0.5) * a.clamp_max(0.5), [M((4,))]),
    "maximum_minimum": (lambda t, F, a, b: t.maximum(a, b) + t.minimum(a, b) * 2, [M((4,)), P((4,))]),
    "where": (lambda t, F, a, b: t.where(a > 0, a, b), [M((4,)), P((4,))]),
    "sum": (lambda t, F, a: a.sum(), [M((2, 3))]),
    "sum_dim": (lambda t, F, a: a.sum(1, keepdim=True), [M((2, 3))]),
    "mean": (lambda t, F, a: a.mean(), [M((2, 3))]),
    "mean_dim": (lambda t, F, a: a.mean(0), [M((2, 3))]),
    "max_all": (lambda t, F, a: a.max(), [M((2, 3))]),
    "max_dim": (lambda t, F, a: a.max(1), [M((2, 3))]),
    "min_dim_keepdim": (lambda t, F, a: a.min(0, keepdim=True).values, [M((2, 3))]),
    "amax": (lambda t, F, a: a.amax(1), [M((2, 3))]),
    "var_std": (lambda t, F, a: a.var(1) + a.std(), [M((2, 3))]),
    "prod": (lambda t, F, a: a.prod(), [M((4,))]),
    "logsumexp": (lambda t, F, a: a.logsumexp(1), [M((2, 3))]),
    "norm": (lambda t, F, a: a.norm(), [M((2, 3))]),
    "norm_p1_dim": (lambda t, F, a: a.norm(p=1, dim=1), [M((2, 3))]),
    "norm_p3": (lambda t, F, a: a.norm(p=3), [M((4,))]),
    "softmax": (lambda t, F, a: F.softmax(a, dim=1), [M((2, 3))]),
    "log_softmax": (lambda t, F, a: F.log_softmax(a, dim=1), [M((2, 3))]),
    "mse_loss": (lambda t, F, a, b: F.mse_loss(a, b), [M((2, 3)), P((2, 3))]),
    "nll_loss": (lambda t, F, a: F.nll_loss(a, t.tensor(TARGET)), [M((3, 3))]),
    "cross_entropy": (lambda t, F, a: F.cross_entropy(a, t.tensor(TARGET)), [M((3, 3))]),
    "bce": (lambda t, F, a, b: F.binary_cross_entropy(a.sigmoid(), b), [M((3,)), P((3,), 0.1, 0.9)]),
    "bce_with_logits": (lambda t, F, a, b: F.binary_cross_entropy_with_logits(a, b),
                        [M((3,)), P((3,), 0.1, 0.9)]),
    "mm": (lambda t, F, a, b: a @ b, [M((2, 3)), M((3, 2))]),
    "bmm": (lambda t, F, a, b: t.bmm(a, b), [M((2, 2, 3)), M((2, 3, 2))]),
    "dot": (lambda t, F, a, b: a @ b, [M((3,)), M((3,))]),
    "mv": (lambda t, F, a, b: a @ b, [M((2, 3)), M((3,))]),
    "vec_mat": (lambda t, F, a, b: a @ b, [M((3,)), M((3, 2))]),
    "matmul_3d_2d": (lambda t, F, a, b: a @ b, [M((2, 2, 3)), M((3, 2))]),
    "addmm_linear": (lambda t, F, a, w, b: F.linear(a, w, b), [M((2, 3)), M((2, 3)), M((2,))]),
    "reshape_view_flatten": (lambda t, F, a: a.reshape(3, 2).view(6).flatten() * a.view(-1), [M((2, 3))]),
    "transpose_t_permute": (lambda t, F, a: a.transpose(0, 1) + a.t() + a.T + a.permute(1, 0), [M((2, 3))]),
    "unsqueeze_squeeze": (lambda t, F, a: a.unsqueeze(0).squeeze() + a[None].squeeze(0), [M((3,))]),
    "expand": (lambda t, F, a: a.expand(2, 3), [M((3,))]),
    "select_slice": (lambda t, F, a: a[1] * a[:, 1:].sum(), [M((2, 3))]),
    "index": (lambda t, F, a: a[[0, 2, 2]], [M((3,))]),
    "index_select": (lambda t, F, a: a.index_select(0, t.tensor([2, 0])), [M((3,))]),
    "cat_stack": (lambda t, F, a, b: t.cat([a, b]) + t.stack([a, b]).reshape(-1), [M((3,)), P((3,))]),
    "split_chunk": (lambda t, F, a: a.split(2) + a.chunk(2), [M((4,))]),
    "split_sizes": (lambda t, F, a: a.split([1, 3]), [M((4,))]),
    "unbind": (lambda t, F, a: a.unbind(0), [M((2, 3))]),
    "flip_repeat": (lambda t, F, a: a.flip(0).repeat(2), [M((3,))]),
    "gather": (lambda t, F, a: a.gather(1, t.tensor([[0, 0], [2, 1]])), [M((2, 3))]),
    "masked_fill": (lambda t, F, a: a.masked_fill(a > 0, 0.0), [M((4,))]),
    "clone_to": (lambda t, F, a: a.clone().to(t.float32).to(t.float64), [M((3,))]),
    "setitem": (lambda t, F, a, b: _setitem(a, b), [M((3,)), P((1,))]),
    "inplace": (lambda t, F, a, b: a.clone().mul_(b).add_(a).exp_(), [M((3,)), P((3,))]),
}


def _setitem(a, b):
    c = a * 1.0
    c[1:2] = b * 2
    return c


def _functional(lib):
    return lib.nn.functional


@pytest.mark.parametrize("name", sorted(OPS))
def test_forward_and_reverse_mode_give_pytorchs_jacobian(name):
    fn, arrays = OPS[name]
    jacobians = {}
    for lib in (gradwalk, torch):
        inputs = tuple(lib.tensor(a, dtype=lib.float64) for a in arrays)
        f = lambda *xs, lib=lib: fn(lib, _functional(lib), *xs)
        functional = lib.autograd.functional
        jacobians[lib.__name__, "reverse"] = functional.jacobian(f, inputs)
        jacobians[lib.__name__, "forward"] = functional.jacobian(f, inputs, vectorize=True,
                                                                 strategy="forward-mode")
    expected = _flat(jacobians["torch", "reverse"])
    for key in (("gradwalk", "reverse"), ("gradwalk", "forward"), ("torch", "forward")):
        got = _flat(jacobians[key])
        assert len(got) == len(expected), key
        for g, e in zip(got, expected):
            assert tuple(g.shape) == tuple(e.shape), key
            np.testing.assert_allclose(np.asarray(g.tolist()), e.detach().numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{name} {key}")


def _flat(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _flat(item)]
    return [tree]


def test_every_op_with_a_backward_formula_has_a_jvp_formula():
    from gradwalk.ops.core import Op
    import gradwalk.ops.functions  # noqa: F401  (imports every op module)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    core = ("pointwise", "reduction", "linalg", "shape", "inplace", "activation")
    missing = sorted(op.name for op in subclasses(Op)
                     if op.__module__.rsplit(".", 1)[-1] in core and op.name and not hasattr(op, "jvp"))
    assert missing == []


def test_a_dual_tensor_prints_its_tangent_as_pytorch_does():
    import torch
    import torch.autograd.forward_ad as torch_fwAD

    import gradwalk
    import gradwalk.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        ours = fwAD.make_dual(gradwalk.tensor([0.5, 1.0]), gradwalk.tensor([1.0, 2.0]))
        ours_repr = [repr(ours), repr(ours * 2)]
    with torch_fwAD.dual_level():
        theirs = torch_fwAD.make_dual(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 2.0]))
        theirs_repr = [repr(theirs), repr(theirs * 2)]
    assert ours_repr == theirs_repr
    assert repr(ours) == repr(theirs) == "tensor([0.5000, 1.0000])"  # the level closed
