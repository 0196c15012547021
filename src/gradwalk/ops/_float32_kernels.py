"""PyTorch's float32 CPU kernels, as NumPy: the same functions, the same order of operations.

PyTorch 2.13's CPU build (MKL, CPU capability AVX512) computes the common float32 functions
three ways, and each op here follows the way PyTorch takes for it:

* **MKL VML** (``aten/src/ATen/cpu/vml.h``: ``vmsExp``, ``vmsLn``, ``vmsTanh``, ``vmsSin``,
  ``vmsCos``, ``vmsAtan``, ... with ``VML_HA``) for ``exp``, ``log``, ``tanh``, ``sin``, ``cos``,
  ``tan``, ``atan``, ``asin``, ``acos``, ``erf``, ``erfc``, ``erfinv``, ``log10``, ``log2``,
  ``sqrt`` (float32 and float64), and MKL's gemm/gemv/dot for the matrix products. MKL is closed
  source: with the ``mkl`` extra installed, ``vml`` and ``ops/linalg.py`` call MKL itself
  (``gradwalk._mkl``: PyTorch's bits, every element measured). Without it, ``mkl_like``
  computes the function in float64 and rounds once to float32, the exact value's nearest
  float32: PyTorch's bits for all but about 1% of elements (``exp``, ``tanh``), 5% (``sin``,
  ``cos``) or 0.01% (``log``), against 70% / 32% / 16% / 5% differing with NumPy's own float32
  functions; ``matmul`` runs MKL's sgemm as one FMA chain over k (exact for k up to 256).
* **SLEEF** (``Vectorized<float>::exp()`` is ``Sleef_expf16_u10``, ``log()`` is
  ``Sleef_logf16_u10``) inside PyTorch's own kernels: ``sigmoid`` (``1 / (1 + exp(-x))``, 32
  elements at a time, the tail with the C library's ``expf``), ``softmax``, ``log_softmax`` and
  their backward formulas. SLEEF is open source: ``sleef_expf`` and ``sleef_logf`` below are its
  algorithms (``sleefsimdsp.c``: ``xexpf``, ``xlogf_u1`` as built for AVX-512, with fused
  multiply-adds), bit for bit.
* **PyTorch's vectorised reductions** (``aten/src/ATen/cpu/vec/functional_base.h``:
  ``reduce_all``, ``map_reduce_all``, ``map2_reduce_all``): 16 float lanes, the lanes then added
  as a tree (``vec_reduce_all``'s shuffles); ``vec_sum_lastdim`` and ``vec_dot_lastdim`` add in
  that order. GCC fuses some of the kernels' ``a * b + c`` into one FMA (``-ffp-contract=fast``):
  where it does (measured), ``fma32`` does too.

A float32 FMA is computed in float64: ``a * b`` is exact there (48 bits), the sum is rounded
twice (float64, then float32), which differs from one rounding only in the rare case of a tie
created by the first rounding.

Large arrays run SLEEF's ``expf`` compiled (``_float32_fast``, numba) when numba is on; the
NumPy code here is the reference and the path for small arrays.
"""
import math

import numpy as np

from .. import _fast, _mkl

F32 = np.float32
F64 = np.float64

# ------------------------------------------------------------------------------------------------
# MKL's functions: MKL itself when installed, else float64 rounded once

# the NumPy ufunc each VML function computes, and the reference (no MKL) for float32 and float64
VML_NAMES = {np.exp: "Exp", np.log: "Ln", np.tanh: "Tanh", np.sin: "Sin", np.cos: "Cos", np.tan: "Tan",
             np.arctan: "Atan", np.arcsin: "Asin", np.arccos: "Acos", np.log10: "Log10", np.log2: "Log2",
             np.sqrt: "Sqrt"}


def vml(fn, x, name=None):
    """PyTorch's ``fn(x)`` for a float32 or float64 array or scalar: MKL's ``vms<name>`` /
    ``vmd<name>`` (``name`` from ``VML_NAMES`` for NumPy's ufuncs), PyTorch's bits, when MKL is
    loaded; else the NumPy reference: a ufunc rounded once from float64 for float32
    (``mkl_like``) and as NumPy computes it for float64, another ``fn`` (erf, erfc, erfinv: a
    function of float64 values) on the float64 values, rounded to ``x``'s dtype."""
    y = _mkl.vml(name or VML_NAMES[fn], x)
    if y is not None:
        return y
    if name is not None:
        return np.asarray(fn(x.astype(F64)), dtype=x.dtype)
    if x.dtype == F32:
        return mkl_like(fn, x)
    with np.errstate(all="ignore"):
        return fn(x)


# ------------------------------------------------------------------------------------------------
# Without MKL: float64, rounded once


