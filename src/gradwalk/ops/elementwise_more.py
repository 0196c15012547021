"""The rest of PyTorch's elementwise functions (``deg2rad``, ``copysign``, ``hypot``, ``xlogy``,
``lgamma``, ``fmax``, ``hardshrink``, ...) and the in-place ``_`` variants and aliases of ops
defined elsewhere (``x.acos_()``, ``x.clamp_min_(0)``, ``x.eq_(y)``, ``x.t_()``, ``x.less(y)``).

Each class is one ATen op, as in ``pointwise.py``: its backward node's name, a NumPy forward,
what it saves and its backward formula from PyTorch's ``tools/autograd/derivatives.yaml``,
written with gradwalk's own tensor ops (so ``create_graph=True`` works). PyTorch's composite
ops (``ldexp``'s cousin ``float_power``, ``positive``, ``selu``) are built from existing ops.
"""
import math
import numbers

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from .._dtype import float64, get_default_dtype
from ..return_types import _return_type
from . import extra as E
from . import pointwise as P
from ._util import as_tensor_arg, broadcast_shapes_or_raise, export, normalize_dim
from .core import Op, apply_op, result_dtype
from .inplace import _inplace as _write_into
from .pointwise import _binary, _errstate, _unary

_DEG = math.pi / 180.0


def _F():
    from . import functions  # (at call time: functions imports this module)

    return functions


def _mask(array):
    """A NumPy boolean array as a tensor (for ``g * mask`` inside formulas)."""
    return _tensor.Tensor._make(np.asarray(array))


def _into(op, self, others=(), attrs=None):
    """``op`` written into ``self`` (inplace.py's ``_inplace``), with PyTorch's message for
    operands that do not broadcast."""
    try:
        return _write_into(op, self, others, attrs)
    except ValueError:
        for other in others:
            if isinstance(other, _tensor.Tensor):
                broadcast_shapes_or_raise(self.shape, other.shape)
        raise


def _special():
    try:
        import scipy.special
    except ImportError:  # scipy ships with scikit-learn; gradwalk does not require it otherwise
        raise RuntimeError("lgamma, digamma, polygamma, mvlgamma and i0's gradient need scipy "
                           "(pip install scipy)") from None
    return scipy.special


def _floating(x):
    """An integer or bool array computes in the default float dtype, as PyTorch's float ops."""
    return x if x.dtype.kind == "f" else x.astype(get_default_dtype().np)


# ---------------------------------------------------------------- one input

class Deg2Rad(Op):
    name = "Deg2RadBackward0"

    def forward(x):
        x = _floating(x)
        return x * x.dtype.type(_DEG)

    def backward(ctx, g):
        return g * _DEG,

    def jvp(x, out, dx):
        return dx * _DEG


class Rad2Deg(Op):
    name = "Rad2DegBackward0"

    def forward(x):
        x = _floating(x)
        return x * x.dtype.type(1 / _DEG)

    def backward(ctx, g):
        return g * (1 / _DEG),

    def jvp(x, out, dx):
        return dx * (1 / _DEG)


class Logit(Op):
    name = "LogitBackward0"
    saves_attrs = ("eps",)

    def forward(x, eps=None):
        if eps is not None:
            x = np.clip(x, eps, 1 - eps).astype(x.dtype, copy=False)
        with _errstate():
            return np.log(x / (1 - x))

    def save(ctx, x, out, eps=None):
        ctx.save(self=x)

    def backward(ctx, g):
        x, eps = ctx.self, ctx._attrs["eps"]
        grad = g / (x * (-x + 1))
        if eps is None:
            return grad,
        outside = (x._data < eps) | (x._data > 1 - eps)
        return grad * _mask(~outside),

    def jvp(x, out, dx, eps=None):
        d = dx / (x * (-x + 1))
        if eps is None:
            return d
        return d * _mask(~((x._data < eps) | (x._data > 1 - eps)))


class Sinc(Op):
    name = "SincBackward0"

    def forward(x):
        x = _floating(x)
        return np.sinc(x).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        # ((pi x cos(pi x) - sin(pi x)) / (pi x^2)), 0 at x == 0
        x = ctx.self
        px = x * math.pi
        d = (px * px.cos() - px.sin()) / (px * x)
        return g * _F().where(_mask(x._data == 0), 0.0, d),

    def jvp(x, out, dx):
        px = x * math.pi
        return dx * _F().where(_mask(x._data == 0), 0.0, (px * px.cos() - px.sin()) / (px * x))


class Lgamma(Op):
    name = "LgammaBackward0"

    def forward(x):
        x = _floating(x)
        with _errstate():
            return _special().gammaln(x).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * digamma(ctx.self),

    def jvp(x, out, dx):
        return dx * digamma(x)


