"""Floating-point sums added up in the order PyTorch's CPU kernel adds them.

Float addition is not associative, so two libraries that sum the same numbers in different orders
print different last digits: NumPy sums pairwise, PyTorch (``aten/src/ATen/native/cpu/SumKernel.cpp``)
runs a *cascade sum*. A row is read in 32-byte SIMD vectors (8 float32 or 4 float64 lanes), four
vectors at a time; each of the four accumulators keeps four levels of partial sums, and level
``j`` is emptied into level ``j + 1`` every ``2**level_power`` additions (``level_power =
max(4, ceil(log2(n)) // 4)``). What is left over (the rows beyond the last full group of four
vectors, the elements beyond the last full vector) is added in a fixed order at the end. Summing
over a leading dimension (``x.sum(0)``) runs the same cascade down each column.

``cascade_sum(array, axis)`` follows that order with NumPy's float arithmetic on whole columns at a
time, so ``loss.item()`` prints PyTorch's 17 digits. It covers a sum over all elements, or over one
dimension (or a run of adjacent ones) of a C-contiguous array or a transposed matrix; anything else
(3-d views in another memory order, dims that are not adjacent) is summed by NumPy. Sums of 32768
elements or more into one number are split between threads in PyTorch; they are split here as
PyTorch splits them, with one thread per CPU this process may use.

Two implementations of the kernel's two loops sit side by side: the reference
(``_multi_row_sum``/``_row_sum``: one step of the C++ loop per NumPy statement, slice by slice)
and the fast path (``_multi_row_sum_fast``/``_row_sum_fast``: the same additions in the same order,
but each cascade level as one ``np.add.reduce`` over a non-innermost axis, which NumPy adds strictly
in order, and the accumulators that are still zero left out). The fast path is the default;
``cascade_sum(..., reference=True)`` runs the reference, and tests check both give the same bits.
(Every partial sum that starts from +0.0 differs from one that starts from its first term only in
the sign of an all-zero sum; the one ``+ 0.0`` at the end of a cascade gives PyTorch's sign.)
A sum down the columns (``_outer_sum``: a bias's gradient) of ``FAST_MIN`` elements or more runs
the C++ loops compiled when numba is on (``_cascade_sum_fast``, one call instead of one NumPy
reduction per level and block: 11 -> 2.6 us for (32, 200)); tests check it against the reference.

    >>> import numpy as np
    >>> x = np.float32([0.7] * 100)
    >>> float(cascade_sum(x)), float(x.sum())  # torch.full((100,), 0.7).sum().item() is 70.0
    (70.0, 69.9999771118164)
"""
import math
import os

import numpy as np

from .. import _fast

GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE: below it a reduction runs on one thread
FAST_MIN = 256  # outer sums of at least this many elements run compiled (numba on): _cascade_sum_fast
NUM_LEVELS = 4
ILP = 4


# Measured on PyTorch 2.13 (an AVX-512 machine too): the sum kernel reads 32-byte vectors, i.e.
# 8 float32 or 4 float64 lanes, as its AVX2 and default builds do.
_VECTOR_BYTES = 32