_MATH = {np.exp: math.exp, np.log: math.log, np.tanh: math.tanh, np.sin: math.sin,
         np.cos: math.cos, np.tan: math.tan, np.log1p: math.log1p, np.expm1: math.expm1,
         np.arctan: math.atan, np.arcsin: math.asin, np.arccos: math.acos, np.log10: math.log10,
         np.log2: math.log2, np.sqrt: math.sqrt}


_QUIET = {np.tanh, np.sin, np.cos, np.tan}  # as before: NumPy may warn for inf/nan inputs


def mkl_like(fn, x):
    """``fn`` (a NumPy ufunc) of a float32 array or scalar, in float64 then rounded to float32:
    the correctly rounded value, as near to MKL's ``VML_HA`` result as a NumPy function gets.
    A scalar (or 0-d array) goes through ``math`` (no ufunc call, no errstate): the same value."""
    if x.__class__ is np.ndarray and x.ndim:
        if fn in _QUIET:
            return _in_float64(fn, x)
        with np.errstate(all="ignore"):
            return _in_float64(fn, x)
    try:
        return F32(_MATH[fn](x))
    except (ValueError, OverflowError):  # inf, nan, log(0), exp(1000): IEEE values, as NumPy's
        with np.errstate(all="ignore"):
            return F32(fn(F64(x)))


def _in_float64(fn, x):
    if x.size < 4096:  # small: one float64 copy (NumPy's casting loop costs more to set up)
        y = x.astype(F64)
        fn(y, out=y)
        return y.astype(F32)
    return fn(x, out=np.empty(x.shape, F32), dtype=F64, casting="same_kind")  # buffered


# ------------------------------------------------------------------------------------------------
# SLEEF (sleefsimdsp.c), float32, AVX-512 build

def fma32(a, b, c):
    """float32 ``a * b + c`` with one rounding (almost always: see the module's docstring)."""
    p = np.asarray(a, F64) * b
    p += c
    return p.astype(F32)


_R_LN2 = F32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = F32(0.693145751953125)
_L2L = F32(1.428606765330187045e-06)
_EXP_POLY = tuple(F32(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                                   0.00833336077630519866943359, 0.0416664853692054748535156,
                                   0.166666671633720397949219, 0.5))
FAST_MIN = 256  # arrays of at least this many elements run the compiled kernels (numba on)
FAST_ELEMENTWISE_MIN = 1 << 14  # tanh_backward: compiled from this size (one pass, not five)


def sleef_expf(d):
    """``Sleef_expf16_u10``: PyTorch's ``Vectorized<float>::exp()`` (1-ulp SLEEF ``xexpf``)."""
    d = np.asarray(d, F32)
    fast = _compiled(d)
    if fast is not None:
        return fast.sleef_expf(d)
    with np.errstate(all="ignore"):
        q = np.rint(d * _R_LN2)                       # vrint_vi2_vf: to nearest, ties to even
        s = fma32(q, -_L2U, d)                        # d - q*ln2, in two parts (Cody-Waite)
        s = fma32(q, -_L2L, s)
        u = np.full(s.shape, _EXP_POLY[0], F32)
        for c in _EXP_POLY[1:]:
            u = fma32(u, s, c)
        u = F32(1) + fma32(s * s, u, s)
        qi = np.clip(np.nan_to_num(q), -256, 256).astype(np.int32)
        h = qi >> 1                                   # vldexp2: u * 2^(q>>1) * 2^(q - (q>>1))
        u = u * np.ldexp(F32(1), h).astype(F32) * np.ldexp(F32(1), qi - h).astype(F32)
        u = np.where(d < -104, F32(0), u)
        u = np.where(d > 100, F32(np.inf), u)
        return np.where(np.isnan(d), d, u).astype(F32, copy=False)


def _two_sum(x, y):
    """SLEEF's ``dfadd2_vf2_vf_vf``: ``x + y`` as a float32 pair (sum, error)."""
    s = (x + y).astype(F32)
    v = (s - x).astype(F32)
    return s, ((x - (s - v)).astype(F32) + (y - v).astype(F32)).astype(F32)


