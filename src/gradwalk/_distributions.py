"""ATen's CPU sampling kernels, as NumPy: generator words in, the values PyTorch computes out.

Every function takes a ``gradwalk.random.Generator`` and a count and returns the values in the
order PyTorch's kernel writes them (``cpu_serial_kernel``: the output's memory order). Where the
source says so:

* ``aten/src/ATen/core/TransformationHelper.h``: words to floats (``uniform_real``: the low 24
  bits of one word for float32, the low 53 bits of ``random64()`` for float64), ints, and the
  transformations (``exponential``, ``geometric``, ``cauchy``, ``bernoulli``, ``log_normal``);
* ``aten/src/ATen/core/DistributionsHelper.h``: the one-at-a-time normal (Box-Muller in double,
  the second value cached in the generator);
* ``aten/src/ATen/native/cpu/DistributionTemplates.h``: ``normal_fill`` (16 at a time, for 16 or
  more contiguous values) and its float32 AVX2 version, which PyTorch runs even on AVX-512
  machines (``REGISTER_NO_AVX512_DISPATCH(normal_stub)``) with ``avx_mathfun.h``'s Cephes log and
  sincos: emulated below operation by operation, including the multiply-adds GCC fuses;
* ``aten/src/ATen/native/TensorFactories.cpp`` (``randperm_cpu``) and
  ``native/cpu/MultinomialKernel.cpp``.

Double-precision results go through glibc's ``log``, ``log1p``, ``exp``, ``tan``, ``cos`` and
``sin`` in PyTorch. Here: ``cos``/``sin`` are NumPy's (they agree with glibc's); ``log``, ``exp``
and ``tan`` are computed in extended precision with glibc's own for the values near a rounding
tie (``_like_glibc``); ``log1p`` is fdlibm's algorithm vectorised, with the fused multiply-adds
of the copy of it that glibc runs on this machine. Tests count any float64 that differs from
PyTorch's (none seen).

The code here is the readable reference. Large draws (``FAST_MIN``) run instead the compiled
kernels of ``gradwalk._random_fast`` when numba is on: ATen's loops value by value, with glibc's
own functions and the hardware's fused multiply-add; tests check both against PyTorch.
"""
import math

import numpy as np

from . import _fast

F32 = np.float32
F64 = np.float64
_TWO_PI = 2.0 * math.pi

# ------------------------------------------------------------------------------------------------
# compiled fast paths (gradwalk._random_fast, numba): the same values, for large draws only

# Draws of at least this many values run the kernel of gradwalk._random_fast when numba is on
# (``gradwalk._fast.numba_njit()``); smaller ones stay on the NumPy code below, so they never pay
# for importing numba or loading a compiled kernel (about 0.5 s, once per process; each threshold
# is where the reference path takes about 2 ms). Tests lower these to run both paths on small
# and odd sizes.
FAST_MIN = {"normal_float": 1 << 17, "normal_double": 1 << 13, "exponential": 1 << 13,
            "bernoulli": 1 << 17, "randperm": 1 << 15, "randint": 1 << 17, "uniform": 1 << 17,
            "transcendental": 1 << 13, "words": 1 << 14}
_FAST_CHUNK = 1 << 16  # values per call of a kernel: the chunk's words stay in cache


def _fast_kernels(n, kind):
    """gradwalk._random_fast for a draw of ``n`` values of ``kind``, or None (the reference path)."""
    if n < FAST_MIN[kind] or _fast.numba_njit() is None:
        return None
    from . import _random_fast

    return _random_fast


def _chunked(gen, n, kernel, out, words_per_value, *args):
    """``kernel(words, out[lo:hi], *args)`` over chunks of ``n`` values, their words drawn in order."""
    for lo in range(0, n, _FAST_CHUNK):
        hi = min(n, lo + _FAST_CHUNK)
        kernel(gen._random(words_per_value * (hi - lo)), out[lo:hi], *args)
    return out

# ------------------------------------------------------------------------------------------------
# uniform reals (transformation::uniform_real)


def _unit_float(words):
    """float32 in [0, 1): the low 24 bits of each word, times 2**-24."""
    return (words & np.uint32(0xFFFFFF)).astype(F32) * F32(2.0 ** -24)


def _unit_double(words64):
    """float64 in [0, 1): the low 53 bits of each ``random64()``, times 2**-53."""
    return (words64 & np.uint64((1 << 53) - 1)).astype(F64) * (2.0 ** -53)


def _unit_half(words):
    return ((words & np.uint32(0x7FF)).astype(F32) * F32(2.0 ** -11))


def uniform(gen, n, np_dtype, low=0.0, high=1.0, out=None):
    """``uniform_(low, high)``: ``x * (to - from) + from`` in the dtype's accumulate type (float32
    for float32 and half, float64 for float64), ``from`` and ``to`` first cast to the dtype. GCC
    fuses the multiply-add (the kernel is built with FMA). ``rand`` (0 and 1) writes float32
    straight into ``out``."""
    fast = _fast_kernels(n, "uniform") if np_dtype in (F32, F64) else None
    if fast is not None:
        if np_dtype == F64:
            a, b = F64(low), F64(high)
            return _chunked(gen, n, fast.uniform_double, np.empty(n, dtype=F64), 2, a, b - a)
        a, b = F32(low), F32(high)
        return _chunked(gen, n, fast.uniform_float, np.empty(n, dtype=F32) if out is None else out, 1, a, b - a)
    if np_dtype == F64:
        x = _unit_double(gen._random64(n))
        a, b = F64(low), F64(high)
    else:
        cast = np.dtype(np_dtype).type
        a, b = F32(cast(low)), F32(cast(high))
        if np_dtype == F32 and out is not None and a == 0 and b == 1:
            return _unit_float_into(gen._random(n), out)
        x = _unit_half(gen._random(n)) if np_dtype == np.float16 else _unit_float(gen._random(n))
    if a == 0 and b == 1:
        return x.astype(np_dtype, copy=False)
    return fma(x, b - a, a).astype(np_dtype, copy=False)


# ------------------------------------------------------------------------------------------------
# fused multiply-add, rounded once, as the FMA instructions GCC emits


