"""Compiled (numba) fast paths of ``_float32_kernels`` for large float32 arrays: SLEEF's ``expf``
and the last-dim softmax / log_softmax kernels, one element at a time in ATen's order, the fused
multiply-adds as ``llvm.fma.f32`` (one rounding, the ``vfmadd`` instruction PyTorch runs).

Imported only for arrays of ``_float32_kernels.FAST_MIN`` elements or more, and only when
``gradwalk._fast.numba_njit()`` gives numba. The NumPy code in ``_float32_kernels`` is the
reference: tests check both against each other and against PyTorch.
"""
import math

import numpy as np

from .._fast import numba_njit
from .._random_fast import bits_float, fma

njit = numba_njit()
if njit is None:  # pragma: no cover - _float32_kernels imports this module only with numba on
    raise ImportError("gradwalk.ops._float32_fast needs numba (and GRADWALK_NO_NUMBA unset)")

_F = np.float32
_I = np.int32


@njit(cache=True, inline="always")
def expf(x):
    """SLEEF ``xexpf`` (``Sleef_expf16_u10``)."""
    if x != x:
        return x
    if x < _F(-104.0):
        return _F(0.0)
    if x > _F(100.0):
        return _F(np.inf)
    t = x * _F(1.442695040888963407359924681001892137426645954152985934135449406931)
    q = (t + _F(12582912.0)) - _F(12582912.0)  # to nearest, ties to even (|t| < 2^22)
    s = fma(q, _F(-0.693145751953125), x)
    s = fma(q, _F(-1.428606765330187045e-06), s)
    u = fma(_F(0.000198527617612853646278381), s, _F(0.00139304355252534151077271))
    u = fma(u, s, _F(0.00833336077630519866943359))
    u = fma(u, s, _F(0.0416664853692054748535156))
    u = fma(u, s, _F(0.166666671633720397949219))
    u = fma(u, s, _F(0.5))
    u = _F(1.0) + fma(s * s, u, s)
    qi = _I(q)
    h = qi >> 1
    return u * bits_float(_I((h + 127) << 23)) * bits_float(_I((qi - h + 127) << 23))


@njit(cache=True, inline="always")
def _two_sum(x, y):
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


@njit(cache=True)
def logf(d):
    """SLEEF ``xlogf_u1`` (``Sleef_logf16_u10``), as ``_float32_kernels.sleef_logf``."""
    if d != d or d < _F(0.0):
        return _F(np.nan)
    if d == _F(0.0):
        return _F(-np.inf)
    if d == _F(np.inf):
        return d
    a = d * _F(1 / 0.75)
    if a == _F(np.inf):
        e = 128
    else:
        e = math.frexp(a)[1] - 1   # vgetexp: floor(log2(a))
    m = _F(math.ldexp(float(d), -e))  # vgetmant, in [0.75, 1.5)
    ef = _F(e)
    ln2_hi = _F(0.69314718246459960938)
    ln2_lo = _F(-1.904654323148236017e-09)
    sx = ln2_hi * ef
    sy = fma(ln2_lo, ef, fma(ln2_hi, ef, -sx))
    nx, ny = _two_sum(_F(-1.0), m)
    dx, dy = _two_sum(_F(1.0), m)
    t = _F(1.0) / dx
    xx = nx * t
    u = fma(t, nx, -xx)
    v = fma(-dy, t, fma(-dx, t, _F(1.0)))
    xy = fma(xx, v, fma(ny, t, u))
    x2 = xx * xx
    p = fma(_F(0.3027294874), x2, _F(0.3996108174))
    p = fma(p, x2, _F(0.6666694880))
    yx = xx * _F(2.0)
    yy = xy * _F(2.0)
    s1x = sx + yx
    s1y = ((sx - s1x) + yx) + (sy + yy)
    w = (x2 * xx) * p
    s2x = s1x + w
    s2y = ((s1x - s2x) + w) + s1y
    return s2x + s2y


@njit(cache=True)
def _logf_flat(d, out):
    for i in range(d.size):
        out[i] = logf(d[i])


@njit(cache=True)
def _expf_flat(d, out):
    for i in range(d.size):
        out[i] = expf(d[i])


@njit(cache=True, inline="always")
def _tree(acc):
    """vec_reduce_all's shuffles: lane 0 of the pairwise tree."""
    a0 = (acc[0] + acc[8]) + (acc[4] + acc[12])
    a2 = (acc[2] + acc[10]) + (acc[6] + acc[14])
    a1 = (acc[1] + acc[9]) + (acc[5] + acc[13])
    a3 = (acc[3] + acc[11]) + (acc[7] + acc[15])
    return (a0 + a2) + (a1 + a3)


@njit(cache=True, inline="always")
def _row_sum(row, acc):
    """vec::reduce_all(x + y) of one row; ``acc``: 16 floats of scratch (the lanes)."""
    n = row.size
    if n < 16:
        s = row[0]
        for i in range(1, n):
            s = s + row[i]
        return s
    for k in range(16):
        acc[k] = row[k]
    d = 16
    while d < n - n % 16:
        for k in range(16):
            acc[k] = acc[k] + row[d + k]
        d += 16
    for k in range(n - d):
        acc[k] = acc[k] + row[d + k]
    return _tree(acc)