def sleef_logf(d):
    """``Sleef_logf16_u10``: PyTorch's ``Vectorized<float>::log()`` (SLEEF ``xlogf_u1`` with
    AVX-512's ``getexp``/``getmant``, double-float arithmetic)."""
    d = np.asarray(d, F32)
    fast = _compiled(d)
    if fast is not None:
        return fast.sleef_logf(d)
    with np.errstate(all="ignore"):
        a = np.abs(d * F32(1 / 0.75))
        e = np.floor(np.log2(a, dtype=F64))           # vgetexp: floor(log2|x|), exact
        e = np.where(np.isinf(a), 128.0, e).astype(F32)
        ei = np.nan_to_num(e, nan=0, posinf=0, neginf=0).astype(np.int32)
        m = np.ldexp(np.abs(d).astype(F64), -ei).astype(F32)  # vgetmant, in [0.75, 1.5)
        ln2_hi, ln2_lo = F32(0.69314718246459960938), F32(-1.904654323148236017e-09)
        sx = (ln2_hi * e).astype(F32)                 # dfmul(ln2 pair, e)
        sy = fma32(ln2_lo, e, fma32(ln2_hi, e, -sx))
        nx, ny = _two_sum(F32(-1), m)                 # x = (m - 1) / (m + 1), double-float
        dx, dy = _two_sum(F32(1), m)
        t = (F32(1) / dx).astype(F32)
        xx = (nx * t).astype(F32)
        u = fma32(t, nx, -xx)
        v = fma32(-dy, t, fma32(-dx, t, F32(1)))
        xy = fma32(xx, v, fma32(ny, t, u))
        x2 = (xx * xx).astype(F32)
        p = fma32(F32(0.3027294874), x2, F32(0.3996108174))
        p = fma32(p, x2, F32(0.6666694880))
        yx, yy = (xx * F32(2)).astype(F32), (xy * F32(2)).astype(F32)
        s1x = (sx + yx).astype(F32)                   # dfadd(s, 2x)
        s1y = (((sx - s1x).astype(F32) + yx).astype(F32) + (sy + yy).astype(F32)).astype(F32)
        w = ((x2 * xx).astype(F32) * p).astype(F32)
        s2x = (s1x + w).astype(F32)                   # dfadd(s, x^3 * p)
        s2y = (((s1x - s2x).astype(F32) + w).astype(F32) + s1y).astype(F32)
        r = (s2x + s2y).astype(F32)
        r = np.where(np.isposinf(d), F32(np.inf), r)
        r = np.where((d < 0) | np.isnan(d), F32(np.nan), r)
        return np.where(d == 0, F32(-np.inf), r).astype(F32, copy=False)


# SLEEF's double-float arithmetic (df.h, FMA build): a value as a float32 pair (high, low)

def _mul_ff(x, y):
    s = x * y
    return s, fma32(x, y, -s)

def _mul_f2f(xx, xy, y):
    s = xx * y
    return s, fma32(xy, y, fma32(xx, y, -s))

def _mul_f2f2(xx, xy, yx, yy):
    s = xx * yx
    return s, fma32(xx, yy, fma32(xy, yx, fma32(xx, yx, -s)))

def _squ(xx, xy):
    s = xx * xx
    return s, fma32(xx + xx, xy, fma32(xx, xx, -s))

def _div(nx, ny, dx, dy):
    t = F32(1) / dx
    s = nx * t
    u = fma32(t, nx, -s)
    v = fma32(-dy, t, fma32(-dx, t, F32(1)))
    return s, fma32(s, v, fma32(ny, t, u))

def _add2_ff(x, y):
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)

def _add_f2f2(xx, xy, yx, yy):
    s = xx + yx
    return s, (((xx - s) + yx) + xy) + yy

def _add2_f2f2(xx, xy, yx, yy):
    s = xx + yx
    v = s - xx
    return s, ((xx - (s - v)) + (yx - v)) + (xy + yy)

def _add2_f2f(xx, xy, y):
    s = xx + y
    v = s - xx
    return s, ((xx - (s - v)) + (y - v)) + xy

def _add_ff2(x, yx, yy):
    s = x + yx
    return s, ((x - s) + yx) + yy

def _logkf(d):
    """SLEEF's ``logkf`` (AVX-512: getexp/getmant): log(d) as a float32 pair."""
    a = np.abs(d * F32(1 / 0.75))
    e = np.floor(np.log2(a, dtype=F64))
    e = np.where(np.isinf(a), 128.0, e).astype(F32)
    ei = np.nan_to_num(e, nan=0, posinf=0, neginf=0).astype(np.int32)
    m = np.ldexp(np.abs(d).astype(F64), -ei).astype(F32)
    x = _div(*_add2_ff(F32(-1), m), *_add2_ff(F32(1), m))
    x2 = _squ(*x)
    t = fma32(F32(0.240320354700088500976562), x2[0], F32(0.285112679004669189453125))
    t = fma32(t, x2[0], F32(0.400007992982864379882812))
    c = (F32(0.66666662693023681640625), F32(3.69183861259614332084311e-09))
    s = _mul_f2f(F32(0.69314718246459960938), F32(-1.904654323148236017e-09), e)
    s = _add_f2f2(*s, x[0] * F32(2), x[1] * F32(2))
    s = _add_f2f2(*s, *_mul_f2f2(*_mul_f2f2(*x2, *x), *_add2_f2f2(*_mul_f2f(*x2, t), *c)))
    return s

