"""The rest of PyTorch's elementwise functions and the in-place/alias variants, beside torch:
values, dtype, the backward node's name and the gradients ``backward()`` leaves."""
import numpy as np
import pytest
import torch

import gradwalk


def both(values, dtype="float32", requires_grad=False):
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    g = gradwalk.tensor(values, dtype=getattr(gradwalk, dtype), requires_grad=requires_grad)
    return g, t


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), dtype=float),
                               theirs.detach().numpy(force=True).astype(float), rtol=rtol, atol=atol, equal_nan=True)


def check_grad(fn, *values, rtol=1e-5, atol=1e-6):
    """``fn(*inputs)`` on both libraries: the value, the node's name and every input's gradient."""
    ours = [gradwalk.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    y, yt = fn(gradwalk, *ours), fn(torch, *theirs)
    assert_same(y, yt, rtol, atol)
    assert y.grad_fn.name() == yt.grad_fn.name()
    y.sum().backward()
    yt.sum().backward()
    for a, b in zip(ours, theirs):
        if b.grad is None:
            assert a.grad is None
        else:
            assert_same(a.grad, b.grad, rtol, atol)


X = [0.3, -1.2, 2.0, 0.0]
Y = [1.5, 0.5, -2.0, 3.0]
POS = [0.3, 1.2, 2.5, 4.0]
UNIT = [0.1, 0.25, 0.5, 0.9]


@pytest.mark.parametrize("fn, values", [
    (lambda m, x: m.deg2rad(x), [X]),
    (lambda m, x: x.rad2deg(), [X]),
    (lambda m, x, y: m.copysign(x, y), [X, Y]),
    (lambda m, x: m.copysign(x, -1.0), [X]),
    (lambda m, x, y: m.hypot(x, y), [X, Y]),
    (lambda m, x: m.logit(x), [UNIT]),
    (lambda m, x: x.logit(eps=0.2), [UNIT]),
    (lambda m, x, y: m.xlogy(x, y), [X, POS]),
    (lambda m, y: m.xlogy(2.0, y), [POS]),
    (lambda m, x: m.xlogy(x, 3.0), [X]),
    (lambda m, x: m.sinc(x), [X]),
    (lambda m, x, y: m.fmax(x, y), [[1.0, float("nan"), 3.0, 2.0], [2.0, 1.0, float("nan"), 2.0]]),
    (lambda m, x, y: m.fmin(x, y), [[1.0, float("nan"), 3.0, 2.0], [2.0, 1.0, float("nan"), 2.0]]),
    (lambda m, x, y: m.logaddexp2(x, y), [X, Y]),
    (lambda m, x: m.lgamma(x), [POS]),
    (lambda m, x: x.digamma(), [POS]),
    (lambda m, x: m.polygamma(2, x), [POS]),
    (lambda m, x: x.polygamma(1), [POS]),
    (lambda m, x: m.mvlgamma(x + 3, 2), [POS]),
    (lambda m, x: m.i0(x), [X]),
    (lambda m, x: m.sgn(x), [X]),
    (lambda m, x: m.angle(x), [X]),
    (lambda m, x: m.hardshrink(x), [X]),
    (lambda m, x: m.nn.functional.hardshrink(x, 1.0), [X]),
    (lambda m, x: x.hardshrink(lambd=0.25), [X]),
    (lambda m, x: m.threshold(x, 0.1, 20.0), [X]),
    (lambda m, x: m.celu(x, 2.0), [X]),
    (lambda m, x: m.selu(x), [X]),
    (lambda m, x: m.rrelu(x), [X]),
    (lambda m, x: m.float_power(x, 2), [X]),
    (lambda m, x, y: m.float_power(x, y), [POS, Y]),
    (lambda m, x: m.ldexp(x, m.tensor([1, 2, 3, -1])), [X]),
    (lambda m, x: x.square(), [X]),
    (lambda m, x: x.frac(), [X]),
])
def test_new_functions_match_torch(fn, values):
    check_grad(fn, *values)


@pytest.mark.parametrize("name", ["acos_", "asin_", "atan_", "erf_", "erfc_", "erfinv_", "tan_",
                                  "expm1_", "log1p_", "rsqrt_", "reciprocal_", "arcsin_", "arctan_", "sinc_",
                                  "deg2rad_", "sign_", "sgn_", "floor_", "ceil_", "round_", "trunc_",
                                  "fix_", "frac_", "square_", "cosh_", "sinh_", "exp2_", "log2_"])
def test_unary_inplace_matches_torch(name):
    def fn(m, x):
        y = x * 0.5 + 0.25  # a non-leaf: in-place ops refuse leaves that require grad
        return getattr(y, name)()

    check_grad(fn, [0.3, -0.6, 0.8, 0.1])


@pytest.mark.parametrize("fn", [
    lambda m, x, y: (x * 1).atan2_(y),
    lambda m, x, y: (x * 1).copysign_(y),
    lambda m, x, y: (x * 1).hypot_(y),
    lambda m, x, y: (x * 1).fmod_(1.5),
    lambda m, x, y: (x * 1).remainder_(y),
    lambda m, x, y: (x * 1).lerp_(y, 0.3),
    lambda m, x, y: (x * 1).addcmul_(x, y, value=2),
    lambda m, x, y: (x * 1).addcdiv_(x, y, value=0.5),
    lambda m, x, y: (x * 1).clamp_min_(0.0),
    lambda m, x, y: m.clamp_max_(x * 1, 0.5),
    lambda m, x, y: (x * 1).nan_to_num_(),
    lambda m, x, y: (x * 1).cumsum_(0),
    lambda m, x, y: (x * 1).cumprod_(0),
    lambda m, x, y: (x * 1).view(2, 2).tril_(),
    lambda m, x, y: (x * 1).view(2, 2).triu_(1),
    lambda m, x, y: (x * 1).multiply_(y),
    lambda m, x, y: (x * 1).subtract_(y, alpha=2),
    lambda m, x, y: (x * 1).true_divide_(y),
    lambda m, x, y: (x * 1).absolute_(),
    lambda m, x, y: m.negative_(x * 1),
    lambda m, x, y: (x * 1).xlogy_(y.abs()),
    lambda m, x, y: (x * 1).logit_(eps=0.1),
    lambda m, x, y: m.threshold_(x * 1, 0.1, 20.0),
    lambda m, x, y: m.celu_(x * 1),
    lambda m, x, y: m.selu_(x * 1),
    lambda m, x, y: (x * 1).abs().polygamma_(1),
    lambda m, x, y: (x.abs() + 3).mvlgamma_(2),
    lambda m, x, y: (x.view(2, 2) * 1).t_(),
    lambda m, x, y: (x.view(2, 2) * 1).transpose_(0, 1),
    lambda m, x, y: (x.view(4, 1) * 1).swapdims_(0, 1),
    lambda m, x, y: (x * 1).eq_(y),
    lambda m, x, y: (x * 1).lt_(0.5),
])
def test_binary_and_other_inplace_match_torch(fn):
    check_grad(fn, [0.3, -1.2, 2.0, 0.7], [1.5, 0.5, -2.0, 3.0])


def test_inplace_writes_into_the_tensor_and_counts_a_version():
    x, xt = both([0.5, -0.25])
    v = x._version
    assert x.acos_() is x
    xt.acos_()
    assert x._version == v + 1
    assert_same(x, xt)


def test_no_grad_inplace_comparisons_and_logic_keep_the_dtype():
    for name, other in (("ge_", 0.5), ("ne_", 2.0), ("less_equal_", 0.5), ("greater_", 0.0),
                        ("logical_and_", [1.0, 0.0, 1.0]), ("logical_not_", None)):
        x, xt = both([0.0, 2.0, 0.5])
        args = () if other is None else (other if isinstance(other, float) else gradwalk.tensor(other),)
        targs = () if other is None else (other if isinstance(other, float) else torch.tensor(other),)
        assert_same(getattr(x, name)(*args), getattr(xt, name)(*targs))
    a, at = both([12, 7, -9], "int64")
    for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "gcd_", "lcm_", "floor_divide_"):
        ours = getattr(a.clone(), name)(gradwalk.tensor([8, 3, 6]))
        assert_same(ours, getattr(at.clone(), name)(torch.tensor([8, 3, 6])))
    assert_same(a.clone().bitwise_not_(), at.clone().bitwise_not_())
    x, xt = both([7.0, -7.0])
    assert_same(x.divide_(2.0, rounding_mode="floor"), xt.divide_(2.0, rounding_mode="floor"))


