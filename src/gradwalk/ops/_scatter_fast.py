"""Compiled (numba) fast path of ``_scatter.index_add_rows`` for the small sums below its
sorted path: the reference loop itself, ``out[flat[m]] += rows[m]`` row after row, each addition
in the rows' dtype (PyTorch's ``index_put_`` with ``accumulate=True`` / ``embedding_dense_backward``
on one thread). ``np.add.at`` runs the same loop; this is one call without its per-call setup
(a minibatch's embedding gradient, 96 rows of 10: ~7 -> ~1 us). Used from
``_scatter.FAST_MIN_ELEMENTS`` elements when ``gradwalk._fast.numba_njit()`` gives numba; the
reference stays ``np.add.at``, and tests check both give the same bits.
"""
import numpy as np

from .._fast import numba_njit

njit = numba_njit()
if njit is None:  # pragma: no cover - _scatter imports this module only with numba on
    raise ImportError("gradwalk.ops._scatter_fast needs numba (and GRADWALK_NO_NUMBA unset)")


@njit(cache=True)
def _index_add_rows(flat, rows, out):
    for m in range(rows.shape[0]):
        k = flat[m]
        if k < 0 or k >= out.shape[0]:  # (callers pass checked indices; never write outside)
            raise IndexError("index_add_rows: index out of range")
        dest = out[k]
        src = rows[m]
        for j in range(rows.shape[1]):
            dest[j] += src[j]


def index_add_rows(num_rows, flat, rows):
    """``out = zeros(num_rows, D); out[flat[m]] += rows[m]`` for m in order; ``rows`` 2-D
    float32/float64, ``flat`` integer destinations in ``[0, num_rows)``."""
    out = np.zeros((num_rows, rows.shape[1]), rows.dtype)
    _index_add_rows(flat.astype(np.int64, copy=False), np.ascontiguousarray(rows), out)
    return out