def _expkf(dx, dy):
    """SLEEF's ``expkf``: exp of a float32 pair."""
    u = (dx + dy) * _R_LN2
    q = np.rint(np.nan_to_num(u, nan=0, posinf=1000, neginf=-1000).clip(-1000, 1000))
    s = _add2_f2f(dx, dy, q.astype(F32) * -_L2U)
    s = _add2_f2f(*s, q.astype(F32) * -_L2L)
    sx = s[0] + s[1]
    s = (sx, (s[0] - sx) + s[1])
    u = F32(0.00136324646882712841033936)
    for c in (0.00836596917361021041870117, 0.0416710823774337768554688, 0.166665524244308471679688,
              0.499999850988388061523438):
        u = fma32(u, s[0], F32(c))
    t = _add_f2f2(*s, *_mul_f2f(*_squ(*s), u))
    t = _add_ff2(F32(1), *t)
    u = t[0] + t[1]
    u = np.ldexp(u, q.astype(np.int32)).astype(F32)
    return np.where(dx < -104, F32(0), u)

def sleef_powf(x, y):
    """``Sleef_powf16_u10``: PyTorch's ``Vectorized<float>::pow`` (SLEEF ``xpowf``: exp(y log|x|)
    in double-float arithmetic with FMAs, then IEEE's special cases)."""
    x = np.asarray(x, F32)
    y = np.asarray(y, F32)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        yisint = (np.trunc(y) == y) | (ay > F32(1 << 24))
        yi = np.where(ay < F32(1 << 24), np.nan_to_num(y), 0).astype(np.int64)
        yisodd = ((yi & 1) == 1) & yisint & (ay < F32(1 << 24))
        lx, ly = _logkf(np.abs(x))
        result = _expkf(*_mul_f2f(lx, ly, y))
        result = np.where(np.isnan(result), F32(np.inf), result)
        result = result * np.where(x > 0, F32(1), np.where(yisint, np.where(yisodd, F32(-1), F32(1)), F32(np.nan)))
        efx = np.abs(x) - F32(1)
        efx = np.where(np.signbit(y), -efx, efx)
        result = np.where(np.isinf(y), np.where(efx < 0, F32(0), np.where(efx == 0, F32(1), F32(np.inf))), result)
        mag = np.where(np.signbit(y) ^ (x == 0), F32(0), F32(np.inf))
        sgn = np.where(yisodd, x, F32(1))
        result = np.where(np.isinf(x) | (x == 0), np.copysign(mag, sgn), result)
        result = np.where(np.isnan(x) | np.isnan(y), F32(np.nan), result)
        result = np.where((y == 0) | (x == 1), F32(1), result)
        return result.astype(F32)


def powf(x, exponent):
    """ATen's ``pow_tensor_scalar_kernel`` for float32 (exponents other than PyTorch's special
    ones): SLEEF's powf of the float32 exponent where ``cpu_kernel_vec`` vectorises,
    ``std::pow(float, double)`` (a float64 power, rounded once) for the rest."""
    e = F64(exponent)
    with np.errstate(all="ignore"):
        if x.__class__ is not np.ndarray or x.size < _VEC_STEP:
            return np.power(np.asarray(x, F64), e).astype(F32)[()]
        out = sleef_powf(x, F32(e))
        lanes = vector_lanes(x)
        if not lanes.all():
            tail = ~lanes
            out[tail] = np.power(x[tail].astype(F64), e).astype(F32)
        return out


# ------------------------------------------------------------------------------------------------
# glibc's expf (sysdeps/ieee754/flt-32/e_expf.c): what ``std::exp(float)`` runs in PyTorch's
# scalar loops. In double: x * 32/ln2 = k + r, exp(x) = 2^(k/32) * (1 + c2 r + c1 r^2 + c0 r^3)
# with 2^(i/32) from a 32-entry table, rounded once to float32. (glibc's FMA build fuses the
# polynomial's multiply-adds: a different float64, hence float32, in about 1 case in 10^7.)

_EXP2F_TAB = np.array([
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540], np.uint64)
_EXPF_INVLN2N = float.fromhex("0x1.71547652b82fep+0") * 32
_EXPF_SHIFT = float.fromhex("0x1.8p+52")
_EXPF_C = (float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3, float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2,
           float.fromhex("0x1.62e42ff0c52d6p-1") / 32)