@njit(cache=True)
def _row_max(row):
    """The row's max, NaN as soon as one is met (as ATen's vectorised max)."""
    m = row[0]
    for j in range(1, row.shape[0]):
        v = row[j]
        if v > m or v != v:
            m = v
        if m != m:
            break
    return m


@njit(cache=True)
def _shift_exp_sum(x, shifted, e, sums):
    """Per row: max, ``x - max``, SLEEF exp of it, and the exps' sum in reduce_all's order."""
    rows, n = x.shape
    acc = np.empty(16, _F)
    for r in range(rows):
        m = _row_max(x[r])
        for j in range(n):
            s = x[r, j] - m
            shifted[r, j] = s
            e[r, j] = expf(s)
        sums[r] = _row_sum(e[r], acc)


@njit(cache=True)
def _log_softmax(x, out):
    """Per row: ``x - max - log(sum(exp(x - max)))``, as ``_shift_exp_sum`` then SLEEF's log of
    the sum (``log_softmax_lastdim``), in one pass of calls: no intermediate arrays."""
    rows, n = x.shape
    e = np.empty(n, _F)
    acc = np.empty(16, _F)
    for r in range(rows):
        m = _row_max(x[r])
        for j in range(n):
            s = x[r, j] - m
            out[r, j] = s
            e[j] = expf(s)
        log_sum = logf(_row_sum(e, acc))
        for j in range(n):
            out[r, j] = out[r, j] - log_sum


@njit(cache=True)
def _log_softmax_backward(g, y, out):
    rows, n = g.shape
    acc = np.empty(16, _F)
    for r in range(rows):
        s = _row_sum(g[r], acc)
        for j in range(n):
            out[r, j] = fma(-expf(y[r, j]), s, g[r, j])


@njit(cache=True)
def _softmax_backward(g, y, out):
    rows, n = g.shape
    for r in range(rows):
        if n < 16:
            s = g[r, 0] * y[r, 0]
            for i in range(1, n):
                s = s + g[r, i] * y[r, i]
        else:
            acc = np.empty(16, _F)
            for k in range(16):
                acc[k] = g[r, k] * y[r, k]
            d = 16
            while d < n - n % 16:
                for k in range(16):
                    acc[k] = acc[k] + g[r, d + k] * y[r, d + k]
                d += 16
            for k in range(n - d):
                acc[k] = fma(g[r, d + k], y[r, d + k], acc[k])
            s = _tree(acc)
        for j in range(n):
            out[r, j] = (g[r, j] - s) * y[r, j]


def sleef_expf(d):
    flat = np.ascontiguousarray(d).reshape(-1)
    out = np.empty(flat.size, _F)
    _expf_flat(flat, out)
    return out.reshape(d.shape)


def sleef_logf(d):
    flat = np.ascontiguousarray(d, _F).reshape(-1)
    out = np.empty(flat.size, _F)
    _logf_flat(flat, out)
    return out.reshape(np.shape(d))


def shift_exp_sum(x):
    """(x - max, exp(x - max), sum of the exps) for a 2-D float32 array, by rows."""
    x = np.ascontiguousarray(x)
    shifted, e = np.empty_like(x), np.empty_like(x)
    sums = np.empty(x.shape[0], _F)
    _shift_exp_sum(x, shifted, e, sums)
    return shifted, e, sums


def log_softmax(x):
    """``log_softmax_lastdim`` of a 2-D float32 array, by rows."""
    out = np.empty(x.shape, _F)
    _log_softmax(np.ascontiguousarray(x), out)
    return out


def log_softmax_backward(g, y):
    out = np.empty(g.shape, _F)
    _log_softmax_backward(np.ascontiguousarray(g), np.ascontiguousarray(y), out)
    return out


def softmax_backward(g, y):
    out = np.empty(g.shape, _F)
    _softmax_backward(np.ascontiguousarray(g), np.ascontiguousarray(y), out)
    return out


@njit(cache=True)
def _matmul_chain(a, b, out):
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        acc = out[i]
        for j in range(n):
            acc[j] = _F(0.0)
        for p in range(k):
            av = a[i, p]
            brow = b[p]
            for j in range(n):  # independent over j: LLVM vectorises the fma
                acc[j] = fma(av, brow[j], acc[j])


def matmul_chain(a, b):
    """The loop vectorises along the output's rows; when the columns are fewer than the rows it
    runs on the transposed problem (``b.T @ a.T``: the same products, each chain in the same
    order), then copies back to a C-contiguous result."""
    m, n = a.shape[0], b.shape[1]
    if n >= m:
        out = np.empty((m, n), _F)
        _matmul_chain(np.ascontiguousarray(a), np.ascontiguousarray(b), out)
        return out
    out_t = np.empty((n, m), _F)
    _matmul_chain(np.ascontiguousarray(b.T), np.ascontiguousarray(a.T), out_t)
    return np.ascontiguousarray(out_t.T)


@njit(cache=True)
def _tanh_backward_flat(g, y, out):
    for i in range(g.size):
        out[i] = g[i] * fma(-y[i], y[i], _F(1.0))


def tanh_backward(g, y):
    """``g * fma(-y, y, 1)`` for same-shape float32 arrays, in ``y``'s memory order."""
    gc, yc = np.ascontiguousarray(g), np.ascontiguousarray(y)
    out = np.empty(yc.shape, _F)
    _tanh_backward_flat(gc.reshape(-1), yc.reshape(-1), out.reshape(-1))
    return out