def fma(a, b, c):
    """``a * b + c`` rounded once, for float32 or float64 arrays (the type of ``a``)."""
    a = np.asarray(a)
    if a.dtype == F32:
        return _fma32(a, b, c)
    return _fma64(a, b, c)


def _fma32(a, b, c):
    # a * b is exact in float64 (24 + 24 bits); the sum is rounded to float64, then to float32.
    # That double rounding can differ from one rounding only when the float64 sum lands exactly
    # halfway between two float32s: those (rare) elements are redone exactly below.
    # (Conversions with astype and float64 operands keep NumPy off its slow mixed-type loops.)
    s = a.astype(F64)
    s *= b if np.ndim(b) == 0 else np.asarray(b, dtype=F64)
    s += c if np.ndim(c) == 0 else np.asarray(c, dtype=F64)
    out = s.astype(F32)
    bits = s.view(np.uint64)
    bits &= np.uint64(0x1FFFFFFF)
    halfway = bits == np.uint64(0x10000000)
    if halfway.any():
        s = a.astype(F64) * np.asarray(b, dtype=F64) + np.asarray(c, dtype=F64)
        _fix_halfway32(out, s, a, b, c, halfway)
    return out


def _fix_halfway32(out, s, a, b, c, where):
    idx = np.nonzero(where)
    a, b, c = (np.broadcast_to(np.asarray(v, dtype=F64), s.shape)[idx] for v in (a, b, c))
    p = a * b
    total = s[idx]
    bb = total - p
    err = (p - (total - bb)) + (c - bb)  # TwoSum: total + err == p + c exactly
    nudged = np.where(err > 0, np.nextafter(total, np.inf), np.where(err < 0, np.nextafter(total, -np.inf), total))
    out[idx] = nudged.astype(F32)


def _split(x):
    c = x * 134217729.0  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    hi = c - (c - x)
    return hi, x - hi


def _fma64(a, b, c):
    """Double fma from error-free products (Dekker) and sums (Knuth): exact except in the
    rounding of ties between the last two terms, which random draws never reach."""
    a = np.asarray(a, dtype=F64)
    b = np.asarray(b, dtype=F64)
    c = np.asarray(c, dtype=F64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + perr == a * b exactly
    s = p + c
    bb = s - p
    serr = (p - (s - bb)) + (c - bb)  # s + serr == p + c exactly
    return s + (serr + perr)


# ------------------------------------------------------------------------------------------------
# glibc's log1p: fdlibm's s_log1p.c, in the build this machine's libm runs
#
# On x86-64 glibc picks, at load time, a copy of s_log1p.c compiled with FMA when the processor has
# FMA and AVX2 (sysdeps/x86_64/fpu/multiarch). GCC fuses a * b + c there: the three pairs of the
# polynomial, the sum R = z*Lp1 + z2*R2 + z4*R3 + z6*R4 (from the left, z*Lp1 fused with z2*R2),
# and k*ln2_lo + c; the rest is as written (read off the disassembly of glibc 2.36). Which copy
# runs is found by asking ``math.log1p`` (glibc's own) about inputs where the two differ.

_LN2_HI = 6.93147180369123816490e-01  # its low 32 bits are zero: k * ln2_hi is exact
_LN2_LO = 1.90821492927058770002e-10
_LP = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01)


_EXACT_BELOW = 64  # up to this many values, a Python loop over glibc's function costs less than NumPy's setup


def _high_word(x):
    return (x.view(np.int64) >> 32).astype(np.int32)


def _two_sum(a, b):
    """``a + b`` rounded, and its exact error (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fma_checked(a, b, c, unsure):
    """``a * b + c`` rounded once (float64), from the exact product (Dekker) and sums (Knuth).
    The last step rounds ``s + t`` where ``t`` is itself rounded; elements where that could
    cross a rounding boundary (within an ulp of ``t`` of halfway, never seen) are marked in
    ``unsure``."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + perr == a * b exactly
    s, serr = _two_sum(p, c)
    t = serr + perr
    r, d = _two_sum(s, t)
    r_abs = np.abs(r)
    unsure |= np.abs(d) + np.spacing(np.abs(t)) >= 0.5 * (r_abs - np.nextafter(r_abs, 0))
    return r


def _log1p_vector(x, fused):
    """fdlibm's log1p for float64 ``x > -1`` (NaN and inf aside), as glibc compiles it with
    (``fused``) or without FMA; the elements whose fused result is not certain get glibc's own."""
    x = np.asarray(x, dtype=F64)
    unsure = np.zeros(x.shape, dtype=bool)

    def mul_add(a, b, c):
        return _fma_checked(a, b, c, unsure) if fused else a * b + c

    hx = _high_word(x)
    ax = hx & 0x7FFFFFFF
    direct = (hx < 0x3FDA827A) & ((hx > 0) | (hx <= np.int32(-1076707645)))  # -0.2929 < x < 0.41422
    u = 1.0 + x
    hu = _high_word(u)
    k = ((hu >> 20) - 1023).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(k > 0, 1.0 - (u - x), x - (u - 1.0)) / u
    hu = hu & 0x000FFFFF
    below = hu < 0x6A09E
    k = np.where(below, k, k + 1)
    hu = np.where(below, hu, (0x00100000 - hu) >> 2)
    high = np.where(below, (hu | 0x3FF00000), ((_high_word(u) & 0x000FFFFF) | 0x3FE00000)).astype(np.int64)
    normalized = ((u.view(np.int64) & 0xFFFFFFFF) | (high << 32)).view(F64)
    f = np.where(direct, x, normalized - 1.0)
    k = np.where(direct, 0, k)
    c = np.where(direct, 0.0, c)
    hu = np.where(direct, 1, hu)
    dk = k.astype(F64)
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    z2 = z * z
    z4 = z2 * z2
    z6 = z4 * z2
    R2 = mul_add(z, _LP[2], _LP[1])
    R3 = mul_add(z, _LP[4], _LP[3])
    R4 = mul_add(z, _LP[6], _LP[5])
    R = mul_add(z6, R4, mul_add(z4, R3, mul_add(z, _LP[0], z2 * R2)) if fused else
                (z * _LP[0] + z2 * R2) + z4 * R3)
    klo_c = mul_add(dk, _LN2_LO, c)  # k * ln2_lo + c
    out = np.where(k == 0, f - (hfsq - s * (hfsq + R)),
                   dk * _LN2_HI - ((hfsq - (s * (hfsq + R) + klo_c)) - f))
    tiny_f = hu == 0  # |f| < 2**-20
    if tiny_f.any():
        R2 = hfsq * mul_add(-f, 0.66666666666666666, 1.0)
        small = np.where(k == 0, f - R2, dk * _LN2_HI - ((R2 - klo_c) - f))
        small = np.where(f == 0, np.where(k == 0, 0.0, dk * _LN2_HI + klo_c), small)
        out = np.where(tiny_f, small, out)
    tiny_x = ax < 0x3E200000  # |x| < 2**-29
    if tiny_x.any():
        out = np.where(tiny_x, np.where(ax < 0x3C900000, x, x - x * x * 0.5), out)
        unsure &= ~tiny_x
    out = np.where(x == -1.0, -np.inf, out)
    unsure &= (x > -1.0) & np.isfinite(x)
    if unsure.any():
        idx = np.nonzero(unsure)
        out[idx] = [math.log1p(v) for v in x[idx].tolist()]
    return out


