"""More of PyTorch's everyday ops: scans (cumsum, cumprod), sorting (sort, topk, median),
triangles and diagonals, more elementwise functions (atan2, erf, fmod, lerp, logaddexp, ...),
statistics (std_mean, var_mean, dist) and a few composites built from existing ops (hstack,
movedim, meshgrid, repeat_interleave).

Each class is one ATen op, written as in ``pointwise.py``: the name PyTorch gives its backward
node, a NumPy ``forward``, what it saves, its ``backward`` formula (with gradwalk's own tensor
ops, so ``create_graph=True`` works) and its forward-mode ``jvp``. Composite ops are plain
functions over existing ops, so they record the nodes PyTorch records (``x.movedim(0, 1)`` is a
``PermuteBackward0``, ``torch.vstack`` of vectors is ``CatBackward0`` over ``UnsqueezeBackward0``).
"""
import math
import numbers
import statistics

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from .._meta import MetaArray

from .._dtype import float32
from . import _float32_kernels as _k32
from ._util import as_tensor_arg, export, normalize_dim, normalize_dims
from .core import Op, apply_op
from .pointwise import _binary, _errstate, _unary
from .shape import Gather, ScatterAdd, _namedtuple_values_indices, index_put_zeros, values_indices

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _make(array):
    return _tensor.Tensor._make(np.asarray(array) if array.__class__ is not MetaArray else array)


def _F():
    from . import functions  # (at call time: functions imports this module)

    return functions


# ---------------------------------------------------------------- elementwise, one input