class Digamma(Op):
    name = "DigammaBackward0"

    def forward(x):
        x = _floating(x)
        with _errstate():
            out = _special().psi(x)
        out = np.where(x == 0, -np.copysign(np.inf, x), out)  # PyTorch: digamma(+-0) = -+inf
        return out.astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * polygamma(1, ctx.self),

    def jvp(x, out, dx):
        return dx * polygamma(1, x)


class Polygamma(Op):
    name = "PolygammaBackward0"
    saves_attrs = ("n",)

    def forward(x, n):
        x = _floating(x)
        if n == 0:
            return Digamma.forward(x)
        with _errstate():
            return _special().polygamma(n, x).astype(x.dtype, copy=False)

    def save(ctx, x, out, n):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * polygamma(ctx._attrs["n"] + 1, ctx.self),

    def jvp(x, out, dx, n):
        return dx * polygamma(n + 1, x)


class PolygammaInplace(Polygamma):
    name = "PolygammaBackward1"


class Mvlgamma(Op):
    name = "MvlgammaBackward0"
    saves_attrs = ("p",)

    def forward(x, p):
        with _errstate():
            terms = sum(_special().gammaln(x - i / 2) for i in range(p))
            return (terms + p * (p - 1) / 4 * math.log(math.pi)).astype(x.dtype, copy=False)

    def save(ctx, x, out, p):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * sum(digamma(x - i / 2) for i in range(ctx._attrs["p"])),

    def jvp(x, out, dx, p):
        return dx * sum(digamma(x - i / 2) for i in range(p))


class I0(Op):
    name = "I0Backward0"

    def forward(x):
        x = _floating(x)
        return np.i0(x).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * apply_op(I1, (ctx.self,)),

    def jvp(x, out, dx):
        return dx * apply_op(I1, (x,))


class I1(Op):
    """The modified Bessel function of the first kind, order 1 (``torch.special.i1``): i0's
    derivative. Its own is ``i0(x) - i1(x) / x`` (1/2 at 0), PyTorch's i1_backward."""

    name = "SpecialI1Backward0"

    def forward(x):
        return _special().i1(x).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x, r = ctx.self, ctx.result
        with _errstate():
            d = i0(x) - r / x
        return g * _F().where(_mask(x._data == 0), 0.5, d),


class Sgn(Op):
    """``sgn`` of a real tensor is ``sign``; its gradient is zero."""

    name = "SgnBackward0"

    def forward(x):
        return np.sign(x)

    def backward(ctx, g):
        return g * 0.0,

    def jvp(x, out, dx):
        return dx * 0.0


class Angle(Op):
    """The angle of a real number: 0 for x >= 0, pi for x < 0 (nan stays nan); gradient zero."""

    name = "AngleBackward0"

    def forward(x):
        x = _floating(x)
        return np.where(x < 0, x.dtype.type(math.pi), np.where(np.isnan(x), x, 0)).astype(x.dtype)

    def backward(ctx, g):
        return g * 0.0,

    def jvp(x, out, dx):
        return dx * 0.0


class Hardshrink(Op):
    name = "HardshrinkBackward0"
    saves_attrs = ("lambd",)

    def forward(x, lambd=0.5):
        return np.where((x >= -lambd) & (x <= lambd), x.dtype.type(0), x)

    def save(ctx, x, out, lambd=0.5):
        ctx.save(self=x)

    def backward(ctx, g):
        x, lambd = ctx.self._data, ctx._attrs["lambd"]
        return g * _mask(~((x >= -lambd) & (x <= lambd))),

    def jvp(x, out, dx, lambd=0.5):
        return dx * _mask(~((x._data >= -lambd) & (x._data <= lambd)))


class Celu(Op):
    """``celu(x, alpha) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    name = "CeluBackward0"
    saves_attrs = ("alpha",)

    def forward(x, alpha=1.0):
        with _errstate():
            return np.where(x > 0, x, alpha * np.expm1(x / alpha)).astype(x.dtype, copy=False)

    def save(ctx, x, out, alpha=1.0):
        ctx.save(self=x)

    def backward(ctx, g):
        x, alpha = ctx.self, ctx._attrs["alpha"]
        return _F().where(x > 0, g, g * (x / alpha).exp()),

    def jvp(x, out, dx, alpha=1.0):
        return _F().where(x > 0, dx, dx * (x / alpha).exp())


class CeluInplace(Celu):
    name = "CeluBackward1"


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class Selu(Op):
    """``selu`` is ATen's ``elu(x, alpha, scale)``: its node is an EluBackward0."""

    name = "EluBackward0"

    def forward(x):
        with _errstate():
            return (_SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x))).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return _F().where(x > 0, g * _SELU_SCALE, g * (x.exp() * (_SELU_SCALE * _SELU_ALPHA))),

    def jvp(x, out, dx):
        return _F().where(x > 0, dx * _SELU_SCALE, dx * (x.exp() * (_SELU_SCALE * _SELU_ALPHA)))


