"""Compiled (numba) max-pool backward: each gradient scattered to the element its window picked,
the same assignments (or additions, in the same order) as the NumPy reference
``PoolScatter`` in ``ops/nn_ops.py``, without its flat-index arrays (one int64 array of the
output's size for the planes, one for the sum, then NumPy's fancy-index assignment): 2x faster
on a CIFAR layer's pool.

Imported by ``nn_ops`` only for pools of at least ``nn_ops.POOL_FAST_MIN`` input elements and
only when ``gradwalk._fast.numba_njit()`` gives numba (never by ``import gradwalk``;
``GRADWALK_NO_NUMBA=1`` keeps it unimported). tests/test_conv_speedpaths.py checks both paths
bit for bit against each other and against PyTorch.

* ``scatter``: the backward, (P, H*W) from (P, OH*OW) gradients: ``0.0 + g`` into each picked
  element when the windows do not overlap, else each output position in turn adds into its
  element (``np.add.at``'s order).
"""
from numba import uint64 as _u

from .._fast import numba_njit

njit = numba_njit()
if njit is None:  # pragma: no cover - nn_ops imports this module only with numba on
    raise ImportError("gradwalk.ops._pool_fast needs numba (and GRADWALK_NO_NUMBA unset)")


@njit(cache=True)
def scatter(g, idx, out, disjoint):
    """False (nothing written) when an index falls outside its plane (a window of -inf whose
    first tap was padding): the reference then does what NumPy's indexing does."""
    p_, length = g.shape
    hw = out.shape[1]
    gf, jf, of = g.ravel(), idx.ravel(), out.ravel()
    for t in range(p_ * length):
        if _u(jf[t]) >= _u(hw):
            return False
    k = _u(0)
    for p in range(p_):
        plane = _u(p * hw)
        if disjoint:  # each element gets at most one value: 0.0 + g (a -0.0 becomes 0.0)
            for t in range(length):
                of[plane + _u(jf[k + _u(t)])] = gf[k + _u(t)] + 0.0
        else:  # each output position in turn adds into its element
            for t in range(length):
                of[plane + _u(jf[k + _u(t)])] += gf[k + _u(t)]
        k += _u(length)
    return True