def test_aliases_match_torch():
    x, xt = both([[1.0, 2.0], [3.0, 0.0]])
    y, yt = both([[1.0, 3.0], [2.0, 0.0]])
    for name in ("greater", "greater_equal", "less", "less_equal", "not_equal"):
        assert_same(getattr(gradwalk, name)(x, y), getattr(torch, name)(xt, yt))
        assert_same(getattr(x, name)(y), getattr(xt, name)(yt))
    assert_same(gradwalk.swapdims(x, 0, 1), torch.swapdims(xt, 0, 1))
    assert_same(x.swapaxes_(0, 1), xt.swapaxes_(0, 1))
    assert x.positive() is x


def test_integer_and_predicate_functions_match_torch():
    a, at = both([12, -18, 0, 7], "int64")
    b, bt = both([8, 12, 5, 0], "int64")
    assert_same(gradwalk.gcd(a, b), torch.gcd(at, bt))
    assert_same(gradwalk.lcm(a, b), torch.lcm(at, bt))
    x, xt = both([-0.0, 1.5, float("inf"), -float("inf"), float("nan")])
    for name in ("signbit", "isposinf", "isneginf", "isreal"):
        assert_same(getattr(gradwalk, name)(x), getattr(torch, name)(xt))
    m, e = gradwalk.frexp(x[:3])
    mt, et = torch.frexp(xt[:3])
    assert_same(m, mt)
    assert_same(e, et)
    assert_same(gradwalk.heaviside(x, gradwalk.tensor(0.5)), torch.heaviside(xt, torch.tensor(0.5)))
    assert_same(gradwalk.deg2rad(a), torch.deg2rad(at))  # integers compute in the default float dtype
    assert_same(gradwalk.copysign(a, -1), torch.copysign(at, -1))
    assert_same(gradwalk.xlogy(a, b), torch.xlogy(at, bt))