class Atan(Op):
    name = "AtanBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.arctan, x)  # MKL's vmsAtan / vmdAtan, as PyTorch
        with _errstate():
            return np.arctan(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g / (x * x + 1),

    def jvp(x, out, dx):
        return dx / (x * x + 1)


class Asin(Op):
    name = "AsinBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.arcsin, x)  # MKL's vmsAsin / vmdAsin, as PyTorch
        with _errstate():
            return np.arcsin(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * (-x * x + 1).rsqrt(),

    def jvp(x, out, dx):
        return dx * (-x * x + 1).rsqrt()


class Acos(Op):
    name = "AcosBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.arccos, x)  # MKL's vmsAcos / vmdAcos, as PyTorch
        with _errstate():
            return np.arccos(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * -(-x * x + 1).rsqrt(),

    def jvp(x, out, dx):
        return dx * -(-x * x + 1).rsqrt()


class Sinh(Op):
    name = "SinhBackward0"

    def forward(x):
        with _errstate():
            return np.sinh(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * ctx.self.cosh(),

    def jvp(x, out, dx):
        return dx * x.cosh()


class Cosh(Op):
    name = "CoshBackward0"

    def forward(x):
        with _errstate():
            return np.cosh(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * ctx.self.sinh(),

    def jvp(x, out, dx):
        return dx * x.sinh()


class Log2(Op):
    name = "Log2Backward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.log2, x)  # MKL's vmsLog2 / vmdLog2, as PyTorch
        with _errstate():
            return np.log2(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g / (ctx.self * _LN2),

    def jvp(x, out, dx):
        return dx / (x * _LN2)


class Log10(Op):
    name = "Log10Backward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(np.log10, x)  # MKL's vmsLog10 / vmdLog10, as PyTorch
        with _errstate():
            return np.log10(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g / (ctx.self * _LN10),

    def jvp(x, out, dx):
        return dx / (x * _LN10)


class Exp2(Op):
    name = "Exp2Backward0"

    def forward(x):
        with _errstate():
            return np.exp2(x)

    def save(ctx, x, out):
        ctx.save_result("result", out)

    def backward(ctx, g):
        return g * ctx.result * _LN2,

    def jvp(x, out, dx):
        return dx * out * _LN2


_erf = np.frompyfunc(math.erf, 1, 1)  # NumPy has no erf; math.erf is correctly rounded


class Erf(Op):
    name = "ErfBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(_erf, x, "Erf")  # MKL's vmsErf / vmdErf, as PyTorch
        return np.asarray(_erf(x.astype(np.float64)), dtype=x.dtype)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * ((-x * x).exp() * _TWO_OVER_SQRT_PI),

    def jvp(x, out, dx):
        return dx * ((-x * x).exp() * _TWO_OVER_SQRT_PI)


class Trunc(Op):
    name = "TruncBackward0"

    def forward(x):
        return np.trunc(x) if x.dtype.kind == "f" else x.copy()

    def backward(ctx, g):
        return _F().zeros_like(g),

    def jvp(x, out, dx):
        return dx * 0


class Frac(Op):
    name = "FracBackward0"

    def forward(x):
        return x - np.trunc(x)

    def backward(ctx, g):
        return g,

    def jvp(x, out, dx):
        return dx


class Asinh(Op):
    name = "AsinhBackward0"

    def forward(x):
        return np.arcsinh(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * (x * x + 1).rsqrt(),

    def jvp(x, out, dx):
        return dx * (x * x + 1).rsqrt()


class Acosh(Op):
    name = "AcoshBackward0"

    def forward(x):
        with _errstate():
            return np.arccosh(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * (x * x - 1).rsqrt(),

    def jvp(x, out, dx):
        return dx * (x * x - 1).rsqrt()


class Atanh(Op):
    name = "AtanhBackward0"

    def forward(x):
        with _errstate():
            return np.arctanh(x)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g / (-x * x + 1),

    def jvp(x, out, dx):
        return dx / (-x * x + 1)


_erfc = np.frompyfunc(math.erfc, 1, 1)


class Erfc(Op):
    name = "ErfcBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(_erfc, x, "Erfc")  # MKL's vmsErfc / vmdErfc, as PyTorch
        return np.asarray(_erfc(x.astype(np.float64)), dtype=x.dtype)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * ((-x * x).exp() * -_TWO_OVER_SQRT_PI),

    def jvp(x, out, dx):
        return dx * ((-x * x).exp() * -_TWO_OVER_SQRT_PI)


_STANDARD_NORMAL = statistics.NormalDist()


def _erfinv_scalar(y):
    """erfinv(y): a start from the normal quantile, then Newton steps on erf (on erfc when |y|
    is near 1, where ``erf(x) - y`` would cancel)."""
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    a = abs(y)
    if a == 1:
        return math.copysign(math.inf, y)
    if a == 0:
        return y  # keeps the sign of -0.0
    # erf(x / sqrt(2)) = 2 Phi(x) - 1; from the upper tail (1 - a is exact there) when a > 0.5
    x = (_STANDARD_NORMAL.inv_cdf((1 + a) / 2) if a <= 0.5 else -_STANDARD_NORMAL.inv_cdf((1 - a) / 2))
    x /= math.sqrt(2)
    for _ in range(8):
        residual = math.erf(x) - a if a <= 0.5 else (1 - a) - math.erfc(x)
        step = residual / (_TWO_OVER_SQRT_PI * math.exp(-x * x))
        x -= step
        if abs(step) <= 1e-17 * x:
            break
    return math.copysign(x, y)


_erfinv = np.frompyfunc(_erfinv_scalar, 1, 1)


class Erfinv(Op):
    name = "ErfinvBackward0"

    def forward(x):
        if x.dtype is _F32 or x.dtype is _F64:
            return _k32.vml(_erfinv, x, "ErfInv")  # MKL's vmsErfInv / vmdErfInv, as PyTorch
        return np.asarray(_erfinv(x.astype(np.float64)), dtype=x.dtype)

    def save(ctx, x, out):
        ctx.save(self=x)  # PyTorch saves only self, and computes erfinv again in backward

    def backward(ctx, g):
        return g * (ctx.self.erfinv().pow(2).exp() * (math.sqrt(math.pi) / 2)),

    def jvp(x, out, dx):
        return dx * (out.pow(2).exp() * (math.sqrt(math.pi) / 2))


class NanToNum(Op):
    name = "NanToNumBackward0"

    def forward(x, nan, posinf, neginf):
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def save(ctx, x, out, nan, posinf, neginf):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * _make(np.isfinite(ctx.self._data)),

    def jvp(x, out, dx, nan, posinf, neginf):
        return dx * _make(np.isfinite(x._data))


@export()
def atan(input):
    return _unary(Atan, input)


@export()
def asin(input):
    return _unary(Asin, input)


@export()
def acos(input):
    return _unary(Acos, input)


@export()
def sinh(input):
    return _unary(Sinh, input)


@export()
def cosh(input):
    return _unary(Cosh, input)


@export()
def log2(input):
    return _unary(Log2, input)


@export()
def log10(input):
    return _unary(Log10, input)


@export()
def exp2(input):
    return _unary(Exp2, input)


@export()
def erf(input):
    return _unary(Erf, input)


@export()
def asinh(input):
    return _unary(Asinh, input)


@export()
def acosh(input):
    return _unary(Acosh, input)


@export()
def atanh(input):
    return _unary(Atanh, input)


@export()
def erfc(input):
    return _unary(Erfc, input)


@export()
def erfinv(input):
    return _unary(Erfinv, input)


@export("trunc", "fix")
def trunc(input):
    return apply_op(Trunc, (input,))


@export()
def frac(input):
    return apply_op(Frac, (input,))


@export()
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return apply_op(NanToNum, (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


export("arctan")(atan)
export("arcsin")(asin)
export("arccos")(acos)
export("arcsinh")(asinh)
export("arccosh")(acosh)
export("arctanh")(atanh)


# ---------------------------------------------------------------- elementwise, two or three inputs

class Atan2(Op):
    name = "Atan2Backward0"

    def forward(x, y):
        return np.arctan2(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        r = x * x + y * y
        need = ctx.needs_input_grad
        return (g * y / r if need[0] else None), (g * -x / r if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return (dx * y - dy * x) / (x * x + y * y)


class Logaddexp(Op):
    name = "LogaddexpBackward0"

    def forward(x, y):
        return np.logaddexp(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x, other=y)

    def backward(ctx, g):
        x, y = ctx.self, ctx.other
        need = ctx.needs_input_grad
        return ((g / ((y - x).exp() + 1)) if need[0] else None,
                (g / ((x - y).exp() + 1)) if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return dx / ((y - x).exp() + 1) + dy / ((x - y).exp() + 1)


class Nextafter(Op):
    """The next float after ``x`` towards ``y``: a step function, so both gradients are zero
    (PyTorch's NextafterBackward0 sends zeros, it does not refuse)."""

    name = "NextafterBackward0"

    def forward(x, y):
        return np.nextafter(x, y)

    def backward(ctx, g):
        zeros = g * 0
        need = ctx.needs_input_grad
        return (zeros if need[0] else None), (zeros if need[1] else None)

    def jvp(x, y, out, dx, dy):
        return (dx if dx is not None else dy) * 0


def _igam_scalar(a, x, upper):
    """Cephes' ``igam``/``igamc`` (the regularised incomplete gamma functions PyTorch's kernels
    derive from): a power series below ``x = a + 1``, a continued fraction above."""
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0:
        return math.nan
    if a == 0:
        return (0.0 if x > 0 else math.nan) if upper else (1.0 if x > 0 else math.nan)
    if x == 0:
        return 1.0 if upper else 0.0
    if math.isinf(x):
        return 0.0 if upper else 1.0
    log_ax = a * math.log(x) - x - math.lgamma(a)
    if log_ax < -709.78:  # exp underflows
        return 1.0 if upper else 0.0
    ax = math.exp(log_ax)
    if x < a + 1:
        r, c, total = a, 1.0, 1.0
        while True:
            r += 1.0
            c *= x / r
            total += c
            if c / total <= 1.11e-16:
                break
        lower = total * ax / a
        return 1.0 - lower if upper else lower
    y, z, c = 1.0 - a, x + 2.0 - a, 0.0
    pkm2, qkm2, pkm1, qkm1 = 1.0, x, x + 1.0, z * x
    ans = pkm1 / qkm1
    while True:
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        t = 1.0
        if qk != 0:
            r = pk / qk
            t = abs((ans - r) / r)
            ans = r
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        if abs(pk) > 4.5e15:
            pkm2, pkm1, qkm2, qkm1 = pkm2 / 4.5e15, pkm1 / 4.5e15, qkm2 / 4.5e15, qkm1 / 4.5e15
        if t <= 1.11e-16:
            break
    return ans * ax if upper else 1.0 - ans * ax


class Igamma(Op):
    """``igamma(a, x)``: the regularised lower incomplete gamma function P(a, x). Its derivative
    in ``x`` is the gamma density; in ``a`` it is not implemented (PyTorch's neither)."""

    name = "IgammaBackward0"
    upper = False

    @classmethod
    def forward(cls, a, x):
        a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
        values = np.frompyfunc(lambda p, q: _igam_scalar(p, q, cls.upper), 2, 1)(a64, x64)
        return np.asarray(values, dtype=np.float64).astype(np.result_type(a, x), copy=False)

    def save(ctx, a, x, out):
        ctx.save(self=a, other=x)

    def backward(ctx, g):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{ctx.op.__name__.lower()}: input' is not implemented.")
        a, x = ctx.self, ctx.other
        log_gamma_a = _tensor.Tensor._make(np.vectorize(lambda v: math.lgamma(v) if v > 0 else math.inf,
                                                        otypes=[a._data.dtype])(a._data))
        density = ((a - 1) * x.log() - x - log_gamma_a).exp()  # (a needs no grad: a constant)
        return None, (-g * density if ctx.op.upper else g * density)


class Igammac(Igamma):
    """``igammac(a, x) = 1 - igamma(a, x)``, the upper one."""

    name = "IgammacBackward0"
    upper = True


class _ModScalar(Op):
    """``fmod``/``remainder`` by a number: the gradient passes straight through."""

    np_fn = None

    @classmethod
    def forward(cls, x, other):
        with _errstate():
            return cls.np_fn(x, other)

    def backward(ctx, g):
        return g,

    def jvp(x, out, dx, other):
        return dx


class _ModTensor(Op):
    """``fmod``/``remainder`` by a tensor: d/d(other) is ``-(self / other)`` rounded."""

    np_fn = None
    rounding = None

    @classmethod
    def forward(cls, x, y):
        with _errstate():
            return cls.np_fn(x, y)

    def save(ctx, x, y, out):
        ctx.save(self=x if ctx.needs_input_grad[1] else None, other=y if ctx.needs_input_grad[1] else None)

    @classmethod
    def _quotient(cls, x, y):
        return _F().div(x, y, rounding_mode=cls.rounding)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return g, (-g * ctx.op._quotient(ctx.self, ctx.other) if need[1] else None)

    @classmethod
    def jvp(cls, x, y, out, dx, dy):
        return dx - dy * cls._quotient(x, y)


class FmodScalar(_ModScalar):
    name = "FmodBackward0"
    np_fn = np.fmod


class FmodTensor(_ModTensor):
    name = "FmodBackward1"
    np_fn = np.fmod
    rounding = "trunc"


class RemainderScalar(_ModScalar):
    name = "RemainderBackward0"
    np_fn = np.remainder


class RemainderTensor(_ModTensor):
    name = "RemainderBackward1"
    np_fn = np.remainder
    rounding = "floor"


def _mod(scalar_op, tensor_op, input, other):
    if isinstance(other, numbers.Number) and not isinstance(other, bool):
        float_result = input.dtype.is_floating_point or isinstance(other, float)
        out_dtype = None if input.dtype.is_floating_point or not float_result else float32
        return apply_op(scalar_op, (input,), {"other": other}, out_dtype=out_dtype)
    return _binary(tensor_op, input, other)


@export()
def fmod(input, other):
    return _mod(FmodScalar, FmodTensor, input, other)


@export()
def remainder(input, other):
    return _mod(RemainderScalar, RemainderTensor, input, other)


class LerpScalar(Op):
    name = "LerpBackward0"
    saves_attrs = ("weight",)

    def forward(start, end, weight):
        # ATen's formula: exact at both ends
        return start + weight * (end - start) if abs(weight) < 0.5 else end - (end - start) * (1 - weight)

    def backward(ctx, g):
        w = ctx._attrs["weight"]
        need = ctx.needs_input_grad
        return (g * (1 - w) if need[0] else None), (g * w if need[1] else None)

    def jvp(start, end, out, dstart, dend, weight):
        return dstart * (1 - weight) + dend * weight


class LerpTensor(Op):
    name = "LerpBackward1"

    def forward(start, end, weight):
        return np.where(np.abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight))

    def save(ctx, start, end, weight, out):
        need = ctx.needs_input_grad
        ctx.save(weight=weight if need[0] or need[1] else None,
                 self=start if need[2] else None, end=end if need[2] else None)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        w = ctx.weight if need[0] or need[1] else None
        return (g * (-w + 1) if need[0] else None, g * w if need[1] else None,
                g * (ctx.end - ctx.self) if need[2] else None)

    def jvp(start, end, weight, out, dstart, dend, dweight):
        return dstart * (-weight + 1) + dend * weight + dweight * (end - start)


@export()
def lerp(input, end, weight):
    if isinstance(weight, numbers.Number):
        return apply_op(LerpScalar, (input, end), {"weight": weight})
    return apply_op(LerpTensor, (input, end, weight))


class Addcmul(Op):
    name = "AddcmulBackward0"
    saves_attrs = ("value",)

    def forward(x, t1, t2, value):
        return x + value * t1 * t2

    def save(ctx, x, t1, t2, out, value):
        need = ctx.needs_input_grad
        ctx.save(tensor2=t2 if need[1] else None, tensor1=t1 if need[2] else None)

    def backward(ctx, g):
        need, v = ctx.needs_input_grad, ctx._attrs["value"]
        return (g, g * ctx.tensor2 * v if need[1] else None, g * ctx.tensor1 * v if need[2] else None)

    def jvp(x, t1, t2, out, dx, dt1, dt2, value):
        return dx + (dt1 * t2 + t1 * dt2) * value


class Addcdiv(Op):
    name = "AddcdivBackward0"
    saves_attrs = ("value",)

    def forward(x, t1, t2, value):
        with _errstate():
            return x + value * (t1 / t2)

    def save(ctx, x, t1, t2, out, value):
        need = ctx.needs_input_grad
        ctx.save(tensor2=t2 if need[1] or need[2] else None, tensor1=t1 if need[2] else None)

    def backward(ctx, g):
        need, v = ctx.needs_input_grad, ctx._attrs["value"]
        t2 = ctx.tensor2 if need[1] or need[2] else None
        return (g, g * v / t2 if need[1] else None,
                -g * v * ctx.tensor1 / (t2 * t2) if need[2] else None)

    def jvp(x, t1, t2, out, dx, dt1, dt2, value):
        return dx + (dt1 / t2 - t1 * dt2 / (t2 * t2)) * value


@export()
def addcmul(input, tensor1, tensor2, *, value=1):
    return apply_op(Addcmul, (input, tensor1, tensor2), {"value": value})


@export()
def addcdiv(input, tensor1, tensor2, *, value=1):
    return apply_op(Addcdiv, (input, tensor1, tensor2), {"value": value})


@export()
def atan2(input, other):
    if not (input.dtype.is_floating_point or as_tensor_arg(other).dtype.is_floating_point):
        return apply_op(Atan2, (input, as_tensor_arg(other)), out_dtype=float32)
    return _binary(Atan2, input, other)


@export()
def igamma(input, other):
    return _binary(Igamma, input, other)


@export()
def igammac(input, other):
    return _binary(Igammac, input, other)


@export()
def nextafter(input, other):
    return _binary(Nextafter, input, other)


@export()
def logaddexp(input, other):
    return _binary(Logaddexp, input, other)


export("arctan2")(atan2)


# ---------------------------------------------------------------- scans

class Cumsum(Op):
    name = "CumsumBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim, dtype=None):
        if x.ndim == 0:
            return x.astype(dtype or x.dtype, copy=True)
        return np.cumsum(x, axis=dim, dtype=dtype)

    def backward(ctx, g):
        d = ctx._attrs["dim"]
        if g.ndim == 0:
            return g,
        return g.flip(d).cumsum(d).flip(d),  # each input feeds every later output

    def jvp(x, out, dx, dim, dtype=None):
        return dx.cumsum(dim)


class Cumprod(Op):
    name = "CumprodBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim, dtype=None):
        if x.ndim == 0:
            return x.astype(dtype or x.dtype, copy=True)
        return np.cumprod(x, axis=dim, dtype=dtype)

    def save(ctx, x, out, dim, dtype=None):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x, d = ctx.self, ctx._attrs["dim"]
        if x.ndim == 0:
            return g,
        if np.all(x._data != 0):  # d out_j / d x_i = out_j / x_i for every j >= i
            return (g * ctx.result).flip(d).cumsum(d).flip(d) / x,
        return _cumprod_with_zeros(x, d, lambda i, partial: g * partial, keep_dim=True),

    def jvp(x, out, dx, dim, dtype=None):
        if x.ndim == 0:
            return dx
        if np.all(x._data != 0):
            return out * (dx / x).cumsum(dim)
        terms = [_cumprod_without(x, dim, i) * dx.narrow(dim, i, 1) for i in range(x.shape[dim])]
        return _F().stack(terms).sum(0)


def _cumprod_without(x, dim, i):
    """cumprod(x) with x_i replaced by 1, zeroed before position i: d cumprod(x) / d x_i."""
    n = x.shape[dim]
    shape = [1] * x.ndim
    shape[dim] = n
    at_i = _make((np.arange(n) == i).reshape(shape))
    from_i = _make((np.arange(n) >= i).reshape(shape).astype(x._data.dtype))
    return _F().where(at_i, 1.0, x).cumprod(dim) * from_i


def _cumprod_with_zeros(x, dim, weight, keep_dim):
    """The gradient of cumprod where x has zeros (no division): one column at a time."""
    columns = [weight(i, _cumprod_without(x, dim, i)).sum(dim, keepdim=keep_dim)
               for i in range(x.shape[dim])]
    return _F().cat(columns, dim)


@export()
def cumsum(input, dim, *, dtype=None):
    if dtype is None and input.dtype.np.kind in "biu":
        dtype = np.int64
    elif dtype is not None:
        dtype = _dtype_np(dtype)
    return apply_op(Cumsum, (input,), {"dim": normalize_dim(dim, input.ndim), "dtype": dtype})


@export()
def cumprod(input, dim, *, dtype=None):
    if dtype is None and input.dtype.np.kind in "biu":
        dtype = np.int64
    elif dtype is not None:
        dtype = _dtype_np(dtype)
    return apply_op(Cumprod, (input,), {"dim": normalize_dim(dim, input.ndim), "dtype": dtype})


def _dtype_np(dtype):
    from .._dtype import as_dtype

    return as_dtype(dtype).np


# ---------------------------------------------------------------- sorting and selecting

def _argsort(x, dim, descending):
    """Stable ascending (NaN last) or descending (NaN first, ties kept in order) indices."""
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    key = x.astype(np.float64) if x.dtype.kind in "biu" else x
    return np.lexsort((-key, ~np.isnan(key)), axis=dim)


class _SelectAlongDim(Op):
    """sort/topk/median(dim): values picked along ``dim``; the gradient goes back to ``indices``."""

    saves_attrs = ("dim",)

    def save(ctx, x, out, dim, **attrs):
        ctx.save(indices=out[1])
        ctx._attrs["self_sym_sizes"] = tuple(x.shape)
        ctx._attrs["keepdim"] = attrs.get("keepdim", True)

    def backward(ctx, g, g_indices=None):
        a = ctx._attrs
        if len(a["self_sym_sizes"]) == 0:
            return g,
        index = ctx.indices
        if not a["keepdim"]:
            g, index = g.unsqueeze(a["dim"]), index.unsqueeze(a["dim"])
        return apply_op(ScatterAdd, (g,), {"dim": a["dim"], "index": index._data,
                                           "shape": a["self_sym_sizes"]}),

    def jvp(x, out, dx, dim, **attrs):
        if x.ndim == 0:
            return dx, None
        index = out[1] if attrs.get("keepdim", True) else out[1].unsqueeze(dim)
        picked = apply_op(Gather, (dx,), {"dim": dim, "index": index._data})
        return (picked if attrs.get("keepdim", True) else picked.squeeze(dim)), None


class Sort(_SelectAlongDim):
    name = "SortBackward0"
    internal_attrs = ('keepdim',)  # kept for backward; PyTorch's node does not show it

    def forward(x, dim, descending):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        idx = _argsort(x, dim, descending)
        return np.take_along_axis(x, idx, axis=dim), idx.astype(np.int64)


class Topk(_SelectAlongDim):
    name = "TopkBackward0"
    internal_attrs = ('keepdim',)  # kept for backward; PyTorch's node does not show it

    def forward(x, dim, k, largest):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        idx = np.take(_argsort(x, dim, largest), np.arange(k), axis=dim)
        return np.take_along_axis(x, idx, axis=dim), idx.astype(np.int64)


class MedianDim(_SelectAlongDim):
    name = "MedianBackward1"
    saves_attrs = ("dim", "keepdim")

    def forward(x, dim, keepdim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        n = x.shape[dim]
        idx = np.take(_argsort(x, dim, False), [(n - 1) // 2], axis=dim)
        nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
        has_nan = nan.any(axis=dim, keepdims=True)  # a row with NaN: its median is its first NaN
        idx = np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), idx)
        values = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype(np.int64)


class MedianAll(Op):
    """median(): the lower median; ties share the gradient evenly (evenly_distribute_backward)."""

    name = "MedianBackward0"

    def forward(x):
        flat = np.sort(x.reshape(-1))
        if flat.size == 0:
            return np.asarray(np.nan, dtype=x.dtype)
        return np.asarray(flat[(flat.size - 1) // 2])  # NaN sorts last, and wins if present

    def save(ctx, x, out):
        ctx.save(self=x)
        ctx.save_result("result", out)

    @staticmethod
    def _mask(x, r):
        if np.isnan(r._data):
            return _make(np.isnan(x._data))
        return x == r

    def backward(ctx, g):
        mask = MedianAll._mask(ctx.self, ctx.result)
        return g * mask / mask.sum(),

    def jvp(x, out, dx):
        mask = MedianAll._mask(x, out)
        return (dx * mask).sum() / mask.sum()


class Logcumsumexp(Op):
    name = "LogcumsumexpBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim):
        if x.ndim == 0:
            return x.copy()
        with _errstate():
            return np.logaddexp.accumulate(x, axis=dim)

    def save(ctx, x, out, dim):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        # d result_j / d x_i = exp(x_i - result_j) for j >= i, summed in log space as ATen's
        # logcumsumexp_backward does: the positive and the negative parts of g apart
        x, r, d = ctx.self, ctx.result, ctx._attrs["dim"]
        if g.ndim == 0 or g.numel() == 0:
            return g,
        lowest = float(np.finfo(g._data.dtype).min)
        log_abs = g.abs().log()
        F = _F()
        parts = [(F.where(mask, log_abs, lowest) - r).flip(d).logcumsumexp(d).flip(d) + x
                 for mask in (g > 0, g < 0)]
        return parts[0].exp() - parts[1].exp(),

    def jvp(x, out, dx, dim):
        if x.ndim == 0:
            return dx
        e = (x - x.amax(dim, keepdim=True)).exp()  # ATen's logcumsumexp_jvp: exp-normalized
        return (dx * e).cumsum(dim) / e.cumsum(dim)


def _running_extreme_indices(x, values, dim):
    """Indices for cummax/cummin: the last position at or before each one where the running
    value was set (``x >= running max``, ties move it on; a NaN sets it and keeps it)."""
    sets = x == values
    if x.dtype.kind == "f":
        sets |= np.isnan(x)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    positions = np.arange(x.shape[dim]).reshape(shape)
    return np.maximum.accumulate(np.where(sets, positions, 0), axis=dim).astype(np.int64)


class Cummax(_SelectAlongDim):
    name = "CummaxBackward0"
    np_fn = np.maximum

    @classmethod
    def forward(cls, x, dim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        if x.size == 0:
            return x.copy(), np.zeros(x.shape, np.int64)
        values = cls.np_fn.accumulate(x, axis=dim)  # np.maximum/minimum carry NaN on, as PyTorch
        return values, _running_extreme_indices(x, values, dim)


class Cummin(Cummax):
    name = "CumminBackward0"
    np_fn = np.minimum


@export()
def logcumsumexp(input, dim):
    return _unary(Logcumsumexp, input, {"dim": normalize_dim(dim, input.ndim)})


@export()
def cummax(input, dim):
    values, indices = apply_op(Cummax, (input,), {"dim": normalize_dim(dim, input.ndim)})
    return _namedtuple_values_indices(values, indices, "cummax")


@export()
def cummin(input, dim):
    values, indices = apply_op(Cummin, (input,), {"dim": normalize_dim(dim, input.ndim)})
    return _namedtuple_values_indices(values, indices, "cummin")


@export()
def sort(input, dim=-1, descending=False, stable=False):
    values, indices = apply_op(Sort, (input,), {"dim": normalize_dim(dim, input.ndim),
                                                 "descending": descending})
    return values_indices(values, indices)


@export()
def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return _make(np.zeros((), np.int64))
    return _make(_argsort(input._data, normalize_dim(dim, input.ndim), descending).astype(np.int64))


@export()
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = apply_op(Topk, (input,), {"dim": d, "k": k, "largest": largest})
    return values_indices(values, indices)


@export()
def median(input, dim=None, keepdim=False):
    if dim is None:
        return apply_op(MedianAll, (input,))
    values, indices = apply_op(MedianDim, (input,), {"dim": normalize_dim(dim, input.ndim),
                                                      "keepdim": keepdim})
    return values_indices(values, indices)


# ---------------------------------------------------------------- shifts, triangles, diagonals

class Roll(Op):
    name = "RollBackward0"
    saves_attrs = ("shifts", "dims")

    def forward(x, shifts, dims):
        return np.roll(x, shifts, axis=dims or None)

    def backward(ctx, g):
        a = ctx._attrs
        return g.roll(tuple(-s for s in a["shifts"]), a["dims"] or None),

    def jvp(x, out, dx, shifts, dims):
        return dx.roll(shifts, dims or None)


class Tril(Op):
    name = "TrilBackward0"
    saves_attrs = ("diagonal",)

    def forward(x, diagonal):
        return np.tril(x, diagonal)

    def backward(ctx, g):
        return g.tril(ctx._attrs["diagonal"]),

    def jvp(x, out, dx, diagonal):
        return dx.tril(diagonal)


class Triu(Op):
    name = "TriuBackward0"
    saves_attrs = ("diagonal",)

    def forward(x, diagonal):
        return np.triu(x, diagonal)

    def backward(ctx, g):
        return g.triu(ctx._attrs["diagonal"]),

    def jvp(x, out, dx, diagonal):
        return dx.triu(diagonal)


def _diagonal_array(x, offset, dim1, dim2):
    d = np.diagonal(x, offset, dim1, dim2)
    if x.flags.writeable:
        d.flags.writeable = True  # a view that can be written through, as PyTorch's is
    return d


class Diagonal(Op):
    name = "DiagonalBackward0"
    is_view = True
    saves_attrs = ("offset", "dim1", "dim2", "self_sym_sizes")

    def forward(x, offset, dim1, dim2, self_sym_sizes):
        return _diagonal_array(x, offset, dim1, dim2)

    def backward(ctx, g):
        a = ctx._attrs
        return diagonal_backward(g, a["self_sym_sizes"], a["offset"], a["dim1"], a["dim2"]),

    def jvp(x, out, dx, offset, dim1, dim2, self_sym_sizes):
        return dx.diagonal(offset, dim1, dim2)


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: a copy of the diagonal, not a view."""

    name = "DiagonalBackward0_copy"
    is_view = False

    def forward(x, offset, dim1, dim2, self_sym_sizes):
        return np.diagonal(x, offset, dim1, dim2).copy()


class DiagonalBackward(Op):
    """zeros(shape) with ``g`` on a diagonal: the backward of diagonal and trace."""

    name = "DiagonalBackwardBackward0"
    saves_attrs = ("offset", "dim1", "dim2")

    def forward(g, shape, offset, dim1, dim2):
        out = np.zeros(shape, dtype=g.dtype)
        _diagonal_array(out, offset, dim1, dim2)[...] = g
        return out

    def backward(ctx, gg):
        a = ctx._attrs
        return gg.diagonal(a["offset"], a["dim1"], a["dim2"]),

    def jvp(g, out, dg, shape, offset, dim1, dim2):
        return diagonal_backward(dg, shape, offset, dim1, dim2)


def diagonal_backward(g, shape, offset, dim1, dim2):
    return apply_op(DiagonalBackward, (g,), {"shape": tuple(shape), "offset": offset,
                                             "dim1": dim1, "dim2": dim2})


class DiagEmbed(Op):
    """``diag`` of a vector: the square matrix with it on the ``offset`` diagonal."""

    name = "DiagEmbedBackward0"
    saves_attrs = ("offset", "dim1", "dim2")

    def forward(x, offset, dim1, dim2):
        return np.diag(x, offset)

    def backward(ctx, g):
        return g.diagonal(ctx._attrs["offset"]),

    def jvp(x, out, dx, offset, dim1, dim2):
        return dx.diag(offset)


class Trace(Op):
    name = "TraceBackward0"
    saves_attrs = ("self_sym_sizes",)

    def forward(x, self_sym_sizes):
        return np.asarray(np.trace(x), dtype=np.int64 if x.dtype.kind in "biu" else x.dtype)

    def backward(ctx, g):
        shape = ctx._attrs["self_sym_sizes"]
        return diagonal_backward(g.expand(min(shape)), shape, 0, 0, 1),

    def jvp(x, out, dx, self_sym_sizes):
        return dx.trace()


@export()
def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is None, got {len(shifts)}")
        dims = ()
    else:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        dims = tuple(normalize_dim(d, input.ndim) for d in dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return apply_op(Roll, (input,), {"shifts": shifts, "dims": dims})


def _check_matrix(name, input):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


@export()
def tril(input, diagonal=0):
    _check_matrix("tril", input)
    return apply_op(Tril, (input,), {"diagonal": diagonal})


@export()
def triu(input, diagonal=0):
    _check_matrix("triu", input)
    return apply_op(Triu, (input,), {"diagonal": diagonal})


@export()
def diagonal(input, offset=0, dim1=0, dim2=1):
    from .shape import make_view

    d1, d2 = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = apply_op(Diagonal, (input,), {"offset": offset, "dim1": d1, "dim2": d2,
                                        "self_sym_sizes": tuple(input.shape)})
    return make_view(out, input)


@export()
def diag(input, diagonal=0):
    if input.ndim == 1:
        return apply_op(DiagEmbed, (input,), {"offset": diagonal, "dim1": -2, "dim2": -1})
    if input.ndim == 2:
        return apply_op(DiagonalCopy, (input,), {"offset": diagonal, "dim1": 0, "dim2": 1,
                                                 "self_sym_sizes": tuple(input.shape)})
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")


@export()
def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply_op(Trace, (input,), {"self_sym_sizes": tuple(input.shape)})


# ---------------------------------------------------------------- statistics

class _MomentsMean(Op):
    """std_mean/var_mean: one node, two outputs (the spread, then the mean)."""

    saves_attrs = ("correction", "dim", "keepdim")
    is_std = False

    @classmethod
    def forward(cls, x, dim, correction, keepdim):
        with np.errstate(all="ignore"):
            spread = (np.std if cls.is_std else np.var)(x, axis=dim, ddof=correction, keepdims=keepdim)
            return np.asarray(spread, dtype=x.dtype), np.asarray(x.mean(axis=dim, keepdims=keepdim), dtype=x.dtype)

    def save(ctx, x, out, dim, correction, keepdim):
        ctx.save(self=x)
        if ctx.op.is_std:  # std's derivative divides by it; var_mean's saves only self (PyTorch's too)
            ctx.save_result("result0", out[0])

    def backward(ctx, g_spread, g_mean=None):
        a = ctx._attrs
        x = ctx.self
        dims = a["dim"] if a["dim"] is not None else tuple(range(x.ndim))
        n = int(np.prod([x.shape[d] for d in dims]))
        spread = ctx.result0 if ctx.op.is_std else None
        if not a["keepdim"]:
            for d in sorted(dims):
                g_spread = g_spread.unsqueeze(d) if g_spread is not None else None
                g_mean = g_mean.unsqueeze(d) if g_mean is not None else None
                spread = spread.unsqueeze(d) if spread is not None else None
        centered = x - x.mean(dims, keepdim=True)
        grad = None
        if g_spread is not None:
            if ctx.op.is_std:
                grad = g_spread * centered / (spread * (n - a["correction"]))
            else:
                grad = g_spread * centered * (2.0 / (n - a["correction"]))
        if g_mean is not None:
            part = (g_mean / n).expand(x.shape)
            grad = part if grad is None else grad + part
        return grad,

    @classmethod
    def jvp(cls, x, out, dx, dim, correction, keepdim):
        dims = dim if dim is not None else tuple(range(x.ndim))
        n = int(np.prod([x.shape[d] for d in dims]))
        s = ((x - x.mean(dims, keepdim=True)) * dx).sum(dims, keepdim=keepdim)
        spread = s / (out[0] * (n - correction)) if cls.is_std else s * (2.0 / (n - correction))
        return spread, dx.mean(dims, keepdim=keepdim)


class StdMean(_MomentsMean):
    name = "StdMeanBackward0"
    is_std = True


class VarMean(_MomentsMean):
    name = "VarMeanBackward0"


def _moments(op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    dims = None if dim is None else normalize_dims(dim, input.ndim)
    return apply_op(op, (input,), {"dim": dims, "correction": correction, "keepdim": keepdim})


@export(method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(StdMean, input, dim, unbiased, keepdim, correction)


@export(method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(VarMean, input, dim, unbiased, keepdim, correction)


class Dist(Op):
    """``dist(a, b, p)``: the p-norm of ``a - b``."""

    name = "DistBackward0"
    saves_attrs = ("p",)

    def forward(x, y, p):
        d = np.abs(np.asarray(x - y, dtype=np.result_type(x, y))).reshape(-1)
        if p == 0:
            r = np.count_nonzero(d)
        elif p == math.inf:
            r = d.max(initial=0)
        elif p == -math.inf:
            r = d.min(initial=math.inf)
        else:
            r = np.sum(d ** p) ** (1.0 / p)
        return np.asarray(r, dtype=d.dtype)

    def save(ctx, x, y, out, p):
        ctx.save(self=x, other=y)
        ctx.save_result("result", out)

    def backward(ctx, g):
        grad = Dist._norm_backward(g, ctx.self - ctx.other, ctx._attrs["p"], ctx.result)
        need = ctx.needs_input_grad
        return (grad if need[0] else None), (-grad if need[1] else None)

    @staticmethod
    def _norm_backward(g, d, p, norm):
        if p == 0 or float(norm) == 0:
            return d * 0
        if p == 1:
            return d.sign() * g
        if p == 2:
            return d * (g / norm)
        if math.isinf(p):
            mask = d.abs() == norm
            return d.sign() * mask * (g / mask.sum())
        return d * d.abs().pow(p - 2) * (g / norm.pow(p - 1))

    def jvp(x, y, out, dx, dy, p):
        return (Dist._norm_backward(out * 0 + 1, x - y, p, out) * (dx - dy)).sum()


@export()
def dist(input, other, p=2):
    return apply_op(Dist, (input, other), {"p": p})


# ---------------------------------------------------------------- masks and predicates (no grad)

class MaskedSelect(Op):
    name = "MaskedSelectBackward0"

    def forward(x, mask):
        shape = np.broadcast_shapes(x.shape, mask.shape)
        return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]

    def save(ctx, x, out, mask):
        ctx._attrs = {"mask": np.broadcast_to(mask, np.broadcast_shapes(x.shape, mask.shape))}

    def backward(ctx, g):
        mask = ctx._attrs["mask"]
        return index_put_zeros(g, mask.shape, mask),

    def jvp(x, out, dx, mask):
        return apply_op(MaskedSelect, (dx,), {"mask": mask})


@export()
def masked_select(input, mask):
    if mask.dtype.np is not np.dtype(np.bool_) and mask.dtype.np != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, but got {mask.dtype}".replace(
            "gradwalk.", "torch."))
    return apply_op(MaskedSelect, (input,), {"mask": mask._data})


@export()
def nonzero(input, *, as_tuple=False):
    data = np.atleast_1d(input._data) if as_tuple else input._data
    found = np.argwhere(data).astype(np.int64)
    if as_tuple:
        return tuple(_make(found[:, k].copy()) for k in range(found.shape[1]))
    return _make(found)


@export()
def count_nonzero(input, dim=None):
    dims = None if dim is None else normalize_dims(dim, input.ndim)
    count = np.count_nonzero(input._data, axis=dims)
    return _make(np.asarray(count, dtype=np.int64) if count.__class__ is not MetaArray else count.astype(np.int64))


def _predicate(fn, input, dim, keepdim):
    data = input._data
    out = fn(data, axis=None if dim is None else normalize_dims(dim, input.ndim), keepdims=keepdim)
    return _make(np.asarray(out, dtype=np.uint8 if data.dtype == np.uint8 else np.bool_)
                 if out.__class__ is not MetaArray else out.astype(np.uint8 if data.dtype == np.uint8 else np.bool_))


@export()
def any(input, dim=None, keepdim=False):  # noqa: A001
    return _predicate(np.any, input, dim, keepdim)


@export()
def all(input, dim=None, keepdim=False):  # noqa: A001
    return _predicate(np.all, input, dim, keepdim)


# ---------------------------------------------------------------- composites of existing ops

@export("movedim", "moveaxis")
def movedim(input, source, destination):
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({source} dims) should contain the "
            f"same number of dims as destination ({destination} dims)")
    n = input.ndim
    src = [normalize_dim(d, n) for d in source]
    dst = [normalize_dim(d, n) for d in destination]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o is None else o for o in order]
    return input.permute(*order)


def _atleast(t, ndim):
    if t.ndim >= ndim:
        return t
    if ndim == 1:
        return t.reshape(1)
    return t.unsqueeze(0) if t.ndim == 1 else t.reshape(1, 1)


@export(method=False)
def hstack(tensors):
    tensors = [_atleast(t, 1) for t in tensors]
    return _F().cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@export("vstack", "row_stack", method=False)
def vstack(tensors):
    return _F().cat([_atleast(t, 2) for t in tensors], 0)


@export(method=False)
def dstack(tensors):
    """Stacked along the third dim; 1-D ``(n,)`` counts as ``(1, n, 1)``, 2-D ``(m, n)`` as
    ``(m, n, 1)`` (``atleast_3d``)."""
    def at3(t):
        if t.ndim >= 3:
            return t
        if t.ndim == 2:
            return t.unsqueeze(2)
        return t.reshape(1, -1, 1)
    return _F().cat([at3(t) for t in tensors], 2)


@export(method=False)
def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for k, t in enumerate(tensors):
        position = (1 - k if k < 2 else k) if swap else k
        shape = [1] * len(tensors)
        shape[position] = -1
        grids.append(t.view(*shape).expand(*sizes))
    return tuple(grids)


@export()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    Tensor = _tensor.Tensor
    if dim is None:
        input, dim = input.flatten(), 0
    d = normalize_dim(dim, input.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        index = np.repeat(np.arange(input.shape[d]), repeats._data.astype(np.int64))
        return input.index_select(d, _make(index.astype(np.int64)))
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    shape = list(input.shape)
    expanded = shape[:d + 1] + [r] + shape[d + 1:]
    out_shape = shape[:d] + [shape[d] * r] + shape[d + 1:]
    return input.unsqueeze(d + 1).expand(*expanded).clone().reshape(*out_shape)
