"""Compiled (numba) fast paths for the draws NumPy cannot do at PyTorch's speed.

Imported by ``gradwalk._distributions`` only for large draws and only when
``gradwalk._fast.numba_njit()`` gives numba (never by ``import gradwalk``; ``GRADWALK_NO_NUMBA=1``
keeps it unimported). Each kernel runs ATen's loop as PyTorch's CPU build runs it, one value at
a time; the NumPy versions in ``_distributions`` stay the readable reference, and
tests/test_random.py checks both against each other and against PyTorch.

* ``randperm_swaps``: ``randperm_cpu``'s Fisher-Yates, ``swap(r[i], r[i + random() % (n - i)])``.
* ``normal_rows_float``: ``normal_fill_16_AVX2`` on float32, with avx_mathfun's Cephes
  ``log256_ps`` and ``sincos256_ps``. Every multiply-add GCC fuses there is ``llvm.fma.f32`` here:
  one rounding, as the ``vfmadd`` instruction PyTorch runs. Nothing else is fused: numba compiles
  without fast-math, so LLVM neither contracts ``a * b + c`` nor reorders sums.
* ``normal_rows_double``, ``exponential_double``: the float64 kernels, calling the C library's
  ``log``, ``log1p``, ``cos`` and ``sin`` (the same glibc functions PyTorch calls) and
  ``llvm.fma.f64`` for the fused ``radius * cos * std + mean``.
* ``bernoulli_double``: a 53-bit double uniform below ``p``, one pass over the words.
* ``random_from_to``, ``random64_from_to``: ``randint`` / ``random_(low, high)``, ``word % span + low``
  in one pass (a 32-bit remainder for ``random()``'s words, as NumPy's and PyTorch's).
* ``uniform_float``, ``uniform_double``, ``normal_pairs_double`` (the one-at-a-time normal),
  ``exp_double``, ``cauchy_double``, ``geometric_double``: the other transformations, likewise.

The words come a chunk at a time from ``Generator._random``: NumPy's MT19937 for a few, and for
many ``mt19937_fill`` here, the same engine run on NumPy's own state (in place, no copy).
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._fast import numba_njit

njit = numba_njit()
if njit is None:  # pragma: no cover - _distributions imports this module only with numba on
    raise ImportError("gradwalk._random_fast needs numba (and GRADWALK_NO_NUMBA unset)")


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (``llvm.fma``: the FMA instruction), float32 or float64."""
    if not (a == b == c and a in (types.float32, types.float64)):
        return None

    def codegen(context, builder, signature, args):
        ty = context.get_value_type(signature.return_type)
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)
    return a(a, b, c), codegen


@intrinsic
def float_bits(typingctx, x):
    """The bits of a float32, as int32."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@intrinsic
def bits_float(typingctx, x):
    """An int32's bits, as float32."""
    if x != types.int32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


# ------------------------------------------------------------------------------------------------
# randperm


@njit(cache=True)
def randperm_swaps(words, out):
    """``for i < n - 1: swap(out[i], out[i + words[i] % (n - i)])`` on ``out`` (int64, arange(n)),
    ``words`` the ``n - 1`` draws of ``random()``."""
    n = out.size
    for i in range(n - 1):
        k = i + np.int64(words[i] % np.uint32(n - i))  # 32-bit remainder: n < 2**32 / 20 here
        v = out[i]
        out[i] = out[k]
        out[k] = v


# ------------------------------------------------------------------------------------------------
# float32 normal_fill_16_AVX2 (values as in gradwalk._distributions' _log256 and _sincos256)

F32 = np.float32
_ONE = F32(1.0)
_HALF = F32(0.5)
_MINUS_TWO = F32(-2.0)
_TWO_M24 = F32(2.0 ** -24)
_TWO_PI_F = F32(2.0 * math.pi)
_SQRTHF = F32(0.707106781186547524)
_P0, _P1, _P2, _P3, _P4, _P5, _P6, _P7, _P8 = (
    F32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                     1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                     3.3333331174E-1))
_Q1 = F32(-2.12194440e-4)
_Q2 = F32(0.693359375)
_DP1, _DP2, _DP3 = F32(-0.78515625), F32(-2.4187564849853515625e-4), F32(-3.77489497744594108e-8)
_S0, _S1, _S2 = (F32(v) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1))
_C0, _C1, _C2 = (F32(v) for v in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002))
_FOPI = F32(1.27323954473516)