def test_float_power_inplace_needs_a_double_tensor():
    x, xt = both([1.5, 2.0], "float64")
    assert_same(x.float_power_(3), xt.float_power_(3))
    y, yt = both([1.5, 2.0])
    with pytest.raises(RuntimeError) as theirs:
        yt.float_power_(2)
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float") as ours:
        y.float_power_(2)
    assert str(ours.value) == str(theirs.value)


def test_errors_match_torch():
    cases = [
        (lambda m: m.tensor([1, 2]).acos_(), "can't be cast"),
        (lambda m: m.gcd(m.tensor([1.0]), m.tensor([2.0])), "not implemented for 'Float'"),
        (lambda m: m.frexp(m.tensor([1, 2])), "frexp"),
        (lambda m: m.mvlgamma(m.tensor([1.5]), 0), "p has to be greater than or equal to 1"),
        (lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])), "different dtypes"),
        (lambda m: m.ones(2, 2, 2).t_(), "expects a tensor with <= 2 dimensions"),
        (lambda m: m.ones(2).tril_(), "at least 2 dimensions"),
        (lambda m: m.ones(2, 2).transpose_(0, 2), "Dimension out of range"),
        (lambda m: m.ones(2, requires_grad=True).sinh_(), "leaf Variable"),
    ]
    for fn, text in cases:
        with pytest.raises((RuntimeError, IndexError)) as theirs:
            fn(torch)
        with pytest.raises(type(theirs.value), match=text) as ours:
            fn(gradwalk)
        assert str(ours.value) == str(theirs.value)


def test_inverse_hyperbolic_inplace_have_no_derivative_as_in_torch():
    for name in ("acosh_", "asinh_", "atanh_"):
        for m in (torch, gradwalk):
            x = m.tensor([1.3, 1.6] if name == "acosh_" else [0.3, 0.6], requires_grad=True) * 1
            y = getattr(x, name)()
            assert y.grad_fn.name() == name[0].upper() + name[1:-1] + "Backward1"
            with pytest.raises(NotImplementedError, match=f"inplace version of {name[:-1]}"):
                y.sum().backward()
        assert_same(getattr(gradwalk.tensor([0.3]), name)(), getattr(torch.tensor([0.3]), name)())