class SeluInplace(Selu):
    name = "EluBackward1"


class RreluWithNoise(Op):
    """``rrelu``: negative inputs scaled by ``noise`` (random in training, (lower+upper)/2 else)."""

    name = "RreluWithNoiseBackward0"

    def forward(x, noise):
        return np.where(x >= 0, x, x * noise).astype(x.dtype, copy=False)

    def backward(ctx, g):
        return g * _tensor.Tensor._make(ctx._attrs_noise),

    def save(ctx, x, out, noise):
        ctx._attrs_noise = np.where(x._data > 0, 1, noise).astype(x._data.dtype)

    def jvp(x, out, dx, noise):
        return dx * _tensor.Tensor._make(np.where(x._data > 0, 1, noise).astype(x._data.dtype))


# ---------------------------------------------------------------- two inputs

def _copysign_self_backward(g, x, result):
    """PyTorch's copysign_tensor_self_backward: ``grad * result / self``, 0 where ``self == 0``."""
    with _errstate():
        ratio = result / x
    return g * _F().where(_mask(x._data == 0), 0.0, ratio)


class Copysign(Op):
    name = "CopysignBackward0"

    def forward(x, y):
        return np.copysign(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        return _copysign_self_backward(g, ctx.self, ctx.result), (g * 0.0 if ctx.needs_input_grad[1] else None)

    def jvp(x, y, out, dx, dy):
        with _errstate():
            ratio = np.where(x._data == 0, 0, out._data / x._data).astype(x._data.dtype)
        return dx * _tensor.Tensor._make(ratio)


class CopysignScalar(Op):
    name = "CopysignBackward1"
    saves_attrs = ("other",)

    def forward(x, other):
        return np.copysign(x, x.dtype.type(other))

    def save(ctx, x, out, other):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        return _copysign_self_backward(g, ctx.self, ctx.result),

    def jvp(x, out, dx, other):
        with _errstate():
            ratio = np.where(x._data == 0, 0, out._data / x._data).astype(x._data.dtype)
        return dx * _tensor.Tensor._make(ratio)


class Hypot(Op):
    name = "HypotBackward0"

    def forward(x, y):
        return np.hypot(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)
        ctx.save_result("result", out)

    def backward(ctx, g):
        r = ctx.result
        return g * ctx.self / r, (g * ctx.other / r if ctx.needs_input_grad[1] else None)

    def jvp(x, y, out, dx, dy):
        return (dx * x + dy * y) / out


class Xlogy(Op):
    name = "XlogyBackward0"

    def forward(x, y):
        if x.dtype.kind != "f" and y.dtype.kind != "f":
            x, y = _floating(x), _floating(y)
        with _errstate():
            return np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y)).astype(np.result_type(x, y))

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        need = ctx.needs_input_grad
        return (g * y.log() if need[0] else None,
                g * x / y if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return dx * y.log() + dy * x / y


class XlogyScalarSelf(Op):
    """``xlogy(2.0, y)``: the number gets no edge."""

    name = "XlogyBackward1"
    saves_attrs = ("self",)

    def forward(y, self):
        return Xlogy.forward(y.dtype.type(self), y)

    def save(ctx, y, out, self):
        ctx.save(other=y)

    def backward(ctx, g):
        return g * ctx._attrs["self"] / ctx.other,

    def jvp(y, out, dy, self):
        return dy * self / y


class XlogyScalarOther(Op):
    name = "XlogyBackward2"
    saves_attrs = ("other",)

    def forward(x, other):
        return Xlogy.forward(x, x.dtype.type(other))

    def backward(ctx, g):
        return g * math.log(ctx._attrs["other"]),

    def jvp(x, out, dx, other):
        return dx * math.log(other)


def _power_of_two(y):
    """``pow(2, other)`` as PyTorch computes it: an integer ``other`` gives integers (2 ** -1 == 0)."""
    if y.dtype.kind in "iub":
        return np.where(y < 0, 0, np.left_shift(1, np.clip(y, 0, 62).astype(np.int64)))
    return np.exp2(y)


class Ldexp(Op):
    """``input * 2 ** other``."""

    name = "LdexpBackward0"

    def forward(x, y):
        return (x * _power_of_two(y)).astype(x.dtype, copy=False)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        need = ctx.needs_input_grad
        if y.dtype.is_floating_point:  # input * pow(2, other): both differentiable
            scale = _F().exp2(y)
            return (g * scale if need[0] else None, g * x * scale * math.log(2.0) if need[1] else None)
        scale = _tensor.Tensor._make(np.asarray(_power_of_two(y._data)).astype(x._data.dtype))
        return g * scale, None

    def jvp(x, y, out, dx, dy):
        return dx * _tensor.Tensor._make(np.asarray(_power_of_two(y._data)).astype(x._data.dtype))


class _FMaxMin(Op):
    keep_self = None  # np.greater_equal for fmax, np.less_equal for fmin

    @classmethod
    def save(cls, ctx, x, y, out):
        xd, yd = x._data, y._data
        ctx.mask_self = cls.keep_self(xd, yd) | np.isnan(yd)  # where the result is self's value

    def backward(ctx, g):
        keep = ctx.mask_self
        need = ctx.needs_input_grad
        return (g * _mask(keep) if need[0] else None, g * _mask(~keep) if need[1] else None)

    @classmethod
    def jvp(cls, x, y, out, dx, dy):
        keep = _mask(cls.keep_self(x._data, y._data) | np.isnan(y._data))
        return _F().where(keep, dx, dy)


class Fmax(_FMaxMin):
    name = "FmaxBackward0"
    keep_self = np.greater_equal

    def forward(x, y):
        return np.fmax(x, y)


class Fmin(_FMaxMin):
    name = "FminBackward0"
    keep_self = np.less_equal

    def forward(x, y):
        return np.fmin(x, y)


class Logaddexp2(Op):
    name = "Logaddexp2Backward0"

    def forward(x, y):
        return np.logaddexp2(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        need = ctx.needs_input_grad
        return (g / (_F().exp2(y - x) + 1) if need[0] else None,
                g / (_F().exp2(x - y) + 1) if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return dx / (_F().exp2(y - x) + 1) + dy / (_F().exp2(x - y) + 1)


class Heaviside(Op):
    """No derivative in PyTorch: its node is ``NotImplemented``, which fails in backward."""

    name = "NotImplemented"

    def forward(x, values):
        return np.where(x == 0, values, (x > 0).astype(np.result_type(x, values)))

    def backward(ctx, g):
        raise RuntimeError("the derivative for 'heaviside' is not implemented.")


Heaviside.Node.name = lambda self: "torch::autograd::NotImplemented"


# ---------------------------------------------------------------- the functions users call

@export()
def deg2rad(input):
    return _unary(Deg2Rad, input)


@export()
def rad2deg(input):
    return _unary(Rad2Deg, input)


@export()
def logit(input, eps=None):
    return _unary(Logit, input, {"eps": eps})


@export()
def sinc(input):
    return _unary(Sinc, input)


@export()
def lgamma(input):
    return _unary(Lgamma, input)


@export()
def digamma(input):
    return _unary(Digamma, input)


@export(method=False)
def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _unary(Polygamma, input, {"n": int(n)})


def _polygamma_method(self, n):
    return polygamma(n, self)


export("polygamma", function=False)(_polygamma_method)


@export()
def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = as_tensor_arg(input)
    if not x.dtype.is_floating_point:
        raise RuntimeError("mvlgamma is not implemented for Long tensors" if x.dtype.short_name == "Long"
                           else f"mvlgamma is not implemented for {x.dtype.short_name} tensors")
    return apply_op(Mvlgamma, (x,), {"p": int(p)})


@export()
def i0(input):
    return _unary(I0, input)


@export()
def sgn(input):
    return apply_op(Sgn, (as_tensor_arg(input),))


@export()
def angle(input):
    return _unary(Angle, input)


@export()
def positive(input):
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@export()
def hardshrink(input, lambd=0.5):
    return apply_op(Hardshrink, (input,), {"lambd": lambd})


@export(method=False)
def celu(input, alpha=1.0):
    return apply_op(Celu, (input,), {"alpha": alpha})


@export(method=False)
def celu_(input, alpha=1.0):
    return _into(CeluInplace, input, (), {"alpha": alpha})


@export(method=False)
def selu(input):
    return apply_op(Selu, (input,))


@export(method=False)
def selu_(input):
    return _into(SeluInplace, input)


def _rrelu_noise(input, lower, upper, training, generator=None):
    if not training:
        return (lower + upper) / 2
    from .random_ops import uniform_  # the default generator, as PyTorch's rrelu

    return np.asarray(uniform_(_F().empty(input.shape, dtype=input.dtype), lower, upper,
                                generator=generator)._data)


@export(method=False)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return apply_op(RreluWithNoise, (input,), {"noise": _rrelu_noise(input, lower, upper, training, generator)})


@export(method=False)
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _into(RreluWithNoise, input, (), {"noise": _rrelu_noise(input, lower, upper, training, generator)})


@export(method=False)
def threshold(input, threshold, value):
    from ..nn import functional

    return functional.threshold(input, threshold, value)


@export(method=False)
def threshold_(input, threshold, value):
    from ..nn import functional

    return functional.threshold(input, threshold, value, inplace=True)


def _float_binary(op, input, other):
    """A binary float op: two integer tensors compute in the default float dtype."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if not (a.dtype.is_floating_point or b.dtype.is_floating_point):
        return apply_op(op, (a, b), out_dtype=get_default_dtype())
    return _binary(op, a, b)


@export()
def copysign(input, other):
    if isinstance(other, numbers.Number) and not isinstance(other, bool):
        x = as_tensor_arg(input)
        return apply_op(CopysignScalar, (x,), {"other": float(other)},
                        out_dtype=None if x.dtype.is_floating_point else get_default_dtype())
    return _float_binary(Copysign, input, other)


@export()
def hypot(input, other):
    for t in (input, other):
        if isinstance(t, _tensor.Tensor) and not t.dtype.is_floating_point:
            raise NotImplementedError(f'"hypot_cpu" not implemented for \'{t.dtype.short_name}\'')
    return _binary(Hypot, input, other)


@export()
def xlogy(input, other):
    Tensor = _tensor.Tensor
    if not isinstance(input, Tensor):
        y = as_tensor_arg(other)
        return apply_op(XlogyScalarSelf, (y,), {"self": input},
                        out_dtype=None if y.dtype.is_floating_point else get_default_dtype())
    if not isinstance(other, Tensor):
        return apply_op(XlogyScalarOther, (input,), {"other": other},
                        out_dtype=None if input.dtype.is_floating_point else get_default_dtype())
    return _float_binary(Xlogy, input, other)


@export()
def ldexp(input, other):
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    dtype = result_dtype(a, b)
    if not dtype.is_floating_point:
        dtype = get_default_dtype()
    return apply_op(Ldexp, (a, b), out_dtype=dtype)


@export()
def fmax(input, other):
    return _binary(Fmax, input, other)


@export()
def fmin(input, other):
    return _binary(Fmin, input, other)


@export()
def logaddexp2(input, other):
    return _binary(Logaddexp2, input, other)


@export()
def heaviside(input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _binary(Heaviside, input, values)


def _integer_only(name, *tensors):
    for t in tensors:
        if t.dtype.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{t.dtype.short_name}\'')


def _no_grad_result(data, dtype):
    return _tensor.Tensor._make(np.asarray(data).astype(dtype.np))


@export()
def gcd(input, other):
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    _integer_only("gcd", a, b)
    return _no_grad_result(np.gcd(a._data, b._data), result_dtype(a, b))


@export()
def lcm(input, other):
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    _integer_only("lcm", a, b)
    return _no_grad_result(np.lcm(a._data, b._data), result_dtype(a, b))


frexp_type = _return_type("frexp", ("mantissa", "exponent"))


@export()
def frexp(input):
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(input._data)
    Tensor = _tensor.Tensor
    return frexp_type(Tensor._make(np.asarray(mantissa)), Tensor._make(np.asarray(exponent, dtype=np.int32)))


@export()
def float_power(input, exponent):
    """PyTorch's composite: both sides in float64, then ``pow`` (PowBackward0 / PowBackward1)."""
    Tensor = _tensor.Tensor
    if isinstance(input, Tensor):
        input = input.to(float64)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(float64)
    return P.pow(input, exponent)


@export(function=False)
def float_power_(self, exponent):
    if self.dtype != float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.short_name} but the "
                           "operation's result requires dtype Double")
    if isinstance(exponent, _tensor.Tensor):
        exponent = exponent.to(float64)
        return _into(P.PowTensor, self, (exponent,))
    return _into(P.PowScalar, self, (), {"exponent": exponent})


def _predicate(np_fn):
    def fn(input):
        return E._make(np_fn(input._data))  # (a meta tensor's result stays on the meta device)

    return fn


signbit = export("signbit")(_predicate(np.signbit))
isposinf = export("isposinf")(_predicate(np.isposinf))
isneginf = export("isneginf")(_predicate(np.isneginf))
isreal = export("isreal")(_predicate(lambda x: np.ones(x.shape, dtype=bool)))


# ---------------------------------------------------------------- in-place variants of ops defined elsewhere

def _check_float_into(self, name):
    """``torch.tensor([1, 2]).acos_()``: a float result cannot be written into an integer tensor."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"result type {get_default_dtype().short_name} can't be cast to the desired "
                           f"output type {self.dtype.short_name}")


def _float_unary_inplace(name, op, function):
    def fn(self):
        _check_float_into(self, name)
        return _into(op, self)

    fn.__name__ = name
    return export(name, function=function)(fn)


def _same_dtype_unary_inplace(name, op, function, attrs=None):
    def fn(self):
        return _into(op, self, (), attrs)

    fn.__name__ = name
    return export(name, function=function)(fn)


_INPLACE = {}
# (name, op, whether PyTorch has torch.<name> as well as Tensor.<name>)
def _no_inplace_derivative(op, node_name):
    """``x.atanh_()``: PyTorch names the node AtanhBackward1 and has no formula for it (backward
    fails); ``x.atanh()`` differentiates as usual."""
    what = op.__name__.lower()

    def backward(ctx, g):
        raise NotImplementedError(f"the derivative for 'inplace version of {what}' is not implemented.")

    return type(op.__name__ + "Inplace", (op,), {"name": node_name, "backward": backward})


for _name, _op, _function in (
        ("acos_", E.Acos, True), ("acosh_", _no_inplace_derivative(E.Acosh, "AcoshBackward1"), True),
        ("asin_", E.Asin, True), ("asinh_", _no_inplace_derivative(E.Asinh, "AsinhBackward1"), True),
        ("atan_", E.Atan, True), ("atanh_", _no_inplace_derivative(E.Atanh, "AtanhBackward1"), True),
        ("cosh_", E.Cosh, True), ("sinh_", E.Sinh, True), ("tan_", P.Tan, True),
        ("erf_", E.Erf, True), ("erfc_", E.Erfc, True), ("erfinv_", E.Erfinv, False),
        ("exp2_", E.Exp2, True), ("expm1_", P.Expm1, True), ("log10_", E.Log10, True),
        ("log1p_", P.Log1p, True), ("log2_", E.Log2, True), ("rsqrt_", P.Rsqrt, True),
        ("reciprocal_", P.Reciprocal, True), ("deg2rad_", Deg2Rad, True), ("rad2deg_", Rad2Deg, True),
        ("sinc_", Sinc, True), ("lgamma_", Lgamma, False), ("digamma_", Digamma, False),
        ("i0_", I0, True)):
    _INPLACE[_name] = _float_unary_inplace(_name, _op, _function)

for _name, _op, _function in (
        ("sign_", P.Sign, False), ("sgn_", Sgn, False), ("floor_", P.Floor, True),
        ("ceil_", P.Ceil, True), ("round_", P.Round, True), ("trunc_", E.Trunc, True),
        ("fix_", E.Trunc, True), ("frac_", E.Frac, True)):
    _same_dtype_unary_inplace(_name, _op, _function)

for _name, _alias in (("arccos_", "acos_"), ("arccosh_", "acosh_"), ("arcsin_", "asin_"),
                      ("arcsinh_", "asinh_"), ("arctan_", "atan_"), ("arctanh_", "atanh_")):
    export(_name)(_INPLACE[_alias])


def _method(name):
    from ._util import METHODS

    return METHODS[name]


@export()
def square_(self):
    return _into(P.PowScalar, self, (), {"exponent": 2})


@export()
def logit_(self, eps=None):
    _check_float_into(self, "logit_")
    return _into(Logit, self, (), {"eps": eps})


@export(function=False)
def polygamma_(self, n):
    _check_float_into(self, "polygamma_")
    return _into(PolygammaInplace, self, (), {"n": int(n)})


@export(function=False)
def mvlgamma_(self, p):
    mvlgamma(self, p)  # its checks
    return _into(Mvlgamma, self, (), {"p": int(p)})


@export()
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return _into(E.NanToNum, self, (), {"nan": nan, "posinf": posinf, "neginf": neginf})


@export()
def clamp_min_(self, min):
    return _into(P.ClampMin, self, (), {"min": min})


@export()
def clamp_max_(self, max):
    return _into(P.ClampMax, self, (), {"max": max})


@export(function=False)
def atan2_(self, other):
    _check_float_into(self, "atan2_")
    return _into(E.Atan2, self, (other,))


export("arctan2_", function=False)(atan2_)


def _mod_inplace(scalar_op, tensor_op):
    def fn(self, other):
        if isinstance(other, numbers.Number) and not isinstance(other, bool):
            if isinstance(other, float):
                _check_float_into(self, fn.__name__)
            return _into(scalar_op, self, (), {"other": other})
        return _into(tensor_op, self, (other,))

    return fn


fmod_ = export("fmod_", function=False)(_mod_inplace(E.FmodScalar, E.FmodTensor))
remainder_ = export("remainder_", function=False)(_mod_inplace(E.RemainderScalar, E.RemainderTensor))
fmod_.__name__, remainder_.__name__ = "fmod_", "remainder_"


@export(function=False)
def lerp_(self, end, weight):
    if isinstance(weight, numbers.Number):
        return _into(E.LerpScalar, self, (end,), {"weight": weight})
    return _into(E.LerpTensor, self, (end, weight))


@export(function=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    return _into(E.Addcmul, self, (tensor1, tensor2), {"value": value})


@export(function=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return _into(E.Addcdiv, self, (tensor1, tensor2), {"value": value})


@export(function=False)
def copysign_(self, other):
    _check_float_into(self, "copysign_")
    if isinstance(other, numbers.Number) and not isinstance(other, bool):
        return _into(CopysignScalar, self, (), {"other": float(other)})
    return _into(Copysign, self, (other,))


@export(function=False)
def hypot_(self, other):
    return _into(Hypot, self, (other,))


@export()
def xlogy_(self, other):
    _check_float_into(self, "xlogy_")
    if not isinstance(other, _tensor.Tensor):
        return _into(XlogyScalarOther, self, (), {"other": other})
    return _into(Xlogy, self, (other,))


@export()
def ldexp_(self, other):
    _check_float_into(self, "ldexp_")
    return _into(Ldexp, self, (other,))


@export(function=False)
def cumsum_(self, dim, *, dtype=None):
    return _into(E.Cumsum, self, (), {"dim": normalize_dim(dim, self.ndim), "dtype": self.dtype.np})


@export(function=False)
def cumprod_(self, dim, *, dtype=None):
    return _into(E.Cumprod, self, (), {"dim": normalize_dim(dim, self.ndim), "dtype": self.dtype.np})


@export(function=False)
def tril_(self, diagonal=0):
    E._check_matrix("tril", self)
    return _into(E.Tril, self, (), {"diagonal": diagonal})


@export(function=False)
def triu_(self, diagonal=0):
    E._check_matrix("triu", self)
    return _into(E.Triu, self, (), {"diagonal": diagonal})


# comparisons in place: ``x.eq_(y)`` writes 1/0 in x's dtype; the gradient is zero
# (EqBackward0 for a number, EqBackward1 for a tensor)

def _comparison_inplace(name, np_fn):
    def forward(x, y):
        return np_fn(x, y)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return g * 0.0, (g * 0.0 if len(need) > 1 and need[1] else None)

    def make(node_name):
        return type(node_name, (Op,), {"name": node_name, "forward": forward, "backward": backward})

    title = name[0].upper() + name[1:]
    scalar_op, tensor_op = make(f"{title}Backward0"), make(f"{title}Backward1")

    def fn(self, other):
        is_tensor = isinstance(other, _tensor.Tensor)
        return _into(tensor_op if is_tensor else scalar_op, self, (other,))

    fn.__name__ = name + "_"
    return export(name + "_", function=False)(fn)


for _name, _np_fn, _aliases in (("eq", np.equal, ()), ("ne", np.not_equal, ("not_equal_",)),
                                ("lt", np.less, ("less_",)), ("le", np.less_equal, ("less_equal_",)),
                                ("gt", np.greater, ("greater_",)), ("ge", np.greater_equal, ("greater_equal_",))):
    _fn = _comparison_inplace(_name, _np_fn)
    for _alias in _aliases:
        export(_alias, function=False)(_fn)

for _name, _fn in (("greater", P.gt), ("greater_equal", P.ge), ("less", P.lt), ("less_equal", P.le),
                   ("not_equal", P.ne)):
    export(_name)(_fn)


class _Overwrite(Op):
    """An in-place op with no derivative (``x.logical_and_(y)``, ``x.floor_divide_(y)``): the value
    computed beforehand, written into ``x``; backward through it fails, as PyTorch's NotImplemented."""

    name = "NotImplemented"
    saves_attrs = ("op",)

    def forward(x, value, op):
        return value

    def backward(ctx, g):
        raise RuntimeError(f"the derivative for '{ctx._attrs['op']}' is not implemented.")


_Overwrite.Node.name = lambda self: "torch::autograd::NotImplemented"


def _overwrite(self, name, result):
    data = np.asarray(result._data)
    if data.dtype.kind == "f" and self.dtype.np.kind not in "fc":
        raise RuntimeError(f"result type {result.dtype.short_name} can't be cast to the desired output "
                           f"type {self.dtype.short_name}")
    return _into(_Overwrite, self, (), {"value": data, "op": name})


def _overwriting(name, compute, function=False):
    def fn(self, *args, **kwargs):
        return _overwrite(self, name, compute(self.detach(), *args, **kwargs))

    fn.__name__ = name + "_"
    return export(name + "_", function=function)(fn)


def _detached(value):
    return value.detach() if isinstance(value, _tensor.Tensor) else value


def _misc(name):
    from . import misc

    return getattr(misc, name)


for _name in ("logical_and", "logical_or", "logical_xor"):
    _overwriting(_name, lambda self, other, _f=getattr(P, _name): _f(self, _detached(other)))
_overwriting("logical_not", lambda self: P.logical_not(self))
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _overwriting(_name, lambda self, other, _n=_name: _misc(_n)(self, _detached(other)))
_overwriting("bitwise_not", lambda self: _misc("bitwise_not")(self))
_overwriting("floor_divide", lambda self, other: P.div(self, _detached(other), rounding_mode="floor"))
_overwriting("gcd", lambda self, other: gcd(self, _detached(other)), function=True)
_overwriting("lcm", lambda self, other: lcm(self, _detached(other)), function=True)
_overwriting("heaviside", lambda self, values: heaviside(self, _detached(values)))


# the aliases PyTorch documents for in-place arithmetic

@export("multiply_", function=False)
def multiply_(self, other):
    return _method("mul_")(self, other)


@export("subtract_", function=False)
def subtract_(self, other, *, alpha=1):
    return _method("sub_")(self, other, alpha=alpha)


@export("divide_", function=False)
def divide_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _method("div_")(self, other)
    return _overwrite(self, "div", P.div(self.detach(), _detached(other), rounding_mode=rounding_mode))


@export("true_divide_", function=False)
def true_divide_(self, other):
    return _method("div_")(self, other)


@export("absolute_", function=False)
def absolute_(self):
    return _method("abs_")(self)


@export("negative_")
def negative_(self):
    return _method("neg_")(self)


# in-place transposes: the tensor itself becomes the view (TBackward1, TransposeBackward1)

def _shape():
    from . import shape

    return shape


class _TInplace(_shape().T):
    name = "TBackward1"


class _TransposeInplace(_shape().Transpose):
    name = "TransposeBackward1"


@export(function=False)
def t_(self):
    from .tensor_api import _inplace_view

    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _inplace_view(self, _TInplace, {})


@export("transpose_", "swapdims_", "swapaxes_", function=False)
def transpose_(self, dim0, dim1):
    from .tensor_api import _inplace_view

    d0, d1 = normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)
    return _inplace_view(self, _TransposeInplace, {"dim0": d0, "dim1": d1})