@njit(cache=True, inline="always")
def log256(x):
    """``log256_ps`` on one lane, x in (0, 1]."""
    bits = float_bits(x)
    e = F32((bits >> 23) - 126)  # the exponent + 1
    mant = bits_float(np.int32((bits & 0x007FFFFF) | 0x3F000000))  # in [0.5, 1)
    if mant < _SQRTHF:
        e = e - _ONE
        x = (mant + mant) - _ONE  # exact, as the reference's
    else:
        x = mant - _ONE
    z = x * x
    y = fma(_P0, x, _P1)
    y = fma(y, x, _P2)
    y = fma(y, x, _P3)
    y = fma(y, x, _P4)
    y = fma(y, x, _P5)
    y = fma(y, x, _P6)
    y = fma(y, x, _P7)
    y = fma(y, x, _P8)
    y = y * x
    y = fma(y, z, e * _Q1)
    y = y - z * _HALF
    x = x + y
    return x + e * _Q2


@njit(cache=True, inline="always")
def sincos256(x):
    """``sincos256_ps`` on one lane, x >= 0: (sin, cos)."""
    j = np.int32(x * _FOPI)  # truncation, as cvttps2dq
    j = (j + 1) & ~1
    y = F32(j)
    x = x + y * _DP1
    x = x + y * _DP2
    x = fma(y, _DP3, x)
    z = x * x
    c = fma(_C0, z, _C1)
    c = fma(c, z, _C2)
    c = c * z
    c = fma(c, z, -(z * _HALF))
    c = c + _ONE
    s = fma(_S0, z, _S1)
    s = fma(s, z, _S2)
    s = s * z
    s = fma(s, x, x)
    if j & 2:
        s, c = c, s
    if j & 4:
        s = -s
    if ~(j - 2) & 4:
        c = -c
    return s, c


@njit(cache=True)
def normal_rows_float(words, out, mean, std):
    """Blocks of 16 words (the first 8 the radii's uniforms, the next 8 the angles') to their 16
    normals in ``out`` (float32, as many values as words): ``fmadd(radius * cos, std, mean)``
    and ``fmadd(radius * sin, std, mean)``, also for mean 0 and std 1 (where it turns a -0 into 0).

    The lanes are first gathered into two plain arrays (radii's words, angles' words) so that
    LLVM vectorises the loop over them (one lane's arithmetic is the same either way)."""
    half = words.size // 2
    first = np.empty(half, np.uint32)
    second = np.empty(half, np.uint32)
    for i in range(half):
        k = i + (i & ~7)  # block i // 8, lane i % 8
        first[i] = words[k]
        second[i] = words[k + 8]
    cos_half = np.empty(half, np.float32)
    sin_half = np.empty(half, np.float32)
    for i in range(half):
        u1 = _ONE - F32(first[i] & 0xFFFFFF) * _TWO_M24
        u2 = F32(second[i] & 0xFFFFFF) * _TWO_M24
        radius = np.sqrt(_MINUS_TWO * log256(u1))
        s, c = sincos256(_TWO_PI_F * u2)
        cos_half[i] = fma(radius * c, std, mean)
        sin_half[i] = fma(radius * s, std, mean)
    for i in range(half):
        k = i + (i & ~7)
        out[k] = cos_half[i]
        out[k + 8] = sin_half[i]


# ------------------------------------------------------------------------------------------------
# float64


@njit(cache=True, inline="always")
def unit_double(hi, lo):
    """The low 53 bits of ``random64() = hi << 32 | lo``, times 2**-53."""
    return (np.float64(hi & 0x1FFFFF) * 4294967296.0 + np.float64(lo)) * (2.0 ** -53)


@njit(cache=True)
def normal_rows_double(words, out, mean, std):
    """``normal_fill_16<double>``: blocks of 16 ``random64()`` (32 words) to 16 normals in ``out``."""
    two_pi = 2.0 * math.pi
    for base in range(0, out.size - 15, 16):
        for j in range(8):
            w = 2 * (base + j)
            u1 = 1.0 - unit_double(words[w], words[w + 1])
            u2 = unit_double(words[w + 16], words[w + 17])
            radius = math.sqrt(-2.0 * math.log(u1))
            theta = two_pi * u2
            out[base + j] = fma(radius * math.cos(theta), std, mean)
            out[base + 8 + j] = fma(radius * math.sin(theta), std, mean)


@njit(cache=True)
def exponential_double(words, out, scale):
    """``exponential_``: ``scale * log1p(-u)`` (scale = -1 / lambd) per ``random64()``."""
    for i in range(out.size):
        out[i] = scale * math.log1p(-unit_double(words[2 * i], words[2 * i + 1]))


@njit(cache=True)
def bernoulli_double(words, out, p):
    """``bernoulli_(p)``: a double uniform per ``random64()`` below ``p``."""
    for i in range(out.size):
        out[i] = unit_double(words[2 * i], words[2 * i + 1]) < p