def test_heaviside_has_no_derivative():
    x = gradwalk.tensor([1.0, -1.0], requires_grad=True)
    y = gradwalk.heaviside(x, gradwalk.tensor([0.5, 0.5]))
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        y.sum().backward()


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.deg2rad(x), lambda m, x, y: m.logit(x.abs() / 3, eps=0.1), lambda m, x, y: m.sinc(x),
    lambda m, x, y: m.lgamma(x.abs()), lambda m, x, y: m.digamma(x.abs()), lambda m, x, y: m.polygamma(1, x.abs()),
    lambda m, x, y: m.mvlgamma(x.abs() + 2, 3), lambda m, x, y: m.i0(x), lambda m, x, y: m.hardshrink(x),
    lambda m, x, y: m.celu(x, 0.5), lambda m, x, y: m.selu(x), lambda m, x, y: m.copysign(x, y),
    lambda m, x, y: m.copysign(x, -2.0), lambda m, x, y: m.hypot(x, y), lambda m, x, y: m.xlogy(x, y.abs()),
    lambda m, x, y: m.xlogy(2.0, y.abs()), lambda m, x, y: m.fmax(x, y), lambda m, x, y: m.fmin(x, y),
    lambda m, x, y: m.logaddexp2(x, y),
])
def test_forward_ad_matches_torch(fn):
    def tangent(m, fwad):
        with fwad.dual_level():
            x = fwad.make_dual(m.tensor([0.3, -1.2, 2.0, 0.7]), m.tensor([1.0, 2.0, -1.0, 0.5]))
            y = fwad.make_dual(m.tensor([1.5, 0.5, -2.0, 3.0]), m.tensor([0.5, -1.0, 1.0, 2.0]))
            return fwad.unpack_dual(fn(m, x, y)).tangent

    import gradwalk.autograd.forward_ad as ours
    import torch.autograd.forward_ad as theirs

    assert_same(tangent(gradwalk, ours), tangent(torch, theirs))


def test_shape_and_dtype_errors_match_torch():
    cases = [
        lambda m: m.ones(3).hypot_(m.ones(2, 3)),
        lambda m: m.hypot(m.ones(3), m.ones(2)),
        lambda m: m.ones(2).lerp_(m.ones(3), 0.5),
        lambda m: m.hypot(m.tensor([1, 2]), m.tensor([1, 2])),
        lambda m: m.tensor([1, 2]).xlogy_(m.tensor([1.0, 2.0])),
        lambda m: m.tensor([1, 2]).floor_divide_(m.tensor([1.5, 2.0])),
        lambda m: m.ones(2).cumsum_(1),
        lambda m: m.tensor([True]).positive(),
    ]
    for fn in cases:
        with pytest.raises(Exception) as theirs:
            fn(torch)
        with pytest.raises(type(theirs.value)) as ours:
            fn(gradwalk)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.lgamma(x.abs()), lambda m, x, y: m.digamma(x.abs()), lambda m, x, y: m.logit(x.abs() / 3),
    lambda m, x, y: m.hypot(x, y), lambda m, x, y: m.xlogy(x, y.abs()), lambda m, x, y: m.sinc(x),
    lambda m, x, y: m.logaddexp2(x, y), lambda m, x, y: m.celu(x, 0.5), lambda m, x, y: m.selu(x),
    lambda m, x, y: m.mvlgamma(x.abs() + 2, 2), lambda m, x, y: m.i0(x), lambda m, x, y: m.copysign(x, y),
    lambda m, x, y: m.fmax(x, y) * x, lambda m, x, y: m.ldexp(x, y),
])
def test_double_backward_matches_torch(fn):
    """create_graph=True: the gradient's own gradient, as torch's."""
    def second(m):
        x = m.tensor([0.3, -1.2, 2.0, 0.7], requires_grad=True)
        y = m.tensor([1.5, 0.5, -2.0, 3.0], requires_grad=True)
        grads = m.autograd.grad(fn(m, x, y).sum(), (x, y), create_graph=True, allow_unused=True)
        total = sum((g * g).sum() for g in grads if g is not None)
        return m.autograd.grad(total, (x, y), allow_unused=True)

    for ours, theirs in zip(second(gradwalk), second(torch)):
        if theirs is None:
            assert ours is None
        else:
            assert_same(ours, theirs, rtol=1e-4, atol=1e-5)


def test_shifts_and_more_inplace_match_torch():
    for m_dtype in ("int64", "int32", "uint8"):
        a, at = both([1, 8, 5], m_dtype)
        s, st = both([1, 2, 70], "int64")
        assert_same(gradwalk.bitwise_left_shift(a, 2), torch.bitwise_left_shift(at, 2))
        assert_same(a.bitwise_right_shift(s), at.bitwise_right_shift(st))
        assert_same(a.clone().bitwise_left_shift_(s), at.clone().bitwise_left_shift_(st))
    n, nt = both([-8, -1, 3], "int64")
    assert_same(gradwalk.bitwise_right_shift(n, 65), torch.bitwise_right_shift(nt, 65))
    x, xt = both([0.3, 0.6])
    y, yt = both([1.3, 0.6])
    assert_same(x.clone().igamma_(y), xt.clone().igamma_(yt))
    assert_same(x.clone().igammac_(y), xt.clone().igammac_(yt))
    assert_same(x.clone().nextafter_(y), xt.clone().nextafter_(yt))