def glibc_expf(x):
    """glibc's ``expf`` of a float32 array."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):
        xd = x.astype(F64)
        z = _EXPF_INVLN2N * xd
        kd = z + _EXPF_SHIFT
        ki = kd.view(np.uint64)
        kd = kd - _EXPF_SHIFT
        r = z - kd
        t = _EXP2F_TAB[(ki % np.uint64(32)).astype(np.intp)] + (ki << np.uint64(47))
        y = ((_EXPF_C[0] * r + _EXPF_C[1]) * (r * r) + (_EXPF_C[2] * r + 1)) * t.view(F64)
        out = y.astype(F32)
        big = np.abs(x) >= F32(88)  # overflow, underflow, inf, nan: the IEEE results
        if big.any():
            out[big] = np.exp(xd[big]).astype(F32)
        return out


# ------------------------------------------------------------------------------------------------
# cpu_kernel_vec: 32 elements at a time, the rest one at a time (ATen/native/cpu/Loops.h)

_VEC_STEP = 32  # vectorized_loop's 2 * Vectorized<float>::size() on AVX-512


def vector_lanes(x):
    """A mask of the elements ``cpu_kernel_vec`` computes with its vectorised function (the rest
    go through the scalar one): all but the last ``n % 32`` of a contiguous run, in memory order;
    per row when only the last dim is contiguous; none for other strides. (PyTorch on several
    threads also starts a new run at each thread's share of a large tensor: not modelled.)"""
    n = x.size
    if x.flags.c_contiguous or x.flags.f_contiguous:
        order = "C" if x.flags.c_contiguous else "F"
        flat = np.ones(n, bool)
        flat[n - n % _VEC_STEP:] = False
        return flat.reshape(x.shape, order=order)
    if x.ndim and x.strides[-1] == x.itemsize:
        row = np.ones(x.shape[-1], bool)
        row[x.shape[-1] - x.shape[-1] % _VEC_STEP:] = False
        return np.broadcast_to(row, x.shape)
    return np.zeros(x.shape, bool)


def sigmoid(x):
    """ATen's ``sigmoid_kernel``: ``(1 + exp(0 - x)).reciprocal()`` with SLEEF's exp where
    vectorised, ``1 / (1 + std::exp(-x))`` (glibc's ``expf``) elsewhere."""
    with np.errstate(all="ignore"):
        if x.__class__ is not np.ndarray or x.size < _VEC_STEP:
            return (F32(1) / (F32(1) + glibc_expf(-x))).astype(F32, copy=False)[()]
        out = F32(1) / (F32(1) + sleef_expf(F32(0) - x))
        lanes = vector_lanes(x)
        if not lanes.all():
            tail = ~lanes
            out[tail] = F32(1) / (F32(1) + glibc_expf(-x[tail]))
        return out


def silu(x):
    """ATen's ``silu_kernel``: ``x / (1 + exp(-x))``, SLEEF's exp where vectorised."""
    with np.errstate(all="ignore"):
        if x.__class__ is not np.ndarray or x.size < _VEC_STEP:
            return (x / (F32(1) + glibc_expf(-x))).astype(F32, copy=False)[()]
        out = x / (F32(1) + sleef_expf(-x))
        lanes = vector_lanes(x)
        if not lanes.all():
            tail = ~lanes
            out[tail] = x[tail] / (F32(1) + glibc_expf(-x[tail]))
        return out


def tanh_backward(g, y):
    """ATen's ``tanh_backward``: ``g * (1 - y * y)``, the inner multiply-add fused by GCC."""
    if y.__class__ is not np.ndarray:  # a scalar: the same float64 arithmetic, in Python floats
        y = float(y)
        return g * F32(1.0 - y * y)
    if (y.size >= FAST_ELEMENTWISE_MIN and g.__class__ is np.ndarray and g.shape == y.shape
            and _fast.numba_njit() is not None):
        from . import _float32_fast

        return _float32_fast.tanh_backward(g, y)
    d = y.astype(F64)
    d *= d
    np.subtract(1.0, d, out=d)
    return g * d.astype(F32)


# ------------------------------------------------------------------------------------------------
# softmax and log_softmax over the last dim (SoftMaxKernel.cpp, LogSoftmaxKernelImpl.h)

_LANES = 16  # Vectorized<float>::size() on AVX-512


def tanh_backward64(g, y):
    """float64 ``tanh_backward``: ``g * fma(-y, y, 1)`` as PyTorch's vectorised kernel computes it
    (one rounding of ``1 - y*y``). NumPy has no FMA: ``y*y`` is split exactly into ``p + e``
    (Dekker's product, Veltkamp's split), ``1 - p`` exactly into ``s + err`` (Knuth's two-sum),
    and ``s + (err - e)`` rounds once (equal to the FMA on 10^6 random values)."""
    p = y * y
    c = 134217729.0 * y  # 2^27 + 1
    hi = c - (c - y)
    lo = y - hi
    e = ((hi * hi - p) + 2 * hi * lo) + lo * lo
    s = 1 - p
    b = s - 1
    err = (1 - (s - b)) + (-p - b)
    return g * (s + (err - e))


def _tree(acc):
    """``vec_reduce_all``: lane i plus lane i+8, then i^4, i^2, i^1 (the 256-, 128-, 64- and
    32-bit shuffles); lane 0. ``acc``: the 16 lanes as rows."""
    v = acc[:8] + acc[8:]
    v = v[:4] + v[4:]
    v = v[:2] + v[2:]
    return v[0] + v[1]


def vec_sum_lastdim(e):
    """``vec::reduce_all(x + y)`` over each row of a 2-D float32 array, in ATen's order: under 16
    columns one lane after another; else 16 running lanes, the tail added into the first lanes,
    then the tree."""
    cols = np.ascontiguousarray(e.T)  # one contiguous row per column: fast slices below
    n = cols.shape[0]
    if n < _LANES:
        acc = cols[0].copy()
        for i in range(1, n):
            acc += cols[i]
        return acc
    acc = cols[:_LANES].copy()
    d = _LANES
    while d < n - n % _LANES:
        acc += cols[d:d + _LANES]
        d += _LANES
    if n > d:
        acc[:n - d] += cols[d:]
    return _tree(acc)


def vec_dot_lastdim(g, y):
    """``vec::map2_reduce_all(x * y, x + y)`` over each row: as ``vec_sum_lastdim`` of the
    products, except that the tail's multiply-add is fused (measured: the loop's is not)."""
    n = g.shape[1]
    if n < _LANES:
        return vec_sum_lastdim(g * y)
    gc, yc = np.ascontiguousarray(g.T), np.ascontiguousarray(y.T)
    acc = gc[:_LANES] * yc[:_LANES]
    d = _LANES
    while d < n - n % _LANES:
        acc += gc[d:d + _LANES] * yc[d:d + _LANES]
        d += _LANES
    if n > d:
        acc[:n - d] = fma32(gc[d:], yc[d:], acc[:n - d])
    return _tree(acc)


def _rows_max(x):
    if x.shape[1] <= 32 and x.shape[0] >= 16:  # NumPy reduces a short last axis row by row
        return x.T.copy().max(axis=0)[:, None]
    return x.max(axis=1, keepdims=True)


_FAST_MODULE = None


def _compiled(x):
    """gradwalk.ops._float32_fast for a large array when numba is on, else None."""
    global _FAST_MODULE
    if x.size < FAST_MIN or _fast.numba_njit() is None:
        return None
    if _FAST_MODULE is None:
        from . import _float32_fast

        _FAST_MODULE = _float32_fast
    return _FAST_MODULE


def _shift_exp_sum(x):
    """(x - max, exp(x - max), the exps' row sums) and the compiled module used (or None)."""
    fast = _compiled(x)
    if fast is not None:
        return fast.shift_exp_sum(x) + (fast,)
    shifted = x - _rows_max(x)
    e = sleef_expf(shifted)
    return shifted, e, vec_sum_lastdim(e), None


def softmax_lastdim(x):
    """``_vec_softmax_lastdim``: ``e = exp(x - max)``, then ``e * (1 / sum(e))``; x 2-D float32."""
    with np.errstate(all="ignore"):
        _, e, sums, _ = _shift_exp_sum(x)
        e *= (F32(1) / sums)[:, None]
        return e


def log_softmax_lastdim(x):
    """``serial_vec_log_softmax_lastdim_range``: ``x - max - log(sum(exp(x - max)))``."""
    fast = _compiled(x)
    if fast is not None:
        return fast.log_softmax(x)
    with np.errstate(all="ignore"):
        shifted, _, sums, fast = _shift_exp_sum(x)
        shifted -= (sleef_logf(sums) if fast is None else fast.sleef_logf(sums))[:, None]
        return shifted


def softmax_backward_lastdim(g, y):
    """``_vec_host_softmax_backward_lastdim``: ``(g - sum(g * y)) * y``."""
    fast = _compiled(g)
    if fast is not None:
        return fast.softmax_backward(g, y)
    out = g - vec_dot_lastdim(g, y)[:, None]
    out *= y
    return out


def log_softmax_backward_lastdim(g, y):
    """``_vec_host_softmax_backward_lastdim<log>``: ``g - exp(y) * sum(g)``, fused by GCC."""
    fast = _compiled(g)
    if fast is not None:
        return fast.log_softmax_backward(g, y)
    with np.errstate(all="ignore"):
        return fma32(-sleef_expf(y), vec_sum_lastdim(g)[:, None], g)


# ------------------------------------------------------------------------------------------------
# nll_loss's sum (aten/src/ATen/native/LossNLL.cpp, nll_loss_out_frame)

_SUMS_FAST = None


def _sums_fast():
    """gradwalk.ops._cascade_sum_fast, imported on first use (callers check numba_njit())."""
    global _SUMS_FAST
    if _SUMS_FAST is None:
        from . import _cascade_sum_fast

        _SUMS_FAST = _cascade_sum_fast
    return _SUMS_FAST


def nll_picked_sum(x, target, compiled=False):
    """``nll_loss``'s sum of ``-x[b, target[b]]`` over the rows of x (N, C), in ATen's order
    (``nll_cascade_sum``); every target a class in [0, C). ``compiled``: pick and add in one
    compiled loop when numba is on."""
    if compiled and x.dtype.char in "fd" and _fast.numba_njit() is not None:
        return _sums_fast().nll_picked_sum(x, target)
    picked = x[np.arange(x.shape[0]), target]
    return nll_cascade_sum(np.negative(picked, out=picked))  # each subtracted from 0: 0 - 0.0 is +0.0


def nll_cascade_sum(values, compiled=False):
    """The sum ``nll_loss_out_frame`` forms of one value per row (any float dtype): 8 partial
    sums. Row b is added to level 0; then, while ``b`` is a multiple of ``step**(j+1)`` (step =
    ``2**max(4, ceil(log2(n)) // 8)``), level j is added to level j + 1 and zeroed. So row 0
    goes straight to the top, rows 1..16 are added one at a time and passed up at row 16, and so
    on; level 7 keeps everything it gets. The result: ``0 + level 0 + level 1 + ... + level 7``.
    (Rows it skips, ``ignore_index``, still count for the passing-up: callers use this only
    without them.) ``compiled``: run that loop compiled (``_cascade_sum_fast``) when numba is on
    (callers ask for it when the loss's input is large enough to run the compiled log_softmax)."""
    if compiled and values.dtype.char in "fd" and _fast.numba_njit() is not None:
        return _sums_fast().nll_cascade_sum(values)
    n = values.shape[0]
    step = 1 << max(4, (int(n - 1).bit_length() if n > 1 else 0) // 8)
    zero = values.dtype.type(0)
    levels = []
    stream = values  # what one level receives, in order
    for level in range(8):
        if level < 7 and stream.shape[0] <= 1:  # what is left passes straight up to level 7
            levels += [zero] * (7 - level) + [zero + stream[0] if stream.shape[0] else zero]
            break
        if level == 7:  # the top keeps everything it gets
            rest, passed = stream, stream[:0]
        else:
            groups = (stream.shape[0] - 1) // step  # full groups after the first value
            body = stream[1:1 + groups * step].reshape(groups, step)
            # each group added one value at a time (accumulate is sequential, never pairwise)
            sums = np.add.accumulate(body, axis=1)[:, -1]
            passed = np.concatenate([stream[:1], sums])
            rest = stream[1 + groups * step:]
        # what stays at this level (fewer than step values, but at level 7), added in order
        # to 0 (0 + the running sum: the same bits as adding each to 0 in turn, -0.0 included)
        levels.append(zero + np.add.accumulate(rest)[-1] if rest.shape[0] else zero)
        if level < 7 and passed.shape[0] == 0:
            break
        stream = passed
    out = zero
    for v in levels:
        out = out + v
    return out


# ------------------------------------------------------------------------------------------------
# matrix products (MKL's sgemm, as measured)

# Measured on PyTorch 2.13's MKL sgemm (AVX-512), one thread: each element of ``a @ b`` is one
# chain of fused multiply-adds over k in order, ``acc = fma(a[i, p], b[p, j], acc)`` from 0, for
# k up to 256 (from 384 on, some layouts take another order), except a few products with a
# transposed ``b`` (``_other_kernel``). There the chain is PyTorch's bits; elsewhere NumPy's BLAS
# is used as it is (PyTorch's bits for 96.5-100% of elements on most shapes measured).
CHAIN_MAX_K = 256
CHAIN_MIN_WORK = 1 << 12      # m * k * n below this: no compiled call (the NumPy chain, k <= 32)
CHAIN_MAX_WORK = 1 << 18      # above: NumPy's BLAS (the compiled chain is slower than BLAS)
CHAIN_MAX_WORK_NUMPY = 1 << 18  # without numba, the NumPy chain (k passes) only up to this


def bmm_small(a, b):
    """ATen's ``baddbmm_cpu_kernel``, what ``bmm`` runs when ``m * k * n < 400``: each element
    the products added in order of k, each product and sum rounded (no FMA), any float dtype."""
    acc = np.zeros((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a, b))
    for p in range(a.shape[2]):
        acc += a[:, :, p:p + 1] * b[:, p:p + 1, :]
    return acc


def matmul_chain(a, b):
    """The reference: ``a @ b`` (2-D float32) as one FMA chain over k per element."""
    acc = np.zeros((a.shape[0], b.shape[1]), F32)
    for p in range(a.shape[1]):
        acc = fma32(a[:, p:p + 1], b[p:p + 1, :], acc)
    return acc


def _other_kernel(a, b):
    """True where MKL was measured to take another kernel than the chain: ``b`` transposed in
    memory (``x @ W.t()``, nn.Linear) with few rows against a long k (k >= 24 * m), or tiny."""
    if b.flags.c_contiguous or not b.flags.f_contiguous:
        return False
    m, k = a.shape
    return k >= 24 * m or (k <= 8 and b.shape[1] <= 8)


def chain_is_mkl(a, b):
    """True where ``matmul`` gives MKL's own bits through one NumPy BLAS call: at least 16 rows
    and 16 columns, k <= 256, not too large, each operand in rows or in columns (measured: equal
    to ``cblas_sgemm`` over ~900 random products in those layouts, and to PyTorch on 1 and 2
    threads; a strided operand goes to MKL, whose copy of it is ATen's). There it costs NumPy's
    call (~1 us) instead of the MKL call through ctypes (~6 us): the small products of a
    minibatch step."""
    m, k = a.shape
    n = b.shape[1]
    af, bf = a.flags, b.flags
    return (m >= 16 and n >= 16 and k <= CHAIN_MAX_K and m * k * n <= CHAIN_MAX_WORK
            and (af.c_contiguous or af.f_contiguous) and (bf.c_contiguous or bf.f_contiguous)
            and not _other_kernel(a, b) and _blas_runs_chain())


def matmul(a, b):
    """``a @ b`` for 2-D float32 arrays with PyTorch's bits where its kernel is known (see above)."""
    m, k = a.shape
    n = b.shape[1]
    work = m * k * n
    if k <= CHAIN_MAX_K and work <= CHAIN_MAX_WORK and not _other_kernel(a, b):
        if m >= 2 and n > 8 and _blas_runs_chain():
            return _chain_through_blas(a, b)
        return _chain(a, b, work)
    return a @ b


def _chain(a, b, work):
    if work < CHAIN_MIN_WORK:  # tiny: the NumPy chain (k passes) when short, else BLAS
        return matmul_chain(a, b) if a.shape[1] <= 32 else a @ b
    if _fast.numba_njit() is not None:
        from . import _float32_fast

        return _float32_fast.matmul_chain(a, b)
    if work <= CHAIN_MAX_WORK_NUMPY:
        return matmul_chain(a, b)
    return a @ b


# NumPy's BLAS (OpenBLAS's SkylakeX sgemm) computes each element as the same in-order FMA chain
# for blocks of 16 columns and for a last block of 9-15; a last block of 1-8 columns goes to
# another kernel. So ``b`` gets zero columns up to a last block of 9, and the chain is one BLAS
# call. Whether this BLAS behaves so is checked once per process (``_blas_runs_chain``); where
# not, the chain runs as written.
def _chain_through_blas(a, b):
    n = b.shape[1]
    tail = n % 16
    if b.flags.f_contiguous and not b.flags.c_contiguous:
        b = np.ascontiguousarray(b)  # a transposed b takes another BLAS path
    if 1 <= tail <= 8:
        padded = np.zeros((b.shape[0], n + 9 - tail), F32)
        padded[:, :n] = b
        return np.ascontiguousarray((a @ padded)[:, :n])
    return a @ b


_BLAS_CHECKED = None


def _blas_runs_chain():
    """True when NumPy's BLAS gives the chain's bits on the shapes ``_chain_through_blas`` sends
    it (checked on a few random products, once per process)."""
    global _BLAS_CHECKED
    if _BLAS_CHECKED is None:
        rng = np.random.default_rng(0)
        same = True
        for m, k, n in ((2, 5, 16), (7, 33, 25), (32, 200, 27), (30, 64, 48), (64, 256, 14)):
            x = rng.standard_normal((m, k)).astype(F32)
            y = rng.standard_normal((k, n)).astype(F32)
            same = same and np.array_equal(x @ y, matmul_chain(x, y))
        _BLAS_CHECKED = bool(same)
    return _BLAS_CHECKED