# ------------------------------------------------------------------------------------------------
# integers


@njit(cache=True)
def random_from_to(words, out, span, low):
    """``random()``-word ranges: ``out[i] = words[i] % span + low`` (int64; span a uint32)."""
    for i in range(out.size):
        out[i] = np.int64(np.uint32(words[i] % span)) + low


@njit(cache=True)
def random64_from_to(words, out, span, low):
    """``random64()``-word ranges: ``out[i] = (hi << 32 | lo) % span + low`` (int64, wrapping; span a
    uint64)."""
    for i in range(out.size):
        w = (np.uint64(words[2 * i]) << np.uint64(32)) | np.uint64(words[2 * i + 1])
        out[i] = np.int64(w % span) + low


# ------------------------------------------------------------------------------------------------
# uniforms and the one-double-at-a-time transformations


@njit(cache=True)
def uniform_float(words, out, low, span):
    """``uniform_(low, high)`` on float32: ``fmadd(u, high - low, low)`` per word (u: its low 24
    bits times 2**-24; for 0 and 1 that is u itself)."""
    for i in range(out.size):
        out[i] = fma(F32(words[i] & 0xFFFFFF) * _TWO_M24, span, low)


@njit(cache=True)
def uniform_double(words, out, low, span):
    """``uniform_(low, high)`` on float64: ``fma(u, high - low, low)`` per ``random64()``."""
    for i in range(out.size):
        out[i] = fma(unit_double(words[2 * i], words[2 * i + 1]), span, low)


@njit(cache=True)
def normal_pairs_double(words, values):
    """``normal_distribution<double>``'s Box-Muller, two values per two ``random64()``: the
    first uniform for the angle, the second for the radius; ``r * cos`` then ``r * sin``."""
    two_pi = 2.0 * math.pi
    for p in range(values.size // 2):
        u1 = unit_double(words[4 * p], words[4 * p + 1])
        u2 = unit_double(words[4 * p + 2], words[4 * p + 3])
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = two_pi * u1
        values[2 * p] = r * math.cos(theta)
        values[2 * p + 1] = r * math.sin(theta)


@njit(cache=True)
def fma_double(x, std, mean):
    """``x = fma(x, std, mean)`` in place (``transformation::normal``)."""
    for i in range(x.size):
        x[i] = fma(x[i], std, mean)


@njit(cache=True)
def exp_double(x):
    """``x = exp(x)`` in place, glibc's ``exp`` (``log_normal_``)."""
    for i in range(x.size):
        x[i] = math.exp(x[i])


@njit(cache=True)
def cauchy_double(words, out, median, sigma):
    """``cauchy_``: ``median + sigma * tan(pi * (u - 0.5))`` per ``random64()``."""
    for i in range(out.size):
        out[i] = median + sigma * math.tan(math.pi * (unit_double(words[2 * i], words[2 * i + 1]) - 0.5))


@njit(cache=True)
def geometric_double(words, out, log1p_minus_p):
    """``geometric_``: ``ceil(log(u) / log1p(-p))`` per ``random64()``."""
    for i in range(out.size):
        out[i] = np.ceil(math.log(unit_double(words[2 * i], words[2 * i + 1])) / log1p_minus_p)


# ------------------------------------------------------------------------------------------------
# the words: mt19937 on NumPy's own state


_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7FFFFFFF)
_MATRIX_A = np.uint32(0x9908B0DF)


@njit(cache=True, inline="always")
def _twist_word(upper, lower, far):
    y = (upper & _UPPER) | (lower & _LOWER)
    return far ^ (y >> np.uint32(1)) ^ ((np.uint32(0) - (y & np.uint32(1))) & _MATRIX_A)


@njit(cache=True)
def mt19937_fill(state, out):
    """``out.size`` words of mt19937 (``mt19937_next``: twist every 624, then tempering), from and
    into ``state``: NumPy's ``mt19937_state`` struct as 625 uint32, the 624 key words and ``pos``."""
    key = state[:624]
    pos = state[624]
    for k in range(out.size):
        if pos == 624:  # mt19937_gen
            for i in range(227):
                key[i] = _twist_word(key[i], key[i + 1], key[i + 397])
            for i in range(227, 623):
                key[i] = _twist_word(key[i], key[i + 1], key[i - 227])
            key[623] = _twist_word(key[623], key[0], key[396])
            pos = 0
        y = key[pos]
        pos += 1
        y ^= y >> np.uint32(11)
        y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
        y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
        y ^= y >> np.uint32(18)
        out[k] = y
    state[624] = pos
