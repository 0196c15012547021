"""Sums of rows into the rows an index picked, in PyTorch's order: the backward of indexing
(``x[idx]``, ``index_select``) and of ``embedding``.

PyTorch's CPU kernels for these on one thread (``index_put_`` with ``accumulate=True`` in
``cpu/IndexKernel.cpp``, ``embedding_dense_backward_cpu`` in ``Embedding.cpp``) walk the rows in
order and add each into its destination in the gradient's own dtype::

    for m in range(len(idx)):
        out[idx[m]] += rows[m]          # float32 stays float32: one rounding per addition

``np.add.at(out, idx, rows)`` is exactly that loop, and it is the reference here
(:func:`index_add_rows_reference`). It is also slow (an unbuffered loop, ~10-20 ns per element).
:func:`index_add_rows` computes the same sums, bit for bit, as array operations: a stable sort
of the indices lists each destination's rows in their original order, and the rows are laid out
as a table whose column ``k`` holds destination ``k``'s rows top to bottom (zeros below its last
one). Summing that table down its first axis adds, in every column, the same numbers in the same
order as the loop (NumPy reduces a leading axis one row at a time: no pairwise summation across
rows). Destinations with very different counts go in separate tables (bands of similar count), so
the padding stays a fraction of the rows. ``tests/test_index_backward.py`` checks both paths
against each other and against PyTorch.
"""
import numpy as np

from .. import _fast

# below this many rows the reference loop is as fast as the sorting
_FAST_MIN_ROWS = 2048
# below the sorted path, from this many elements: the loop compiled (numba on; _scatter_fast)
FAST_MIN_ELEMENTS = 256
_FLAT_AT_MAX = 1 << 16  # below the sorted path: np.add.at on flat indices up to this many elements
# a band's columns hold between count and count / _BAND_RATIO rows: padding < 1/3 of its size
_BAND_RATIO = 1.5


def index_add_rows_reference(num_rows, flat, rows):
    """``out = zeros(num_rows, D); out[flat[m]] += rows[m]`` for m in order (``np.add.at``)."""
    out = np.zeros((num_rows,) + rows.shape[1:], dtype=rows.dtype)
    if rows.ndim == 2 and rows.shape[1] == 1:  # one number per row: NumPy's faster 1-D loop
        np.add.at(out.reshape(-1), flat, rows.reshape(-1))
    else:
        np.add.at(out, flat, rows)
    return out


def index_add_rows(num_rows, flat, rows):
    """The same sums as :func:`index_add_rows_reference`, bit for bit, without the per-element loop.

    ``flat``: integer destinations in ``[0, num_rows)`` (negative ones already wrapped), one per
    row of ``rows`` (M, D). Returns (num_rows, D) in ``rows.dtype``.
    """
    m = flat.shape[0]
    if m < _FAST_MIN_ROWS or rows.dtype.kind not in "fc" or num_rows > 65536:
        d = rows.shape[1] if rows.ndim == 2 else 0
        if m * d >= FAST_MIN_ELEMENTS and rows.dtype.char in "fd" and _fast.numba_njit() is not None:
            from . import _scatter_fast  # the reference loop, compiled

            return _scatter_fast.index_add_rows(num_rows, flat, rows)
        if 1 < d and m * d <= _FLAT_AT_MAX:
            # np.add.at on the flattened arrays: every element in the same order (row by row),
            # through NumPy's 1-D loop, twice as fast as its loop over rows (a minibatch's
            # embedding gradient: 96 rows of 10, 9 -> 5 us)
            out = np.zeros(num_rows * d, dtype=rows.dtype)
            np.add.at(out, (flat.astype(np.int64)[:, None] * d + np.arange(d)).reshape(-1), rows.reshape(-1))
            return out.reshape(num_rows, d)
        return index_add_rows_reference(num_rows, flat, rows)
    d = rows.shape[1]
    key = flat.astype(np.uint8 if num_rows <= 256 else np.uint16)
    order = np.argsort(key, kind="stable")  # a radix sort: destinations grouped, rows in order
    counts = np.bincount(key, minlength=num_rows)
    starts = np.cumsum(counts) - counts  # where each destination's rows begin in ``order``
    out = np.zeros((num_rows, d), dtype=rows.dtype)
    by_count = np.argsort(-counts, kind="stable")
    by_count = by_count[counts[by_count] > 0]
    i = 0
    while i < len(by_count):
        depth = int(counts[by_count[i]])  # the band's longest column
        j = int(np.searchsorted(-counts[by_count], -(depth / _BAND_RATIO), side="right"))
        band = by_count[i:max(j, i + 1)]
        i += len(band)
        out[band] = _column_sums(rows, order, starts[band], counts[band], depth)
    return out


def _column_sums(rows, order, starts, counts, depth):
    """Column k of a (depth, K, D) table holds rows ``order[starts[k]:starts[k] + counts[k]]``,
    then zeros; summed down the first axis, starting from +0.0 as PyTorch's zero-filled output."""
    level = np.arange(depth)[:, None]
    where = starts[None, :] + level  # (depth, K) positions in ``order``
    table = np.take(rows, np.take(order, where, mode="clip").ravel(), axis=0)
    table = table.reshape(depth, len(starts), rows.shape[1])
    table[level >= counts[None, :]] = 0  # below a column's last row
    flat = table.reshape(depth, -1)
    if flat.shape[1] == 1:  # a single lane: NumPy would sum it pairwise; two lanes keep it in order
        flat = np.concatenate([flat, np.zeros_like(flat)], axis=1)
        return np.add.reduce(flat, axis=0, initial=0)[:1].reshape(1, -1)
    return np.add.reduce(flat, axis=0, initial=0).reshape(len(starts), rows.shape[1])