# inputs where glibc's fused and unfused copies give different results
_LOG1P_PROBES = np.array([-0.2912607248243877, -0.6133887424201363, -0.2684083407344646,
                          -0.9141121016737268, -0.3581161343071655])


def _glibc_log1p_is_fused():
    theirs = np.array([math.log1p(v) for v in _LOG1P_PROBES.tolist()])
    return bool(np.array_equal(_log1p_vector(_LOG1P_PROBES, True), theirs))


_LOG1P_FUSED = _glibc_log1p_is_fused()


def log1p(x):
    """``log1p`` for float64 ``x > -1``, as glibc computes it: glibc's own (``math.log1p``) for a
    few values, else its algorithm vectorised (``_log1p_vector``, with or without FMA as this
    machine's glibc)."""
    x = np.asarray(x, dtype=F64)
    if x.size <= _EXACT_BELOW:
        return np.array([math.log1p(v) for v in x.reshape(-1).tolist()], dtype=F64).reshape(x.shape)
    flat = x.reshape(-1)
    out = np.empty(flat.shape, dtype=F64)
    for lo in range(0, flat.size, _LOG1P_CHUNK):  # the temporaries stay in cache
        out[lo:lo + _LOG1P_CHUNK] = _log1p_vector(flat[lo:lo + _LOG1P_CHUNK], _LOG1P_FUSED)
    return out.reshape(x.shape)


_LOG1P_CHUNK = 1 << 13


# ------------------------------------------------------------------------------------------------
# normal


def normal_one_at_a_time(gen, n, mean, std):
    """``at::normal_distribution<double>``, ``n`` times, as float64: Box-Muller on two doubles
    (``u1`` for the angle, ``u2`` for the radius), ``r * cos`` returned and ``r * sin`` kept in
    the generator for the next call (``next_double_normal_sample``)."""
    out = np.empty(n, dtype=F64)
    start = 0
    if n and gen._next_double_normal is not None:
        out[0] = gen._next_double_normal
        gen._next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    fast = _fast_kernels(n, "transcendental")
    if pairs and fast is not None:
        values = np.empty(2 * pairs, dtype=F64)
        fast.normal_pairs_double(gen._random(4 * pairs), values)
        out[start:] = values[:n - start]
        if (n - start) % 2:
            gen._next_double_normal = float(values[-1])
        fast.fma_double(out, F64(std), F64(mean))  # fma(val, 1, 0) too: a -0 becomes +0
        return out
    if pairs:
        u = _unit_double(gen._random64(2 * pairs))
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * log1p(-u2))
        theta = 2.0 * math.pi * u1
        values = np.empty(2 * pairs, dtype=F64)
        values[0::2] = r * np.cos(theta)
        values[1::2] = r * np.sin(theta)
        out[start:] = values[:n - start]
        if (n - start) % 2:
            gen._next_double_normal = float(values[-1])
    if mean == 0 and std == 1:
        out += 0.0  # fma(val, 1, 0) is val + 0: a -0 becomes +0
    else:
        out = fma(out, F64(std), F64(mean))  # transformation::normal: val * std + mean, fused
    return out


def _normal_fill_uniforms(gen, n, unit, words):
    """``normal_fill``'s uniforms: ``n`` of them, then, if ``n % 16``, 16 more for the last block."""
    u = unit(words(n))
    tail = unit(words(16)) if n % 16 else None
    return u, tail


def _blocks(u):
    b = u.reshape(-1, 2, 8)
    return b[:, 0, :], b[:, 1, :]


def _like_glibc(x, numpy_fn, glibc_fn, window=0.1):
    """A double-precision function as glibc computes it, which is correctly rounded but for rare
    inputs: NumPy's function in extended precision, rounded to double, and glibc's own (through
    ``math``) for the values within ``window`` ulp of halfway between two doubles, where a
    rounding could go either way."""
    x = np.asarray(x, dtype=F64)
    if x.size <= _EXACT_BELOW:
        return np.array([glibc_fn(v) for v in x.reshape(-1).tolist()], dtype=F64).reshape(x.shape)
    with np.errstate(all="ignore"):
        wide = numpy_fn(x.astype(np.longdouble))
        out = wide.astype(F64)
        ulp = np.spacing(np.abs(out)).astype(np.longdouble)
        off = np.abs((wide - out) / ulp)  # in [0, 0.5]: how far the rounding went
    near = np.abs(off - 0.5) < window
    near |= ~np.isfinite(out)
    if near.any():
        idx = np.nonzero(near)
        out[idx] = [_guarded(glibc_fn, v) for v in x[idx].tolist()]
    return out


def _guarded(fn, v):
    try:
        return fn(v)
    except (ValueError, OverflowError):
        return float(np.log(v)) if fn is math.log else float("nan")


def _log(x):
    return _like_glibc(x, np.log, math.log)


