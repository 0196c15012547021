"""Elementwise ops: arithmetic, powers, activations, comparisons.

Each class is one ATen op: its backward node's name, a NumPy forward, what it saves, its
backward formula (gradient in, one gradient per input out) and its jvp (forward mode). Backward
formulas return un-reduced, broadcast-shaped gradients; the engine sums them to each input's shape.
"""
from math import isfinite as _isfinite  # a NumPy scalar's check without a ufunc call

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .._meta import MetaArray
from .._dtype import get_default_dtype
from .._dtype import _BY_NUMPY
from ._util import as_tensor_arg, broadcast_shapes_or_raise, deprecated_alpha_overload, export, wrap_number
from ..grad_mode import _state as _grad_state
from . import _float32_kernels as _k32
from .core import _NO_ATTRS, Op, apply_op, observers as _observers, result_dtype

_ndarray = np.ndarray
_F32 = np.dtype(np.float32)  # float32 data goes through _float32_kernels: PyTorch's bits
_F64 = np.dtype(np.float64)  # (and float64 data, for the functions PyTorch computes with MKL)


def _errstate():
    """inf/nan follow IEEE, as in PyTorch, without warnings. A fresh object each time: an
    ``np.errstate`` can be entered only once."""
    return np.errstate(all="ignore")


# ---------------------------------------------------------------- arithmetic

class Add(Op):
    name = "AddBackward0"
    saves_attrs = ("alpha",)

    def forward(x, y, alpha=1):
        if alpha == 1:
            return x + y
        if x.dtype is _F32 and y.dtype is _F32:
            return _k32.fma32(y, np.float32(alpha), x)  # ATen's add_kernel: fmadd(y, alpha, x)
        return x + alpha * y

    def backward(ctx, g):
        a = ctx._attrs["alpha"]
        return g, (g if a == 1 else g * a) if ctx.needs_input_grad[1] else None

    def jvp(x, y, out, dx, dy, alpha=1):
        return dx + dy * alpha


class Sub(Op):
    name = "SubBackward0"
    saves_attrs = ("alpha",)

    def forward(x, y, alpha=1):
        if alpha == 1:
            return x - y
        if x.dtype is _F32 and y.dtype is _F32:
            return _k32.fma32(y, np.float32(-alpha), x)  # (sub is add with -alpha: one FMA)
        return x - alpha * y

    def backward(ctx, g):
        a = ctx._attrs["alpha"]
        return g, (-g if a == 1 else g * -a) if ctx.needs_input_grad[1] else None

    def jvp(x, y, out, dx, dy, alpha=1):
        return dx - dy * alpha


class RsubScalar(Op):
    """``2.0 - x``: the scalar overload, so the number gets no edge."""

    name = "RsubBackward1"
    saves_attrs = ("alpha",)

    def forward(x, other, alpha=1):
        return other - alpha * x if alpha != 1 else other - x

    def backward(ctx, g):
        a = ctx._attrs["alpha"]
        return (-g if a == 1 else g * -a),

    def jvp(x, out, dx, other, alpha=1):
        return -dx * alpha


class Rsub(Op):
    """``torch.rsub(x, y)`` with two tensors: ``y - alpha * x``."""

    name = "RsubBackward0"
    saves_attrs = ("alpha",)

    def forward(x, y, alpha=1):
        return y - x if alpha == 1 else y - alpha * x

    def backward(ctx, g):
        a = ctx._attrs["alpha"]
        return (-g if a == 1 else g * -a), g if ctx.needs_input_grad[1] else None

    def jvp(x, y, out, dx, dy, alpha=1):
        return dy - dx * alpha