def _threads():
    value = os.environ.get("OMP_NUM_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _ceil_log2(n):
    return 0 if n <= 1 else (n - 1).bit_length()


def _sequential(x, axis):
    """x summed along axis strictly in index order, starting from +0.0 (as PyTorch's accumulators)."""
    axis %= x.ndim
    if x.shape[axis] > 1 and axis < x.ndim - 1 and x.shape[-1] > 1 and x.strides[-1] == x.itemsize:
        # NumPy adds slices along an axis that is not the contiguous last one strictly in order
        # (its pairwise summation is only for the innermost axis); it starts from the first
        # slice instead of +0.0, which differs only in the sign of an all-zero sum: + 0.0 fixes it
        return np.add.reduce(x, axis=axis) + x.dtype.type(0.0)
    along = np.moveaxis(x, axis, 0)
    acc = np.zeros(along.shape[1:], dtype=x.dtype)
    for part in along:  # views, no copies
        acc += part
    return acc


def _multi_row_sum(x):
    """multi_row_sum: x (R, S, L) summed over S with four cascade levels -> (R, L)."""
    rows, size, lanes = x.shape
    level_power = max(4, _ceil_log2(size) // NUM_LEVELS)
    step = 1 << level_power
    groups = size // step
    acc1 = acc2 = acc3 = np.zeros((rows, lanes), dtype=x.dtype)
    if groups:
        level0 = _sequential(x[:, :groups * step].reshape(rows, groups, step, lanes), 2)  # (R, G, L)
        full1 = groups // step
        acc1 = _sequential(level0[:, full1 * step:], 1)
        if full1:
            level1 = _sequential(level0[:, :full1 * step].reshape(rows, full1, step, lanes), 2)
            full2 = full1 // step
            acc2 = _sequential(level1[:, full2 * step:], 1)
            if full2:
                level2 = _sequential(level1[:, :full2 * step].reshape(rows, full2, step, lanes), 2)
                acc3 = _sequential(level2, 1)
    acc0 = _sequential(x[:, groups * step:], 1)
    return acc0 + acc1 + acc2 + acc3  # evaluated left to right, as the kernel's final loop


def _row_sum(x):
    """row_sum: x (R, N, L) summed over N, four interleaved accumulators -> (R, L)."""
    rows, size, lanes = x.shape
    size_ilp = size // ILP
    partial = _multi_row_sum(x[:, :size_ilp * ILP].reshape(rows, size_ilp, ILP * lanes))
    partial = partial.reshape(rows, ILP, lanes)
    first = partial[:, 0].copy()
    for i in range(size_ilp * ILP, size):
        first += x[:, i]
    for k in range(1, ILP):
        first += partial[:, k]
    return first


def _sequential_fast(x, axis):
    """x summed along axis in index order (a non-innermost axis of an array whose last axis is
    contiguous and longer than 1, or of length 1: ``_fast_ok``), the sign of zero left to the caller."""
    return x[:, 0] if x.shape[axis] == 1 else np.add.reduce(x, axis=axis)


def _fast_ok(x):
    return x.shape[-1] > 1 and x.strides[-1] == x.itemsize


def _multi_row_sum_fast(x, zero_sign=True):
    """_multi_row_sum's additions in its order, one np.add.reduce per cascade level.

    Level j's accumulator holds the sum of the level's terms after its last full group of
    ``step`` (the kernel empties it into level j + 1 at each full group); the top level keeps all.
    x is (R, S, L) or (R, S, K, L) (K * L lanes, a view that needs no copy). zero_sign=False
    leaves the sign of an all-zero sum to the caller (one + 0.0 at the end of the whole sum)."""
    rows, size = x.shape[:2]
    lanes = x.shape[2:]
    if not size:
        return np.zeros((rows,) + lanes, dtype=x.dtype)
    if not _fast_ok(x):
        return _multi_row_sum(x)
    step = 1 << max(4, _ceil_log2(size) // NUM_LEVELS)
    total = None  # acc0 + acc1 + acc2 + acc3, left to right, the accumulators still zero left out
    level = x
    for j in range(NUM_LEVELS):
        n = level.shape[1]
        groups = n // step if j < NUM_LEVELS - 1 else 0
        if groups * step < n:
            acc = _sequential_fast(level[:, groups * step:] if groups else level, 1)
            total = acc if total is None else total + acc
        if not groups:
            break
        level = np.add.reduce(level[:, :groups * step].reshape((rows, groups, step) + lanes), axis=2)
    return total + x.dtype.type(0.0) if zero_sign else total


def _row_sum_fast(x, zero_sign=True):
    """_row_sum with _multi_row_sum_fast; the same additions in the same order (zero_sign as
    there: the kernel's result is never -0.0, so one + 0.0 at the end gives every sign)."""
    rows, size, lanes = x.shape
    size_ilp = size // ILP
    body = x if size == size_ilp * ILP else x[:, :size_ilp * ILP]
    if lanes > 1 and x.strides[-1] == x.itemsize:  # (R, size_ilp, ILP, lanes): a view, no copy
        partial = _multi_row_sum_fast(body.reshape(rows, size_ilp, ILP, lanes), False)
    else:
        partial = _multi_row_sum_fast(body.reshape(rows, size_ilp, ILP * lanes), False)
        partial = partial.reshape(rows, ILP, lanes)
    if size == size_ilp * ILP and lanes > 1:
        first = np.add.reduce(partial, axis=1)  # ((acc[0] + acc[1]) + acc[2]) + acc[3], in order
    else:
        first = partial[:, 0]
        for i in range(size_ilp * ILP, size):
            first = first + x[:, i]
        for k in range(1, ILP):
            first = first + partial[:, k]
    return first + x.dtype.type(0.0) if zero_sign else first


_KERNELS = {False: (_multi_row_sum_fast, _row_sum_fast), True: (_multi_row_sum, _row_sum)}


def _inner_sum(x, lanes, reference=False):
    """Each row of x (R, N) summed, the rows contiguous: vectorized_inner_sum / scalar_inner_sum."""
    row_sum = _KERNELS[reference][1]
    rows, n = x.shape
    if n < lanes:
        return row_sum(x.reshape(rows, n, 1))[:, 0]
    vectors = n // lanes
    if not reference:
        vector_acc = _row_sum_fast(x[:, :vectors * lanes].reshape(rows, vectors, lanes), False)
        # final_acc = 0, then the leftover elements, then the lanes, one at a time: a running sum
        # (np.add.accumulate adds strictly in order) of those terms, and + 0.0 for the first 0
        terms = np.concatenate((x[:, vectors * lanes:], vector_acc), axis=1)
        return np.add.accumulate(terms, axis=1)[:, -1] + x.dtype.type(0.0)
    vector_acc = row_sum(x[:, :vectors * lanes].reshape(rows, vectors, lanes))
    total = np.zeros(rows, dtype=x.dtype)
    for k in range(vectors * lanes, n):
        total += x[:, k]
    for lane in range(lanes):
        total += vector_acc[:, lane]
    return total


def _outer_sum(x, lanes, reference=False):
    """x (O, N, M) summed over N, M contiguous columns: vectorized_outer_sum / scalar_outer_sum."""
    multi_row_sum, row_sum = _KERNELS[reference]
    outer, n, m = x.shape
    block = ILP * lanes if m >= lanes else ILP
    cascaded = (m // block) * block
    if not reference and x.size >= FAST_MIN and x.flags.c_contiguous and _fast.numba_njit() is not None:
        return _compiled().outer_sum(x, cascaded)  # the kernel's loops: one call, not one per level
    if cascaded == m:
        return multi_row_sum(x)
    if not cascaded:
        return row_sum(x)
    if not reference:  # the two blocks joined, one + 0.0 for both (see _multi_row_sum_fast)
        return np.concatenate((_multi_row_sum_fast(x[:, :, :cascaded], False),
                               _row_sum_fast(x[:, :, cascaded:], False)), axis=1) + x.dtype.type(0.0)
    out = np.empty((outer, m), dtype=x.dtype)
    out[:, :cascaded] = multi_row_sum(x[:, :, :cascaded])
    out[:, cascaded:] = row_sum(x[:, :, cascaded:])
    return out


_COMPILED = None


def _compiled():
    """gradwalk.ops._cascade_sum_fast, imported on first use (callers check numba_njit())."""
    global _COMPILED
    if _COMPILED is None:
        from . import _cascade_sum_fast

        _COMPILED = _cascade_sum_fast
    return _COMPILED


def _full_sum(flat, lanes, reference=False):
    n = flat.shape[0]
    if n < GRAIN_SIZE:
        return _inner_sum(flat.reshape(1, n), lanes, reference)[0]
    threads = _threads()
    if threads == 1:
        return _inner_sum(flat.reshape(1, n), lanes, reference)[0]
    # at::parallel_reduce's two-pass reduction: parallel_for's chunks, one partial sum per thread
    # in a buffer (zeros for threads left without work), then the buffer summed as a row
    used = min(threads, -(-n // GRAIN_SIZE))
    chunk = -(-n // used)
    partials = np.zeros((1, threads), dtype=flat.dtype)
    for t, begin in enumerate(range(0, n, chunk)):
        partials[0, t] = _inner_sum(flat[begin:begin + chunk].reshape(1, -1), lanes, reference)[0]
    return _inner_sum(partials, lanes, reference)[0]


def _memory_order(x):
    """The axes of x from the largest stride to the smallest (TensorIterator's order), or None
    when x is not a dense block in that order (broadcast or sliced views)."""
    if x.flags.c_contiguous:
        return list(range(x.ndim))
    if x.ndim != 2 or not x.flags.f_contiguous:
        return None  # (3-d views in another order: PyTorch's loop order not followed here yet)
    return [1, 0]


def sum_rows(x):
    """``cascade_sum(x, 0)`` of a 2-D C-contiguous float32/float64 array with more than one
    column (a bias's gradient, summed by the engine), without the general case's checks."""
    rows, cols = x.shape
    return _outer_sum(x.reshape(1, rows, cols), _VECTOR_BYTES // x.dtype.itemsize).reshape(cols)


def cascade_sum(x, axis=None, keepdims=False, reference=False):
    """x summed as PyTorch's CPU kernel sums it (see the module's docstring); float32/float64.

    axis: None (all elements), an int, or a tuple of ints. reference: run the slice-by-slice
    reference kernels instead of the fast path (the same bits; for tests)."""
    x = np.asarray(x)
    if x.dtype.char not in "fd" or x.size == 0 or x.ndim == 0:  # float32 / float64 only
        return x.sum(axis=axis, keepdims=keepdims)
    lanes = _VECTOR_BYTES // x.dtype.itemsize
    if type(axis) is int and not keepdims and x.flags.c_contiguous and -x.ndim <= axis < x.ndim:
        # the common case (a bias's gradient, a row sum), without the general axis bookkeeping
        axis %= x.ndim
        shape = x.shape
        if axis == 0 and x.ndim == 2 and shape[1] != 1:  # (rows, columns) summed down the columns: a bias's gradient
            return _outer_sum(x.reshape(1, shape[0], shape[1]), lanes, reference).reshape(shape[1])
        after = math.prod(shape[axis + 1:])
        if after == 1:
            result = _inner_sum(x.reshape(-1, shape[axis]), lanes, reference)
        else:
            result = _outer_sum(x.reshape(-1, shape[axis], after), lanes, reference)
        return result.reshape(shape[:axis] + shape[axis + 1:])
    order = _memory_order(x)
    if order is None:
        return x.sum(axis=axis, keepdims=keepdims)
    if axis is None:
        result = np.asarray(_full_sum(x.transpose(order).reshape(-1), lanes, reference), dtype=x.dtype)
        return result.reshape((1,) * x.ndim) if keepdims else result
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = sorted({a % x.ndim for a in axes})
    if len(axes) == x.ndim:
        return cascade_sum(x, None, keepdims, reference)
    positions = sorted(order.index(a) for a in axes)
    if positions != list(range(positions[0], positions[-1] + 1)):
        return x.sum(axis=tuple(axes), keepdims=keepdims)  # reduced dims not adjacent in memory
    permuted = x.transpose(order)
    shape = permuted.shape
    before = math.prod(shape[:positions[0]])
    reduced = math.prod(shape[positions[0]:positions[-1] + 1])
    after = math.prod(shape[positions[-1] + 1:])
    block = permuted.reshape(before, reduced, after)
    if after == 1:
        result = _inner_sum(block.reshape(before, reduced), lanes, reference)
    else:
        result = _outer_sum(block, lanes, reference)
    if x.flags.c_contiguous:  # memory order is the axes' order: the kept axes are in place
        kept_shape = [n for a, n in enumerate(x.shape) if a not in axes]
        return result.reshape([1 if a in axes else n for a, n in enumerate(x.shape)] if keepdims else kept_shape)
    # back to the kept axes in the input's own order
    kept_in_memory_order = [a for a in order if a not in axes]
    kept_shape = [x.shape[a] for a in kept_in_memory_order]
    result = result.reshape(kept_shape)
    kept = sorted(kept_in_memory_order)
    result = result.transpose([kept_in_memory_order.index(a) for a in kept])
    if keepdims:
        result = np.expand_dims(result, tuple(axes))
    return np.ascontiguousarray(result)