export("swapdims")(_shape().transpose)


@export()
def floor_divide(input, other):
    """``torch.floor_divide``: the quotient rounded down (``x // y``); no gradient."""
    return P.div(input, other, rounding_mode="floor")


@export(function=False)
def igamma_(self, other):
    return _into(E.Igamma, self, (other,))


@export(function=False)
def igammac_(self, other):
    return _into(E.Igammac, self, (other,))


@export(function=False)
def nextafter_(self, other):
    return _into(E.Nextafter, self, (other,))


# ---------------------------------------------------------------- shifts (integers; no gradient)

def _shift(name, input, other, left):
    """PyTorch's shifts: a shift past the type's width gives 0 (left) or the sign (right)."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    kernel = "lshift" if left else "rshift"
    for t in (a, b):
        if t.dtype.is_floating_point:
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{t.dtype.short_name}\'')
    dtype = result_dtype(a, b)
    x, s = np.asarray(a._data).astype(dtype.np), np.asarray(b._data).astype(dtype.np)
    bits = x.dtype.itemsize * 8
    inside = np.clip(s, 0, bits - 1)
    if left:
        data = np.where(s >= bits, 0, np.left_shift(x, inside))
    else:
        data = np.where(s >= bits, np.where(x < 0, -1, 0), np.right_shift(x, inside))
    return _no_grad_result(data, dtype)


@export()
def bitwise_left_shift(input, other):
    return _shift("bitwise_left_shift", input, other, left=True)


@export()
def bitwise_right_shift(input, other):
    return _shift("bitwise_right_shift", input, other, left=False)


_overwriting("bitwise_left_shift", lambda self, other: bitwise_left_shift(self, _detached(other)))
_overwriting("bitwise_right_shift", lambda self, other: bitwise_right_shift(self, _detached(other)))