def _exp(x):
    return _like_glibc(x, np.exp, math.exp)


def _tan(x):
    return _like_glibc(x, np.tan, math.tan)


def normal_fill_double(gen, n, mean, std):
    """``normal_fill<double>``: 16 uniforms at a time, ``u1 = 1 - data[j]`` for the radius and
    ``data[j + 8]`` for the angle, with glibc's log, cos and sin."""
    fast = _fast_kernels(n, "normal_double")
    if fast is not None:
        return _normal_fill_compiled(gen, n, F64(mean), F64(std), np.empty(n, dtype=F64),
                                     fast.normal_rows_double, 2)
    u, tail = _normal_fill_uniforms(gen, n, _unit_double, gen._random64)

    def fill16(block):
        first, second = _blocks(block)
        radius = np.sqrt(-2.0 * _log(1.0 - first))
        theta = _TWO_PI * second
        out = np.empty((first.shape[0], 2, 8), dtype=F64)
        out[:, 0, :] = fma(radius * np.cos(theta), F64(std), F64(mean))
        out[:, 1, :] = fma(radius * np.sin(theta), F64(std), F64(mean))
        return out.reshape(-1)

    m = n // 16 * 16
    out = u
    out[:m] = fill16(u[:m])
    if tail is not None:
        out[n - 16:] = fill16(tail)
    return out


def normal_fill_float(gen, n, mean, std, out=None):
    """``normal_fill_AVX2``: float32 uniforms, then ``avx_mathfun``'s ``log256_ps`` and
    ``sincos256_ps`` on eight lanes at a time, ``fmadd(n, std, mean)`` at the end.

    PyTorch first fills the tensor with ``n`` uniforms, turns each block of 16 into 16 normals,
    and, if ``n % 16``, fills the last 16 places again with 16 new uniforms and their normals.
    Here the words are drawn a chunk at a time, in the same order, and ``_log256_fast`` and
    ``_sincos256_fast`` work on whole chunks of lanes; the values go into ``out`` (float32)."""
    out = np.empty(n, dtype=F32) if out is None else out
    mean, std = F32(mean), F32(std)
    fast = _fast_kernels(n, "normal_float")
    if fast is not None:
        return _normal_fill_compiled(gen, n, mean, std, out, fast.normal_rows_float, 1)
    rows = n // 16
    lanes = _Lanes(min(rows * 8, _FAST_LANES) if rows else 8)
    step = _FAST_LANES // 8
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        words = gen._random((hi - lo) * 16).reshape(-1, 2, 8)
        _normal_rows_fast(words, out[lo * 16:hi * 16].reshape(-1, 2, 8), lanes, mean, std)
    if n % 16:
        gen._random(n - rows * 16)  # the uniforms of the last places, replaced below
        tail = np.empty(16, dtype=F32)
        _normal_rows_fast(gen._random(16).reshape(1, 2, 8), tail.reshape(1, 2, 8), lanes, mean, std)
        out[n - 16:] = tail
    return out


def _normal_fill_compiled(gen, n, mean, std, out, kernel, words_per_value):
    """``normal_fill`` with a compiled kernel (``kernel(words, out, mean, std)`` on whole blocks
    of 16): the blocks a chunk at a time, then, if ``n % 16``, the last 16 places again from 16
    new uniforms, as PyTorch (its first uniforms for those places drawn and dropped)."""
    m = n // 16 * 16
    for lo in range(0, m, _FAST_CHUNK):
        hi = min(m, lo + _FAST_CHUNK)
        kernel(gen._random((hi - lo) * words_per_value), out[lo:hi], mean, std)
    if n % 16:
        gen._random((n - m) * words_per_value)
        tail = np.empty(16, dtype=out.dtype)
        kernel(gen._random(16 * words_per_value), tail, mean, std)
        out[n - 16:] = tail
    return out


def _normal_rows_fast(words, rows, lanes, mean, std):
    """Rows of 16 words (``[:, 0]`` the radii's uniforms, ``[:, 1]`` the angles') to their 16
    normals, written into ``rows``."""
    n = words.shape[0] * 8
    u1, u2, radius, sin, cos = (a[:n] for a in lanes.g)
    low_bits = radius.view(np.uint32).reshape(-1, 8)  # scratch until the radius is computed
    for half, u in ((0, u1), (1, u2)):
        np.bitwise_and(words[:, half, :], np.uint32(0xFFFFFF), out=low_bits)
        np.copyto(u.reshape(-1, 8), low_bits, casting="unsafe")  # exact: below 2**24
        np.multiply(u, F32(2.0 ** -24), out=u)
    np.subtract(F32(1), u1, out=u1)
    np.multiply(u2, _TWO_PI_F, out=u2)
    _log256_fast(u1, lanes, radius)
    np.multiply(radius, F32(-2), out=radius)
    np.sqrt(radius, out=radius)
    _sincos256_fast(u2, lanes, sin, cos)
    for half, trig in ((0, cos), (1, sin)):
        target = rows[:, half, :]
        if mean == 0 and std == 1:
            np.multiply(radius.reshape(-1, 8), trig.reshape(-1, 8), out=target)
            np.add(target, F32(0), out=target)  # fmadd(n, 1, 0) is n + 0: a -0 (radius 0) becomes +0
        else:
            np.multiply(radius, trig, out=u1)
            target[...] = _fma32(u1, std, mean).reshape(-1, 8)


def _unit_float_into(words, out):
    """``_unit_float(words)`` written into ``out`` (float32); overwrites ``words``."""
    np.bitwise_and(words, np.uint32(0xFFFFFF), out=words)
    np.copyto(out, words, casting="unsafe")  # exact: below 2**24
    np.multiply(out, F32(2.0 ** -24), out=out)
    return out


# avx_mathfun.h's constants, as float32
_SQRTHF = F32(0.707106781186547524)
_LOG_P = [F32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                           1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                           3.3333331174E-1)]
_LOG_Q1 = F32(-2.12194440e-4)
_LOG_Q2 = F32(0.693359375)
_DP1, _DP2, _DP3 = F32(-0.78515625), F32(-2.4187564849853515625e-4), F32(-3.77489497744594108e-8)
_SINCOF = [F32(v) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]
_COSCOF = [F32(v) for v in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)]
_FOPI = F32(1.27323954473516)
_TWO_PI_F = F32(2.0 * math.pi)