class Mul(Op):
    name = "MulBackward0"

    def forward(x, y):
        return x * y

    def save(ctx, x, y, out):
        # a tensor is saved only when the *other* side's gradient needs it (x*2.0 saves no x)
        ctx.save(other=y if ctx.needs_input_grad[0] else None,
                 self=x if ctx.needs_input_grad[1] else None)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (_formula_binary(Mul, g, ctx.other) if need[0] else None,
                _formula_binary(Mul, g, ctx.self) if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return dx * y + x * dy


class MulScalar(Op):
    """``mul.Scalar``: used inside formulas (``exponent * x.pow(exponent - 1)``)."""

    name = "MulBackward1"
    saves_attrs = ("other",)

    def forward(x, other):
        return x * other

    def backward(ctx, g):
        return g * ctx._attrs["other"],

    def jvp(x, out, dx, other):
        return dx * other


class Div(Op):
    name = "DivBackward0"

    def forward(x, y):
        with _errstate():
            return x / y

    def save(ctx, x, y, out):
        ctx.save(self=x if ctx.needs_input_grad[1] else None, other=y)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        y = ctx.other
        return (g / y if need[0] else None,
                -g * ctx.self / (y * y) if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return (dx - out * dy) / y


class Reciprocal(Op):
    name = "ReciprocalBackward0"

    def forward(x):
        with _errstate():
            return 1.0 / x

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        r = ctx.result
        return -g * (r * r),

    def jvp(x, out, dx):
        return -dx * out * out


class Neg(Op):
    name = "NegBackward0"

    def forward(x):
        return -x

    def backward(ctx, g):
        return -g,

    def jvp(x, out, dx):
        return -dx


class PowScalar(Op):
    """``x ** 2.5``"""

    name = "PowBackward0"
    saves_attrs = ("exponent",)

    def forward(x, exponent):
        with _errstate():
            if x.dtype.kind == "f":
                # PyTorch's pow_tensor_scalar_optimized_kernel: these exponents are products
                # (x ** 3 is x * x * x, not powf), -0.5 is rsqrt, -1 reciprocal
                if exponent == 2:
                    return x * x
                if exponent == 3:
                    return x * x * x
                if exponent == -2:
                    return x.dtype.type(1) / (x * x)
                if exponent == -1:
                    return x.dtype.type(1) / x
                if exponent == -0.5:
                    return x.dtype.type(1) / np.sqrt(x)
                if exponent == 0.5 and (x.dtype is _F32 or x.dtype is _F64):
                    return _k32.vml(np.sqrt, x)  # sqrt's kernel: MKL's vmsSqrt / vmdSqrt
                if x.dtype is _F32:
                    return _k32.powf(x, exponent)  # SLEEF's powf (and glibc's for the tail), as ATen
            return np.power(x, exponent)

    def save(ctx, x, out, exponent):
        ctx.save(self=x)

    def backward(ctx, g):
        e = ctx._attrs["exponent"]
        if e == 0:
            return g * 0.0,
        # ``exponent * self.pow(exponent - 1)`` with a C++ Scalar: mul.Scalar, MulBackward1
        return g * mul_scalar(ctx.self.pow(e - 1), e),

    def jvp(x, out, dx, exponent):
        return dx * 0.0 if exponent == 0 else dx * (x.pow(exponent - 1) * exponent)


class PowTensor(Op):
    """``x ** y`` with both tensors."""

    name = "PowBackward1"

    def forward(x, y):
        with _errstate():
            return np.power(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, exponent=y)
        if ctx.needs_input_grad[1]:
            ctx.save_result("result", out)

    def backward(ctx, g):
        from . import functions as F

        need = ctx.needs_input_grad
        x, y = ctx.self, ctx.exponent
        gx = gy = None
        if need[0]:
            gx = F.where(y == 0.0, 0.0, g * (y * x.pow(y - 1)))
        if need[1]:
            # d/dy x**y = x**y log x, with 0**y taken as having slope 0 for y >= 0; the log is
            # taken in the result's dtype (a float32 base under a float64 exponent: log in float64)
            result = ctx.result
            gy = F.where((x == 0.0) & (y >= 0), 0.0, g * (result * x.to(result.dtype).log()))
        return gx, gy

    def jvp(x, y, out, dx, dy):
        from . import functions as F

        return (F.where(y == 0.0, 0.0, dx * (y * x.pow(y - 1)))
                + F.where((x == 0.0) & (y >= 0), 0.0, dy * (out * x.log())))


class PowScalarBase(Op):
    """``2 ** x``"""

    name = "PowBackward2"

    def forward(x, base):
        with _errstate():
            return np.power(base, x)

    def save(ctx, x, out, base):
        ctx._attrs = {"self": base}
        ctx.save_result("result", out)

    def backward(ctx, g):
        base = ctx._attrs["self"]
        if base == 0:
            from . import functions as F

            return F.where(ctx.result == 0, g * 0.0, g * 0.0),  # 0**x: slope 0 where defined
        return g * (ctx.result * float(np.log(base))),

    def jvp(x, out, dx, base):
        return dx * (out * float(np.log(base))) if base != 0 else dx * 0.0


# ---------------------------------------------------------------- unary functions

class Exp(Op):
    name = "ExpBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.exp, x)  # MKL's vmsExp / vmdExp
        with _errstate():
            return np.exp(x)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return g * ctx.result,

    def jvp(x, out, dx):
        return dx * out


class Log(Op):
    name = "LogBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.log, x)  # MKL's vmsLn / vmdLn
        with _errstate():
            return np.log(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g / ctx.self,

    def jvp(x, out, dx):
        return dx / x


class Sin(Op):
    name = "SinBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.sin, x)  # MKL's vmsSin / vmdSin
        with _errstate():
            return np.sin(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return _formula_binary(Mul, g, _formula_unary(Cos, ctx.self)),

    def jvp(x, out, dx):
        return dx * x.cos()


class Cos(Op):
    name = "CosBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.cos, x)  # MKL's vmsCos / vmdCos
        with _errstate():
            return np.cos(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return _formula_binary(Mul, g, _formula_unary(Neg, _formula_unary(Sin, ctx.self))),

    def jvp(x, out, dx):
        return dx * -x.sin()


class TanhBackward(Op):
    """``tanh_backward(grad, y) = grad * (1 - y*y)`` as an op of its own, as in PyTorch, so a
    second derivative shows ``TanhBackwardBackward0``."""

    name = "TanhBackwardBackward0"

    def forward(g, y):
        if g.dtype is _F32 and y.dtype is _F32:
            return _k32.tanh_backward(g, y)  # g * fma(-y, y, 1): PyTorch's bits
        if g.dtype is _F64 and y.dtype is _F64:
            with _errstate():
                return _k32.tanh_backward64(g, y)  # g * fma(-y, y, 1): PyTorch's bits
        # (1 - y) * (1 + y) rounds like PyTorch's fused 1 - y*y far more often
        if (type(y) is np.ndarray and y.dtype == g.dtype and y.ndim and y.shape == g.shape
                and y.strides == g.strides):
            out = np.subtract(1, y)  # the same products and layout, one fresh array instead of three
            out *= np.add(1, y)
            return np.multiply(g, out, out=out)
        return g * ((1 - y) * (1 + y))

    def save(ctx, g, y, out):
        ctx.save(grad_output=g, output=y)

    def backward(ctx, gg):
        need = ctx.needs_input_grad
        g, y = ctx.grad_output, ctx.output
        return (tanh_backward(gg, y) if need[0] else None,
                gg * g * y * -2.0 if need[1] else None)

    def jvp(g, y, out, dg, dy):
        return tanh_backward(dg, y) + g * y * dy * -2.0


class Tanh(Op):
    name = "TanhBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.tanh, x)  # MKL's vmsTanh / vmdTanh
        with _errstate():
            return np.tanh(x)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return tanh_backward(g, ctx.result),

    def jvp(x, out, dx):
        return tanh_backward(dx, out)


class SigmoidBackward(Op):
    name = "SigmoidBackwardBackward0"

    def forward(g, y):
        return g * (1 - y) * y

    def save(ctx, g, y, out):
        ctx.save(grad_output=g, output=y)

    def backward(ctx, gg):
        need = ctx.needs_input_grad
        g, y = ctx.grad_output, ctx.output
        return (sigmoid_backward(gg, y) if need[0] else None,
                gg * g * (1 - y * 2.0) if need[1] else None)

    def jvp(g, y, out, dg, dy):
        return sigmoid_backward(dg, y) + g * (1 - y * 2.0) * dy


class Sigmoid(Op):
    name = "SigmoidBackward0"

    def forward(x):
        if x.dtype is _F32:
            return _k32.sigmoid(x)  # SLEEF's expf, then the reciprocal, as ATen's kernel
        with _errstate():
            return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return sigmoid_backward(g, ctx.result),

    def jvp(x, out, dx):
        return sigmoid_backward(dx, out)


class ThresholdBackward(Op):
    """``threshold_backward(grad, y, 0) = where(y > 0, grad, 0)``: relu's formula as an op of its own, as
    in PyTorch, so that its derivative w.r.t. ``y`` is an explicit zero and third derivatives of a
    relu stay connected to the graph."""

    name = "ThresholdBackwardBackward0"

    def forward(g, y):
        # A dead unit passes exactly 0, as PyTorch's select does: g * mask alone would leave -0.
        # (a negative g) or nan (a nan g) there. Multiplying and then adding 0 (-0. + 0 = 0.) is
        # about three times faster than np.where, which is kept for non-finite gradients.
        out = g * (y > 0)
        if type(out) is np.ndarray:
            if not np.isfinite(out).all():
                return np.where(y > 0, g, g.dtype.type(0))
            return np.add(out, 0, out=out)
        return out + 0 if _isfinite(out) else np.where(y > 0, g, g.dtype.type(0))

    def save(ctx, g, y, out):
        ctx.save(self=y)

    def backward(ctx, gg):
        from . import functions as F

        need = ctx.needs_input_grad
        return (threshold_backward(gg, ctx.self) if need[0] else None,
                F.zeros_like(gg) if need[1] else None)

    def jvp(g, y, out, dg, dy):
        return threshold_backward(dg, y)


class Relu(Op):
    name = "ReluBackward0"

    def forward(x):
        if x.__class__ is not np.ndarray and x > 0:  # a scalar: no ufunc call
            return x
        return np.maximum(x, 0).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return threshold_backward(g, ctx.result),  # relu'(0) = 0

    def jvp(x, out, dx):
        return threshold_backward(dx, out)


class Rsqrt(Op):
    name = "RsqrtBackward0"

    def forward(x):
        with _errstate():
            return (1.0 / np.sqrt(x)).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return g * ctx.result.pow(3) * -0.5,

    def jvp(x, out, dx):
        return dx * out.pow(3) * -0.5


class Sqrt(Op):
    name = "SqrtBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.sqrt, x)  # MKL's vmsSqrt / vmdSqrt
        with _errstate():
            return np.sqrt(x)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return g / (ctx.result * 2),  # sqrt'(0) = inf

    def jvp(x, out, dx):
        return dx / (out * 2)


class Abs(Op):
    name = "AbsBackward0"

    def forward(x):
        return np.abs(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * ctx.self.sign(),  # abs'(0) = 0

    def jvp(x, out, dx):
        return dx * x.sign()


def _zero_grad_op(op_name, fn):
    class _Op(Op):
        name = op_name

        def forward(x):
            return fn(x)

        def backward(ctx, g):
            return g * 0.0,

        def jvp(x, out, dx):
            return dx * 0.0

    _Op.__name__ = op_name.replace("Backward0", "")
    return _Op


Sign = _zero_grad_op("SignBackward0", np.sign)
Floor = _zero_grad_op("FloorBackward0", np.floor)
Ceil = _zero_grad_op("CeilBackward0", np.ceil)
Round = _zero_grad_op("RoundBackward0", np.round)


class Log1p(Op):
    name = "Log1PBackward0"

    def forward(x):
        if x.dtype is _F32:
            return _k32.mkl_like(np.log1p, x)  # Sleef_log1pf16_u10: nearest float32 mostly
        with _errstate():
            return np.log1p(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g / (ctx.self + 1),

    def jvp(x, out, dx):
        return dx / (x + 1)


class Expm1(Op):
    name = "Expm1Backward0"

    def forward(x):
        if x.dtype is _F32:
            return _k32.mkl_like(np.expm1, x)  # Sleef_expm1f16_u10: nearest float32 mostly
        with _errstate():
            return np.expm1(x)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return g * (ctx.result + 1),

    def jvp(x, out, dx):
        return dx * (out + 1)


class Tan(Op):
    name = "TanBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.tan, x)  # MKL's vmsTan / vmdTan
        with _errstate():
            return np.tan(x)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        r = ctx.result
        return g * (r * r + 1),

    def jvp(x, out, dx):
        return dx * (out * out + 1)


class Clamp(Op):
    """``x.clamp(min, max)`` with numbers; the gradient passes at the bounds (inclusive)."""

    name = "ClampBackward1"
    saves_attrs = ("min", "max")

    def forward(x, min=None, max=None):
        return np.clip(x, min, max).astype(x.dtype, copy=False)

    def save(ctx, x, out, min=None, max=None):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        lo, hi = ctx._attrs["min"], ctx._attrs["max"]
        mask = None
        if lo is not None:
            mask = x >= lo
        if hi is not None:
            mask = (x <= hi) if mask is None else mask & (x <= hi)
        return where(mask, g, 0.0),  # where, not g * mask: a masked -g gives 0., not -0.

    def jvp(x, out, dx, min=None, max=None):
        mask = (x >= (min if min is not None else -np.inf)) & (x <= (max if max is not None else np.inf))
        return dx * mask


class ClampTensor(Op):
    """``x.clamp(min=t, max=u)`` with tensor bounds; a missing bound is an infinite 0-dim tensor
    that requires no grad, so its slot is ``(None, 0)`` as in PyTorch."""

    name = "ClampBackward0"

    def forward(x, lo, hi):
        return np.minimum(np.maximum(x, lo), hi)

    def save(ctx, x, lo, hi, out):
        ctx.save(self=x, min=lo, max=hi)

    def backward(ctx, g):
        from . import functions as F

        x, lo, hi = ctx.self, ctx.min, ctx.max
        need = ctx.needs_input_grad
        return (F.where((x >= lo) & (x <= hi), g, 0.0) if need[0] else None,
                F.where((x < lo) & (lo < hi), g, 0.0) if need[1] else None,
                F.where((x > hi) | (hi < lo), g, 0.0) if need[2] else None)

    def jvp(x, lo, hi, out, dx, dlo, dhi):
        from . import functions as F

        inside = F.where((x >= lo) & (x <= hi), dx, 0.0)
        return inside + F.where((x < lo) & (lo < hi), dlo, 0.0) + F.where((x > hi) | (hi < lo), dhi, 0.0)


class ClampMin(Op):
    name = "ClampMinBackward0"
    saves_attrs = ("min",)

    def forward(x, min):
        return np.maximum(x, min).astype(x.dtype, copy=False)

    def save(ctx, x, out, min):
        ctx.save(self=x)

    def backward(ctx, g):
        return where(ctx.self >= ctx._attrs["min"], g, 0.0),

    def jvp(x, out, dx, min):
        return dx * (x >= min)


class ClampMax(Op):
    name = "ClampMaxBackward0"
    saves_attrs = ("max",)

    def forward(x, max):
        return np.minimum(x, max).astype(x.dtype, copy=False)

    def save(ctx, x, out, max):
        ctx.save(self=x)

    def backward(ctx, g):
        return where(ctx.self <= ctx._attrs["max"], g, 0.0),

    def jvp(x, out, dx, max):
        return dx * (x <= max)


class Maximum(Op):
    name = "MaximumBackward0"

    def forward(x, y):
        return np.maximum(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        need = ctx.needs_input_grad
        tie = (x == y) * 0.5  # a tie splits the gradient evenly
        return (g * ((x > y) + tie) if need[0] else None,
                g * ((y > x) + tie) if need[1] else None)

    def jvp(x, y, out, dx, dy):
        tie = (x == y) * 0.5
        return dx * ((x > y) + tie) + dy * ((y > x) + tie)


class Minimum(Op):
    name = "MinimumBackward0"

    def forward(x, y):
        return np.minimum(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        need = ctx.needs_input_grad
        tie = (x == y) * 0.5
        return (g * ((x < y) + tie) if need[0] else None,
                g * ((y < x) + tie) if need[1] else None)

    def jvp(x, y, out, dx, dy):
        tie = (x == y) * 0.5
        return dx * ((x < y) + tie) + dy * ((y < x) + tie)


class Where(Op):
    """``where(condition, x, y)``; the condition is never an edge."""

    name = "WhereBackward0"

    def forward(x, y, condition):
        return np.where(condition, x, y)

    def save(ctx, x, y, out, condition):
        ctx._attrs = {"condition": condition}

    def backward(ctx, g):
        Tensor = _tensor.Tensor
        cond = Tensor._make(ctx._attrs["condition"])
        need = ctx.needs_input_grad
        return (where(cond, g, 0.0) if need[0] else None,
                where(cond, 0.0, g) if need[1] else None)

    def jvp(x, y, out, dx, dy, condition):
        Tensor = _tensor.Tensor
        return where(Tensor._make(condition), dx, dy)


def _compare(np_fn):
    class _Cmp(Op):
        def forward(x, y):
            return np_fn(x, y)

    return _Cmp


_CMP = {name: _compare(fn) for name, fn in
        (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
         ("gt", np.greater), ("ge", np.greater_equal), ("logical_and", np.logical_and),
         ("logical_or", np.logical_or), ("logical_xor", np.logical_xor))}


# ---------------------------------------------------------------- the functions users call

def _binary(op, a, b, attrs=_NO_ATTRS):
    Tensor = _tensor.Tensor
    if ((b.__class__ is float or (b.__class__ is int and -2**63 <= b < 2**63)) and a.__class__ is Tensor
            and not _observers.any and not (a._requires_grad and _grad_state.grad_enabled)):
        data = a._data
        if data.dtype.kind == "f":
            # a float tensor (op) a Python number, nothing recorded or watched (``-lr * p.grad``):
            # what apply_op's plain path does with the wrapped number, without wrapping it
            out = op.forward(data, b, **attrs) if attrs else op.forward(data, b)
            if out.dtype is not data.dtype and out.dtype != data.dtype:
                out = out.astype(data.dtype)
            return Tensor._make(out)
    if type(a) is not Tensor:
        a = as_tensor_arg(a)
    if type(b) is not Tensor:
        b = as_tensor_arg(b)
    da, db = a._data.dtype, b._data.dtype
    a_number, b_number = a._is_wrapped_number, b._is_wrapped_number
    if not (a_number or b_number):
        # same NumPy dtype: NumPy already computes in the right dtype
        dtype = None if da is db else result_dtype(a, b)
    else:
        dtype = None
        if b_number and not a_number and da.kind == "f":
            dtype = _BY_NUMPY.get(da)  # float tensor (op) Python number: the tensor's dtype, always
        elif a_number and not b_number and db.kind == "f":
            dtype = _BY_NUMPY.get(db)
        if dtype is None:
            dtype = result_dtype(a, b)
    try:
        return apply_op(op, (a, b), attrs, out_dtype=dtype)
    except ValueError:
        broadcast_shapes_or_raise(a.shape, b.shape)
        raise


def _formula_binary(op, a, b):
    """``op(a, b)`` inside a backward formula: when nothing can tell the difference
    (``formulas_on_arrays``: no create_graph, no profiler) and the dtypes need no promotion, just
    the op's NumPy forward on the arrays; otherwise the op itself, recorded and observed."""
    if not _grad_state.grad_enabled and not _observers.any and not a._is_wrapped_number:  # formulas_on_arrays()
        ad = a._data
        if ad.__class__ is _ndarray and not ad.ndim:
            ad = ad[()]  # NumPy scalars compute several times faster than 0-dim arrays
        if b._is_wrapped_number:
            if ad.dtype.kind == "f":
                data = op.forward(ad, b._py)
                if data.dtype != ad.dtype:
                    data = data.astype(ad.dtype)
                return _plain_tensor(data)
        else:
            bd = b._data
            if bd.dtype is ad.dtype:
                if bd.__class__ is _ndarray and not bd.ndim:
                    bd = bd[()]
                data = op.forward(ad, bd)
                if data.dtype is ad.dtype or data.dtype == ad.dtype:
                    return _plain_tensor(data)
    return _binary(op, a, b)


def _formula_unary(op, x):
    """``op(x)`` inside a backward formula for a float ``x``: the NumPy forward on the array when
    nothing can tell the difference (see ``_formula_binary``), else the op itself."""
    if not _grad_state.grad_enabled and not _observers.any and x._data.dtype.kind == "f":
        xd = x._data
        if xd.__class__ is _ndarray and not xd.ndim:
            xd = xd[()]
        return _plain_tensor(op.forward(xd))
    return _unary(op, x)


def _plain_tensor(data):
    """``Tensor._make(data)`` spelled out: a formula's result, made once per gradient."""
    Tensor = _tensor.Tensor
    t = Tensor.__new__(Tensor)
    t._data = data
    t._requires_grad = False
    t.grad_fn = None
    t._grad = None
    t._output_nr = 0
    t._vc = None
    if _grad_state.inference:
        t.__dict__["_is_inference"] = True
    return t


def _unary(op, x, attrs=_NO_ATTRS):
    if type(x) is not _tensor.Tensor:
        x = as_tensor_arg(x)
    # float ops on integer tensors compute in the default float dtype, as PyTorch does
    return apply_op(op, (x,), attrs, out_dtype=None if x._data.dtype.kind == "f" else get_default_dtype())


_ALPHA_1 = {"alpha": 1}


@export()
def add(input, other, *deprecated, alpha=1):
    if deprecated:  # add(x, 2, y): the old (Number alpha, Tensor other) order
        other, alpha = deprecated_alpha_overload("add", other, deprecated)
    return _binary(Add, input, other, _ALPHA_1 if alpha == 1 else {"alpha": alpha})


@export()
def sub(input, other, *deprecated, alpha=1):
    if deprecated:
        other, alpha = deprecated_alpha_overload("sub", other, deprecated)
    return _binary(Sub, input, other, _ALPHA_1 if alpha == 1 else {"alpha": alpha})


subtract = export("subtract")(sub)


@export()
def rsub(input, other, *, alpha=1):
    Tensor = _tensor.Tensor
    if isinstance(other, Tensor):
        return _binary(Rsub, input, other, {"alpha": alpha})
    input = as_tensor_arg(input)
    dtype = result_dtype(input, wrap_number(other))
    return apply_op(RsubScalar, (input,), {"other": other, "alpha": alpha}, out_dtype=dtype)


@export("mul", "multiply")
def mul(input, other):
    return _binary(Mul, input, other)


@export("div", "divide", "true_divide")
def div(input, other, *, rounding_mode=None):
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if rounding_mode is not None:
        with_mode = {"floor": np.floor_divide, "trunc": lambda x, y: np.trunc(x / y)}[rounding_mode]
        return _nograd_binary(with_mode, a, b)
    dtype = result_dtype(a, b)
    if not dtype.is_floating_point:
        dtype = get_default_dtype()
    try:
        return apply_op(Div, (a, b), {}, out_dtype=dtype)
    except ValueError:
        broadcast_shapes_or_raise(a.shape, b.shape)
        raise


def _nograd_binary(np_fn, a, b):
    Tensor = _tensor.Tensor
    with _errstate():
        data = np_fn(a._data, b._data)
        return Tensor._make((np.asarray(data) if data.__class__ is not MetaArray else data)
                            .astype(result_dtype(a, b).np))


@export()
def reciprocal(input):
    return _unary(Reciprocal, input)


def rdiv(input, other):
    """``2 / x`` is ``x.reciprocal() * 2`` in PyTorch: MulBackward0 over ReciprocalBackward0."""
    return mul(reciprocal(input), other)


@export()
def neg(input):
    return apply_op(Neg, (as_tensor_arg(input),))


negative = export("negative")(neg)


@export()
def pow(input, exponent):
    Tensor = _tensor.Tensor
    if not isinstance(input, Tensor):  # 2 ** x
        exponent = as_tensor_arg(exponent)
        dtype = result_dtype(wrap_number(input), exponent)
        return apply_op(PowScalarBase, (exponent,), {"base": input}, out_dtype=dtype)
    if isinstance(exponent, Tensor):
        return _binary(PowTensor, input, exponent)
    dtype = result_dtype(input, wrap_number(exponent))
    return apply_op(PowScalar, (input,), {"exponent": exponent}, out_dtype=dtype)


@export()
def square(input):
    return pow(input, 2)


def _simple_unary(op, *names):
    def fn(input):
        return _unary(op, input)

    fn.__name__ = names[0]
    fn.__doc__ = f"Elementwise ``{names[0]}``; backward node ``{op.name}``."
    return export(*names)(fn)


exp = _simple_unary(Exp, "exp")
log = _simple_unary(Log, "log")
sin = _simple_unary(Sin, "sin")
cos = _simple_unary(Cos, "cos")
tan = _simple_unary(Tan, "tan")
tanh = _simple_unary(Tanh, "tanh")
sigmoid = _simple_unary(Sigmoid, "sigmoid")
relu = _simple_unary(Relu, "relu")
sqrt = _simple_unary(Sqrt, "sqrt")
log1p = _simple_unary(Log1p, "log1p")
expm1 = _simple_unary(Expm1, "expm1")


@export("abs", "absolute")
def abs(input):  # noqa: A001
    return apply_op(Abs, (as_tensor_arg(input),))


@export()
def sign(input):
    return apply_op(Sign, (as_tensor_arg(input),))


@export()
def floor(input):
    return apply_op(Floor, (as_tensor_arg(input),))


@export()
def ceil(input):
    return apply_op(Ceil, (as_tensor_arg(input),))


@export()
def round(input):  # noqa: A001
    return apply_op(Round, (as_tensor_arg(input),))


@export()
def rsqrt(input):
    return _unary(Rsqrt, input)


def threshold_backward(grad, output):
    return _formula_binary(ThresholdBackward, grad, output)


def mul_scalar(input, number):
    """``tensor * number`` as ATen's ``mul.Scalar`` (MulBackward1): the number is no input at all."""
    return apply_op(MulScalar, (input,), {"other": number},
                    out_dtype=result_dtype(input, wrap_number(number)))


def tanh_backward(grad, output):
    return _formula_binary(TanhBackward, grad, output)


def sigmoid_backward(grad, output):
    return _formula_binary(SigmoidBackward, grad, output)


@export("clamp", "clip")
def clamp(input, min=None, max=None):
    Tensor = _tensor.Tensor
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = as_tensor_arg(float("-inf") if min is None else min)
        hi = as_tensor_arg(float("inf") if max is None else max)
        from .core import result_dtype_many

        bounds = [t for t in (min, max) if isinstance(t, Tensor)]
        dtype = result_dtype_many([input, *bounds])
        try:
            return apply_op(ClampTensor, (input, lo, hi), out_dtype=dtype)
        except ValueError:
            for bound in bounds:
                broadcast_shapes_or_raise(input.shape, bound.shape)
            raise
    return apply_op(Clamp, (input,), {"min": min, "max": max})


@export()
def clamp_min(input, min):
    return apply_op(ClampMin, (input,), {"min": min})


@export()
def clamp_max(input, max):
    return apply_op(ClampMax, (input,), {"max": max})


@export()
def maximum(input, other):
    return _binary(Maximum, input, other)


@export()
def minimum(input, other):
    return _binary(Minimum, input, other)


@export(method=False)
def where(condition, input=None, other=None):
    Tensor = _tensor.Tensor
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(as_tensor_arg(condition)._data))
    cond = as_tensor_arg(condition)._data.astype(bool)
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    dtype = result_dtype(a, b)
    try:
        return apply_op(Where, (a, b), {"condition": cond}, out_dtype=dtype)
    except ValueError:
        broadcast_shapes_or_raise(broadcast_shapes_or_raise(cond.shape, a.shape), b.shape)
        raise


def _where_method(self, condition, other):
    return where(condition, self, other)


def _make_cmp(name):
    op = _CMP[name]

    def fn(input, other):
        a, b = as_tensor_arg(input), as_tensor_arg(other)
        try:
            return apply_op(op, (a, b))
        except ValueError:
            broadcast_shapes_or_raise(a.shape, b.shape)
            raise

    fn.__name__ = name
    return export(name)(fn)


eq = _make_cmp("eq")
ne = _make_cmp("ne")
lt = _make_cmp("lt")
le = _make_cmp("le")
gt = _make_cmp("gt")
ge = _make_cmp("ge")
logical_and = _make_cmp("logical_and")
logical_or = _make_cmp("logical_or")
logical_xor = _make_cmp("logical_xor")
greater, less, greater_equal, less_equal = gt, lt, ge, le


@export()
def logical_not(input):
    Tensor = _tensor.Tensor
    return Tensor._make(np.logical_not(as_tensor_arg(input)._data))


@export()
def isnan(input):
    Tensor = _tensor.Tensor
    return Tensor._make(np.isnan(input._data))


@export()
def isinf(input):
    Tensor = _tensor.Tensor
    return Tensor._make(np.isinf(input._data))


@export()
def isfinite(input):
    Tensor = _tensor.Tensor
    return Tensor._make(np.isfinite(input._data))


# every op above is elementwise: 0-dim operands may reach their forwards as NumPy scalars
for _op in list(globals().values()):
    if isinstance(_op, type) and issubclass(_op, Op) and _op.__module__ == __name__:
        _op.scalar_operands = True
