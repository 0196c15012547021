"""Compiled (numba) fast paths of two sums in PyTorch's order.

``outer_sum``: ``cascade_sum``'s outer sum (``x.sum(0)`` of a C-contiguous matrix: a bias's
gradient), written as ``SumKernel.cpp``'s loops: ``multi_row_sum`` down each column of the
vectorised block, ``row_sum`` (four interleaved accumulators) down each column of the rest,
each result added to the zero-filled output.

NumPy needs a reduction call per cascade level and block (about 1 us each: 5-11 us for a
(32, 200) gradient); this is one call. Imported only for arrays of ``cascade_sum.FAST_MIN``
elements or more and only when ``gradwalk._fast.numba_njit()`` gives numba; the NumPy code in
``cascade_sum`` is the reference, and tests check both give the same bits.

``nll_cascade_sum``: ``nll_loss``'s 8-level sum of the picked log-probabilities, its C++ loop
(the reference: ``_float32_kernels.nll_cascade_sum``; 7 -> 0.5 us for 32 rows), used when the
loss's input has ``FAST_MIN`` elements or more.
"""
import numpy as np

from .._fast import numba_njit

njit = numba_njit()
if njit is None:  # pragma: no cover - cascade_sum imports this module only with numba on
    raise ImportError("gradwalk.ops._cascade_sum_fast needs numba (and GRADWALK_NO_NUMBA unset)")


@njit(cache=True)
def _level_power(size):
    """``max(4, CeilLog2(size) / num_levels)``, num_levels = 4."""
    ceil_log2 = 0
    while (1 << ceil_log2) < size:
        ceil_log2 += 1
    return max(4, ceil_log2 // 4)


@njit(cache=True)
def _outer_sum(x, cascaded, out):
    """x (O, S, M) summed over S into out (O, M): columns [0, cascaded) by multi_row_sum (one
    cascade per column: the kernel's vector lanes are independent columns), the rest by row_sum."""
    outer, size, m = x.shape
    power = _level_power(size)
    step = 1 << power
    mask = step - 1
    acc = np.zeros((4, max(cascaded, 4)), x.dtype)
    partial = np.zeros(4, x.dtype)
    zero = partial[0]
    for o in range(outer):
        # multi_row_sum<Vectorized, 4>: four cascade levels per column
        acc[:, :] = zero
        i = 0
        while i + step <= size:
            for _ in range(step):
                for k in range(cascaded):
                    acc[0, k] += x[o, i, k]
                i += 1
            for j in range(1, 4):
                for k in range(cascaded):
                    acc[j, k] += acc[j - 1, k]
                    acc[j - 1, k] = zero
                if i & (mask << (j * power)):
                    break
        while i < size:
            for k in range(cascaded):
                acc[0, k] += x[o, i, k]
            i += 1
        for k in range(cascaded):
            s = acc[0, k]
            for j in range(1, 4):
                s += acc[j, k]
            out[o, k] = zero + s  # CastStoreAccumulate: added to the zero-filled output
        # row_sum: the column read as (size // 4, 4) rows, multi_row_sum<scalar, 4> down them
        size_ilp = size // 4
        power_ilp = _level_power(size_ilp)
        step_ilp = 1 << power_ilp
        mask_ilp = step_ilp - 1
        for c in range(cascaded, m):
            acc[:, :4] = zero
            i = 0
            while i + step_ilp <= size_ilp:
                for _ in range(step_ilp):
                    for k in range(4):
                        acc[0, k] += x[o, 4 * i + k, c]
                    i += 1
                for j in range(1, 4):
                    for k in range(4):
                        acc[j, k] += acc[j - 1, k]
                        acc[j - 1, k] = zero
                    if i & (mask_ilp << (j * power_ilp)):
                        break
            while i < size_ilp:
                for k in range(4):
                    acc[0, k] += x[o, 4 * i + k, c]
                i += 1
            for k in range(4):
                s = acc[0, k]
                for j in range(1, 4):
                    s += acc[j, k]
                partial[k] = s
            for r in range(size_ilp * 4, size):
                partial[0] += x[o, r, c]
            s = partial[0]
            for k in range(1, 4):
                s += partial[k]
            out[o, c] = zero + s


def outer_sum(x, cascaded):
    """x (O, S, M), C-contiguous float32/float64, summed over S -> (O, M); ``cascaded``: how many
    leading columns the kernel's vectorised loop takes (``cascade_sum._outer_sum``'s)."""
    out = np.empty((x.shape[0], x.shape[2]), x.dtype)
    _outer_sum(x, cascaded, out)
    return out


@njit(cache=True)
def _nll_cascade_sum(values):
    """``nll_loss_out_frame``'s loop (LossNLL.cpp): 8 levels; row b is added to level 0, then
    while ``b`` is a multiple of ``step**(j+1)`` level j is added to level j + 1 and zeroed; the
    result is ``0 + level 0 + ... + level 7``."""
    n = values.shape[0]
    levels = np.zeros(8, values.dtype)
    ceil_log2 = 0
    while (1 << ceil_log2) < n:
        ceil_log2 += 1
    power = max(4, ceil_log2 // 8)
    mask = (1 << power) - 1
    for b in range(n):
        levels[0] += values[b]
        for j in range(7):
            if b & (mask << (j * power)):
                break
            levels[j + 1] += levels[j]
            levels[j] = 0.0
    total = np.zeros(1, values.dtype)  # loss_sum = 0, in the values' dtype
    for j in range(8):
        total[0] += levels[j]
    return total[0]


def nll_cascade_sum(values):
    """``_float32_kernels.nll_cascade_sum`` compiled: ``values`` 1-D float32/float64."""
    return values.dtype.type(_nll_cascade_sum(np.ascontiguousarray(values)))  # (numba gives a float)


@njit(cache=True)
def _nll_picked_sum(x, target):
    """``_nll_cascade_sum`` of ``-x[b, target[b]]`` (the loss's terms, picked as they are added:
    ATen's ``loss_partial_sums[0] -= data``)."""
    n, c = x.shape
    levels = np.zeros(8, x.dtype)
    ceil_log2 = 0
    while (1 << ceil_log2) < n:
        ceil_log2 += 1
    power = max(4, ceil_log2 // 8)
    mask = (1 << power) - 1
    for b in range(n):
        k = target[b]
        if k < 0 or k >= c:  # (callers pass checked targets; never read outside)
            raise IndexError("nll_loss: target out of range")
        levels[0] -= x[b, k]
        for j in range(7):
            if b & (mask << (j * power)):
                break
            levels[j + 1] += levels[j]
            levels[j] = 0.0
    total = np.zeros(1, x.dtype)
    for j in range(8):
        total[0] += levels[j]
    return total[0]


def nll_picked_sum(x, target):
    """``_float32_kernels.nll_picked_sum`` compiled: x (N, C) float32/float64, target (N,) ints."""
    return x.dtype.type(_nll_picked_sum(np.ascontiguousarray(x), target.astype(np.int64, copy=False)))