def _log256(x):
    """``log256_ps`` for x in (0, 1] (no denormals, no x <= 0 here). The multiply-adds
    ``y = y * x + p`` are fused, as GCC compiles them with -mfma."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 126).astype(F32)  # exponent + 1
    mant = ((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000)).view(F32)  # in [0.5, 1)
    small = mant < _SQRTHF
    e -= small  # e -= 1 where mant < sqrt(1/2)
    x = np.where(small, mant + mant, mant) - F32(1)  # (mant - 1) + mant, or mant - 1: both exact
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma32(y, x, p)
    y = y * x
    y = _fma32(y, z, e * _LOG_Q1)  # y * z + e * q1: GCC fuses the first product
    y = y - z * F32(0.5)
    x = x + y
    return x + e * _LOG_Q2  # e * q2 is exact, so the fused and unfused sums agree


def _sincos256(x):
    """``sincos256_ps`` for x >= 0 (theta = 2 pi u): returns (sin, cos)."""
    j = (x * _FOPI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(F32)
    sin_negative = (j & 4) != 0
    cos_negative = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0  # the polynomial that gives sin on this octant
    x = x + y * _DP1  # y * DP1 and y * DP2 are exact (y <= 8), so fused == unfused
    x = x + y * _DP2
    x = _fma32(y, _DP3, x)
    z = x * x
    c = _fma32(np.full_like(x, _COSCOF[0]), z, _COSCOF[1])
    c = _fma32(c, z, _COSCOF[2])
    c = c * z
    c = _fma32(c, z, -(z * F32(0.5)))  # (c * z) - z * 0.5: GCC fuses the first product
    c = c + F32(1)
    s = _fma32(np.full_like(x, _SINCOF[0]), z, _SINCOF[1])
    s = _fma32(s, z, _SINCOF[2])
    s = s * z
    s = _fma32(s, x, x)
    sin = np.where(use_sin_poly, s, c)
    cos = np.where(use_sin_poly, c, s)
    np.negative(sin, out=sin, where=sin_negative)
    np.negative(cos, out=cos, where=cos_negative)
    return sin, cos


def _normal_16_avx2(block, mean, std):
    first, second = _blocks(block)
    u1 = (F32(1) - first).reshape(-1)
    u2 = second.reshape(-1)
    radius = np.sqrt(F32(-2) * _log256(u1))
    sin, cos = _sincos256(_TWO_PI_F * u2)
    out = np.empty((first.shape[0], 2, 8), dtype=F32)
    mean, std = F32(mean), F32(std)
    rows = first.shape[0]
    if mean == 0 and std == 1:
        out[:, 0, :] = (radius * cos + F32(0)).reshape(rows, 8)  # fmadd(n, 1, 0): -0 becomes +0
        out[:, 1, :] = (radius * sin + F32(0)).reshape(rows, 8)
    else:
        out[:, 0, :] = _fma32(radius * cos, std, mean).reshape(rows, 8)
        out[:, 1, :] = _fma32(radius * sin, std, mean).reshape(rows, 8)
    return out.reshape(-1)


# ------------------------------------------------------------------------------------------------
# the same normal_fill_AVX2, fast: whole chunks of lanes at a time, no temporaries, and no
# double-rounding checks. A float32 fma(a, b, c) is float64(a) * float64(b) + c (the product is
# exact in float64) rounded to float32; the sum rounded to float64 first can differ from one
# rounding only when it lands exactly halfway between two float32s and was not exact. On the
# 2**24 possible inputs of each function that never happens: tests compare these with the
# operation-by-operation versions above (on every input when GRADWALK_EXHAUSTIVE=1).

_FAST_LANES = 1 << 15  # lanes (values of u1 and of u2) per chunk: the buffers stay in cache
_LOG_P64 = [F64(p) for p in _LOG_P]
_SINCOF64 = [F64(p) for p in _SINCOF]
_COSCOF64 = [F64(p) for p in _COSCOF]
_SQRTHF_BITS = int(_SQRTHF.view(np.int32))


class _Lanes:
    """Scratch arrays for one chunk of lanes."""

    def __init__(self, n):
        self.i = [np.empty(n, np.int32) for _ in range(3)]
        self.f = [np.empty(n, F32) for _ in range(4)]
        self.d = [np.empty(n, F64) for _ in range(2)]
        self.g = [np.empty(n, F32) for _ in range(5)]  # for _normal_rows_fast


def _log256_fast(u, lanes, out):
    """``_log256(u)`` into ``out`` (float32, u in (0, 1]); overwrites ``u``."""
    n = u.size
    e, mant, small = (a[:n] for a in lanes.i)
    x_wide, t = (a[:n] for a in lanes.d)
    z, y, ef = (a[:n] for a in lanes.f[:3])
    bits = u.view(np.int32)
    np.right_shift(bits, 23, out=e)  # the biased exponent
    np.bitwise_and(bits, 0x007FFFFF, out=mant)
    np.bitwise_or(mant, 0x3F000000, out=mant)  # the mantissa in [0.5, 1)
    np.subtract(mant, _SQRTHF_BITS, out=small)  # positive floats compare as their bits
    np.right_shift(small, 31, out=small)  # -1 where mant < sqrt(1/2), else 0
    np.add(e, small, out=e)
    np.subtract(e, 126, out=e)
    np.left_shift(small, 23, out=small)
    np.subtract(mant, small, out=mant)  # the mantissa doubled where it was small
    x = mant.view(F32)
    np.subtract(x, F32(1), out=x)
    np.copyto(x_wide, x)
    np.multiply(x, x, out=z)
    np.multiply(x_wide, _LOG_P64[0], out=t)
    np.add(t, _LOG_P64[1], out=y, casting="same_kind")
    for p in _LOG_P64[2:]:
        np.multiply(y, x_wide, out=t)
        np.add(t, p, out=y, casting="same_kind")
    np.multiply(y, x, out=y)
    np.copyto(ef, e, casting="unsafe")
    np.multiply(ef, _LOG_Q1, out=out)
    np.multiply(y, z, out=t, dtype=F64)
    np.add(t, out, out=y, casting="same_kind")  # fma(y, z, e * q1)
    np.multiply(z, F32(0.5), out=z)
    np.subtract(y, z, out=y)
    np.add(x, y, out=x)
    np.multiply(ef, _LOG_Q2, out=out)
    np.add(x, out, out=out)
    return out


def _sincos256_fast(x, lanes, sin, cos):
    """``_sincos256(x)`` into ``sin`` and ``cos`` (float32, x >= 0); overwrites ``x``."""
    n = x.size
    j, sel, flip = (a[:n] for a in lanes.i)
    x_wide, t = (a[:n] for a in lanes.d)
    y, z = (a[:n] for a in lanes.f[:2])
    np.multiply(x, _FOPI, out=y)
    np.copyto(j, y, casting="unsafe")  # truncation, as cvttps2dq
    np.add(j, 1, out=j)
    np.bitwise_and(j, ~1, out=j)
    np.copyto(y, j, casting="unsafe")
    np.multiply(y, _DP1, out=z)
    np.add(x, z, out=x)
    np.multiply(y, _DP2, out=z)
    np.add(x, z, out=x)
    np.multiply(y, F64(_DP3), out=t)
    np.add(t, x, out=x, casting="same_kind")  # fma(y, DP3, x)
    np.multiply(x, x, out=z)
    np.copyto(x_wide, z)  # z, wide
    c, s = cos, sin
    np.multiply(x_wide, _COSCOF64[0], out=t)
    np.add(t, _COSCOF64[1], out=c, casting="same_kind")
    np.multiply(c, x_wide, out=t)
    np.add(t, _COSCOF64[2], out=c, casting="same_kind")
    np.multiply(c, z, out=c)
    np.multiply(c, x_wide, out=t)
    np.multiply(z, F32(0.5), out=y)
    np.subtract(t, y, out=c, casting="same_kind")  # fma(c, z, -(z * 0.5))
    np.add(c, F32(1), out=c)
    np.multiply(x_wide, _SINCOF64[0], out=t)
    np.add(t, _SINCOF64[1], out=s, casting="same_kind")
    np.multiply(s, x_wide, out=t)
    np.add(t, _SINCOF64[2], out=s, casting="same_kind")
    np.multiply(s, z, out=s)
    np.copyto(x_wide, x)
    np.multiply(s, x_wide, out=t)
    np.add(t, x, out=s, casting="same_kind")  # fma(s, x, x)
    # swap the two where the octant's sine is the cosine polynomial ((j & 2) != 0), then the
    # signs: bit 31 flipped by (j & 4) for sin and by (~(j - 2) & 4) for cos
    sb, cb = s.view(np.int32), c.view(np.int32)
    np.left_shift(j, 30, out=sel)
    np.right_shift(sel, 31, out=sel)  # all ones where (j & 2)
    np.bitwise_xor(sb, cb, out=flip)
    np.bitwise_and(flip, sel, out=flip)
    np.bitwise_xor(sb, flip, out=sb)
    np.bitwise_xor(cb, flip, out=cb)
    np.bitwise_and(j, 4, out=sel)
    np.left_shift(sel, 29, out=sel)
    np.bitwise_xor(sb, sel, out=sb)
    np.subtract(j, 2, out=sel)
    np.invert(sel, out=sel)
    np.bitwise_and(sel, 4, out=sel)
    np.left_shift(sel, 29, out=sel)
    np.bitwise_xor(cb, sel, out=cb)
    return sin, cos


def normal(gen, n, np_dtype, mean=0.0, std=1.0, contiguous=True, out=None):
    """``normal_(mean, std)`` on ``n`` values of a tensor of ``np_dtype`` (normal_kernel); the
    float32 16-at-a-time kernel writes into ``out`` if given."""
    if n >= 16 and contiguous:
        if np_dtype == F32:
            return normal_fill_float(gen, n, mean, std, out)
        if np_dtype == F64:
            return normal_fill_double(gen, n, mean, std)
    return normal_one_at_a_time(gen, n, mean, std).astype(np_dtype)


# ------------------------------------------------------------------------------------------------
# integers


def _to_float_digits(x, digits):
    """``static_cast<int64_t>(static_cast<float type>(x))`` for an int64 ``x``: rounded to
    ``digits`` significant bits, to nearest, ties to even (x86's conversions: one rounding)."""
    a = abs(x)
    shift = a.bit_length() - digits
    if shift <= 0:
        return x
    q, r = divmod(a, 1 << shift)
    if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
        q += 1
    y = (q << shift) if x >= 0 else -(q << shift)
    return y if -(1 << 63) <= y < (1 << 63) else -(1 << 63)  # cvttss2si's "integer indefinite"


def _float_range(low, high, digits):
    """``update_from`` and ``update_to`` (ATen's DistributionTemplates.h) for a float dtype of
    ``digits`` significant bits: where ``low + 1`` or ``high - 1`` does not survive the cast to
    the dtype, the bound moves inwards to one the dtype can hold."""
    up = _to_float_digits(low + 1, digits)
    if up < low:
        low = up + (1 << ((abs(low + 1).bit_length() - 1) - digits + 1))
    down = _to_float_digits(high - 1, digits)
    if down >= high:
        high = down - (1 << ((abs(high - 1).bit_length() - 1) - digits + 1))
    return low, high


_CPP_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "int8": "signed char",
              "uint8": "unsigned char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}


def _check_from_to_in_range(low, last, dt):
    """``check_from_to_in_range``: ``from`` and ``to - 1`` must fit the dtype (an error), and for
    floats lie within +-2**digits, where every integer is exact (a warning, as PyTorch's)."""
    name = _CPP_NAMES.get(dt.name)
    if name is None:
        return
    if dt.kind == "f":
        lowest, highest = float(np.finfo(dt).min), float(np.finfo(dt).max)
    elif dt.kind == "b":
        lowest, highest = 0, 1
    else:
        lowest, highest = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    for value, what in ((low, "from"), (last, "to - 1")):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dt.kind == "f":
        digits = np.finfo(dt).nmant + 1
        for value, what in ((low, "from"), (last, "to - 1")):
            if not -(1 << digits) <= value <= 1 << digits:
                _warn_at_caller(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                                f"{name} can support discrete uniform distribution only within this range. This "
                                f"warning will become an error in version 1.7 release, please fix the code in "
                                f"advance")


def _warn_at_caller(message):
    """A UserWarning reported at the first frame outside gradwalk (the user's line)."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


def random_from_to(gen, n, np_dtype, low, high):
    """``random_(low, high)`` / ``randint``: ``word % (high - low) + low``, for float dtypes with
    the bounds first moved to values the dtype holds (``_float_range``). PyTorch 2.13 takes
    ``random64()`` words once the range reaches 2**28 (measured: 2**28 - 1 draws one word per
    value, 2**28 two), ``random()`` words below."""
    low, high = int(low), int(high)
    dt = np.dtype(np_dtype)
    if dt.kind == "f":
        low, high = _float_range(low, high, np.finfo(dt).nmant + 1)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                               f"but got from={low} >= to={high}")
    _check_from_to_in_range(low, high - 1, dt)
    span = high - low
    wide = span >= 1 << 28
    fast = _fast_kernels(n, "randint")
    if fast is not None:
        values = np.empty(n, dtype=np.int64)
        kernel, words_per_value, span = ((fast.random64_from_to, 2, np.uint64(span)) if wide else
                                         (fast.random_from_to, 1, np.uint32(span)))
        _chunked(gen, n, kernel, values, words_per_value, span, np.int64(low))
        return values.astype(np_dtype, copy=False)
    if wide:
        words = gen._random64(n) % np.uint64(span)
    else:
        words = gen._random(n)
        np.remainder(words, np.uint32(span), out=words)  # 32-bit division: the word is below 2**32
    values = words.astype(np.int64)
    values += np.int64(low)
    return values.astype(np_dtype, copy=False)


def random_full_range(gen, n, np_dtype):
    """``random_(-2**63, None)``: a whole ``random64()`` as int64."""
    return gen._random64(n).view(np.int64).astype(np_dtype)


def random_default(gen, n, np_dtype):
    """``random_()``: [0, 2**mantissa] for floats, [0, max] for ints, {0, 1} for bool."""
    dt = np.dtype(np_dtype)
    if dt == np.bool_:
        return (gen._random(n) & np.uint32(1)).astype(np.bool_)
    if dt == np.float64:
        return (gen._random64(n) % np.uint64((1 << 53) + 1)).astype(F64)
    if dt == np.int64:
        return (gen._random64(n) % np.uint64(1 << 63)).astype(np.int64)
    if dt.kind == "f":
        digits = {4: 24, 2: 11}[dt.itemsize]
        return (gen._random(n) % np.uint32((1 << digits) + 1)).astype(dt)
    top = int(np.iinfo(dt).max) + 1
    return (gen._random(n).astype(np.uint64) % np.uint64(top)).astype(dt)


# ------------------------------------------------------------------------------------------------
# the one-double-at-a-time transformations


def bernoulli_scalar(gen, n, p):
    """``bernoulli_(p)``: a double uniform below ``p``."""
    fast = _fast_kernels(n, "bernoulli")
    if fast is not None:
        return _chunked(gen, n, fast.bernoulli_double, np.empty(n, dtype=np.bool_), 2, F64(p))
    return _unit_double(gen._random64(n)) < F64(p)


def bernoulli_tensor(gen, p):
    """``bernoulli_(p_tensor)``: one uniform per element, of the type of ``p`` (a 24-bit float
    for float32 probabilities, a 53-bit double for float64), below ``p``."""
    p = np.asarray(p)
    if p.dtype == F64:
        return _unit_double(gen._random64(p.size)).reshape(p.shape) < p
    return _unit_float(gen._random(p.size)).reshape(p.shape) < p.astype(F32)


def exponential(gen, n, lambd):
    """``exponential_(lambd)``: ``-1 / lambd * log1p(-u)``."""
    fast = _fast_kernels(n, "exponential")
    if fast is not None:
        return _chunked(gen, n, fast.exponential_double, np.empty(n, dtype=F64), 2, -1.0 / float(lambd))
    u = _unit_double(gen._random64(n))
    return (-1.0 / float(lambd)) * log1p(-u)


def geometric(gen, n, p):
    """``geometric_(p)``: ``ceil(log(u) / log1p(-p))``."""
    fast = _fast_kernels(n, "transcendental")
    if fast is not None:
        return _chunked(gen, n, fast.geometric_double, np.empty(n, dtype=F64), 2, math.log1p(-float(p)))
    u = _unit_double(gen._random64(n))
    with np.errstate(divide="ignore"):
        return np.ceil(_log(u) / float(log1p(np.array([-float(p)]))[0]))


def cauchy(gen, n, median, sigma):
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))``."""
    fast = _fast_kernels(n, "transcendental")
    if fast is not None:
        return _chunked(gen, n, fast.cauchy_double, np.empty(n, dtype=F64), 2, float(median), float(sigma))
    u = _unit_double(gen._random64(n))
    return float(median) + float(sigma) * _tan(math.pi * (u - 0.5))


def log_normal(gen, n, mean, std):
    """``log_normal_(mean, std)``: ``exp`` of the one-at-a-time normal (sharing its cache)."""
    fast = _fast_kernels(n, "transcendental")
    if fast is not None:
        values = normal_one_at_a_time(gen, n, mean, std)
        fast.exp_double(values)
        return values
    return _exp(normal_one_at_a_time(gen, n, mean, std))


# ------------------------------------------------------------------------------------------------
# randperm


def randperm(gen, n):
    """``randperm_cpu``: Fisher-Yates from the front, ``swap(r[i], r[i + random() % (n - i)])``
    for ``i < n - 1``; for n of 2**32 / 20 or more, the inside-out variant with ``random64()``.

    The swaps depend on each other, but their result does not need them run one by one: the value
    that ends at position ``i`` is found by following, backwards in time, the swaps that moved it
    (see ``_swaps_result``), which NumPy does for all positions at once.
    """
    if n < 0xFFFFFFFF // 20:
        if n <= 1:
            return np.arange(n, dtype=np.int64)
        fast = _fast_kernels(n, "randperm")
        if fast is not None:  # the swaps one by one, compiled
            result = np.arange(n, dtype=np.int64)
            fast.randperm_swaps(gen._random(n - 1), result)
            return result
        counts = np.arange(n, 1, -1, dtype=np.uint32)  # n - i for i = 0 .. n-2
        z = gen._random(n - 1)
        np.remainder(z, counts, out=z)
        target = np.arange(n - 1, dtype=np.int32)
        target += z.view(np.int32)
        return _swaps_result(n, target).astype(np.int64)
    z = (gen._random64(n) % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64)
    return _inside_out_result(n, z)


def _follow(pointer):
    """Pointer jumping: every pointer replaced by the end of its chain (an end points to itself)."""
    active = np.nonzero(pointer[pointer] != pointer)[0]
    while active.size:
        pointer[active] = pointer[pointer[active]]
        active = active[pointer[pointer[active]] != pointer[active]]
    return pointer


def _swaps_result(n, target):
    """The array after ``for i: swap(a[i], a[target[i]])`` on ``a = arange(n)``, with ``target[i] >= i``
    (``n - 1`` targets, ``n < 2**31``).

    Position ``i`` is final after step ``i``: it holds what was at ``target[i]`` just before. Follow
    that value backwards: going back through the steps ``k < i``, the last one that targeted its
    position put it there from position ``k``, where it sat just before step ``k``. So with
    ``held[k]``, what ``a[k]`` holds just before step ``k``: ``held[k] = held[prev(k)]`` for
    ``prev(k)`` the last step before ``k`` that targeted ``k`` (else ``k`` itself), and the
    result at ``i`` is ``held[j]`` for ``j`` the last step before ``i`` with the same target
    (else ``target[i]``, never moved). Both "last steps" come from sorting the steps by
    (target, step); the chains of ``prev`` are short and followed a link at a time.
    """
    m = n - 1
    steps = np.arange(m, dtype=np.int32)
    key = target.astype(np.uint64)
    key <<= np.uint64(32)
    key |= steps.astype(np.uint64)
    key.sort()
    step_of = key.astype(np.uint32).view(np.int32)  # the steps, grouped by target, in time order
    target_of = (key >> np.uint64(32)).astype(np.int32)
    # last[p]: the last step that targeted p (-1: none). target_of is sorted, so the writes go
    # in order and the last step of each group is the one that stays.
    last = np.full(n, -1, dtype=np.int32)
    last[target_of] = step_of
    prev = last[:m]
    selfs = np.flatnonzero(prev == steps)  # steps with target[k] == k: take the one before
    if selfs.size:
        prev = prev.copy()
        at = np.searchsorted(key, selfs.astype(np.uint64) * np.uint64((1 << 32) + 1)) - 1
        earlier = (at >= 0) & (target_of[np.maximum(at, 0)] == selfs)
        prev[selfs] = np.where(earlier, step_of[np.maximum(at, 0)], -1)
    held = np.where(prev >= 0, prev, steps)
    chain = np.flatnonzero(prev >= 0)
    link = held[chain]
    while chain.size:
        link = prev[link]
        on = link >= 0
        chain, link = chain[on], link[on]
        held[chain] = link
    # in (target, step) order: the result of each step is held[the step before it in its group]
    values = np.empty(m, dtype=np.int32)
    values[0] = target_of[0]
    np.take(held, step_of[:-1], out=values[1:])
    first_of_group = target_of[1:] != target_of[:-1]
    np.copyto(values[1:], target_of[1:], where=first_of_group)
    result = np.empty(n, dtype=np.int32)
    result[step_of] = values
    k = last[m]  # the last position is never a step
    result[m] = held[k] if k >= 0 else m
    return result


def _inside_out_result(n, z):
    """``for i: r[i] = r[z[i]]; r[z[i]] = i`` (randperm's variant for huge n), in NumPy.

    Position p ends with the last i that wrote ``r[z[i]] = i`` to it (z[i] == p), or, if none,
    what ``r[p] = r[z[p]]`` copied at step p: the value at z[p] just before step p. That value is
    the last i < p with z[i] == z[p], or, if none, what step z[p] copied, recursively.
    """
    steps = np.arange(n, dtype=np.int64)
    order = np.lexsort((steps, z))
    zs, ks = z[order], steps[order]
    same = zs[1:] == zs[:-1]
    earlier = np.full(n, -1, dtype=np.int64)
    earlier[ks[1:][same]] = ks[:-1][same]
    last = np.full(n, -1, dtype=np.int64)
    ends = np.append(~same, True)
    last[zs[ends]] = ks[ends]
    # copied[p]: the value step p copies from position z[p] (for z[p] == p: p itself)
    # = earlier[p] if that step wrote to z[p] before p, else copied[z[p]] (z[p] < p), else z[p]
    # when z[p] == p.
    pointer = np.where(earlier >= 0, -2, np.where(z == steps, -3, z))
    done = pointer < 0
    value = np.where(pointer == -2, earlier, steps)
    ptr = np.where(done, steps, pointer)
    ptr = _follow(ptr)
    copied = value[ptr]
    return np.where(last >= 0, last, copied)


# ------------------------------------------------------------------------------------------------
# multinomial


def multinomial_with_replacement(gen, probs, num_samples):
    """``multinomial_with_replacement_apply``: per row, the cumulative sum in the input's dtype,
    divided by the total, the last bucket set to 1; each sample a double uniform, placed by
    binary search (the first bucket whose cumulative value is >= the uniform)."""
    rows = probs.reshape(-1, probs.shape[-1])
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i, row in enumerate(rows):  # one row at a time: the draws are row by row
        cum = np.cumsum(row, dtype=row.dtype)
        total = cum[-1]
        cum = cum / total
        cum[-1] = 1
        u = _unit_double(gen._random64(num_samples))
        out[i] = np.searchsorted(cum.astype(F64), u, side="left")
    return out.reshape(probs.shape[:-1] + (num_samples,))
