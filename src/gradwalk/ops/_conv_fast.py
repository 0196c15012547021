"""Compiled (numba) im2col and col2im for convolution: the same copies and the same additions as
the NumPy reference in ``ops/nn_ops.py``, in one pass instead of one strided NumPy call per kernel
tap (those run one short inner loop per output row, 16 elements on a CIFAR layer).

Imported by ``nn_ops`` only for layers of at least ``nn_ops.CONV_FAST_MIN`` column entries and only
when ``gradwalk._fast.numba_njit()`` gives numba (never by ``import gradwalk``;
``GRADWALK_NO_NUMBA=1`` keeps it unimported). tests/test_conv_speedpaths.py checks every kernel
bit for bit against the reference and the layers against PyTorch.

Every kernel reads or writes a zero-padded, C-contiguous (N, C, Hp, Wp) image through flat indices
kept unsigned: numba wraps negative indices around, and that check on every element stops LLVM
from vectorizing the copies (unsigned, the stride-1 rows become vector moves: 2-5x faster).

* ``pad``: the zero-padded copy of the input (``np.pad`` took 3-4x as long).
* ``patches``: im2col for the forward, (N, Cg, kh, kw, OH, OW) of the channels ``c0 .. c0 + Cg``.
* ``rows``: im2col with one row per output position, (N*OH*OW, Cg*kh*kw), for the weight gradient.
* ``col2im``: adds (N, Cg, kh, kw, OH, OW) back into the padded image, kernel taps in row-major
  order, each pixel's sum starting from the 0.0 already there: the reference's tap-by-tap adds.
"""
import numpy as np
from numba import uint64 as _u

from .._fast import numba_njit

njit = numba_njit()
if njit is None:  # pragma: no cover - nn_ops imports this module only with numba on
    raise ImportError("gradwalk.ops._conv_fast needs numba (and GRADWALK_NO_NUMBA unset)")


@njit(cache=True)
def pad(x, out, ph, pw):
    n_, c_, h, w = x.shape
    hp, wp = out.shape[2], out.shape[3]
    of = out.ravel()
    o = _u(0)
    for n in range(n_):
        for c in range(c_):
            for y in range(hp):
                iy = y - ph
                if iy < 0 or iy >= h:
                    for t in range(wp):
                        of[o + _u(t)] = 0
                else:
                    src = x[n, c, iy]
                    for t in range(pw):
                        of[o + _u(t)] = 0
                    for t in range(w):
                        of[o + _u(pw + t)] = src[t]
                    for t in range(pw + w, wp):
                        of[o + _u(t)] = 0
                o += _u(wp)


@njit(cache=True)
def patches(xp, c0, out, sh, sw, dh, dw):
    n_, c_all, hp, wp = xp.shape
    cg, kh, kw, oh, ow = out.shape[1], out.shape[2], out.shape[3], out.shape[4], out.shape[5]
    xf, of = xp.ravel(), out.ravel()
    o = _u(0)
    for n in range(n_):
        for c in range(cg):
            plane = (n * c_all + c0 + c) * hp * wp
            for i in range(kh):
                for j in range(kw):
                    for y in range(oh):
                        src = _u(plane + (y * sh + i * dh) * wp + j * dw)
                        if sw == 1:
                            for x in range(ow):
                                of[o + _u(x)] = xf[src + _u(x)]
                        else:
                            for x in range(ow):
                                of[o + _u(x)] = xf[src + _u(x * sw)]
                        o += _u(ow)


@njit(cache=True)
def rows(xp, c0, out, oh, ow, kh, kw, sh, sw, dh, dw):
    n_, c_all, hp, wp = xp.shape
    k_all = out.shape[1]
    cg = k_all // (kh * kw)
    xf, of = xp.ravel(), out.ravel()
    # one output row at a time: its (Cg*kh*kw, OW) patches by contiguous copies into a tile that
    # stays in L1, then written out transposed, (OW, Cg*kh*kw), in one sequential run (gathering
    # each output position's column straight from the image was 2x slower)
    tile = np.empty(ow * k_all, dtype=out.dtype)
    o = _u(0)
    for n in range(n_):
        for y in range(oh):
            k = _u(0)
            for c in range(cg):
                for i in range(kh):
                    row = ((n * c_all + c0 + c) * hp + y * sh + i * dh) * wp
                    for j in range(kw):
                        src = _u(row + j * dw)
                        if sw == 1:
                            for x in range(ow):
                                tile[k + _u(x)] = xf[src + _u(x)]
                        else:
                            for x in range(ow):
                                tile[k + _u(x)] = xf[src + _u(x * sw)]
                        k += _u(ow)
            for x in range(ow):
                for t in range(k_all):
                    of[o + _u(t)] = tile[_u(t * ow + x)]
                o += _u(k_all)


@njit(cache=True)
def col2im(dcols, gp, c0, sh, sw, dh, dw):
    n_, cg, kh, kw, oh, ow = dcols.shape
    c_all, hp, wp = gp.shape[1], gp.shape[2], gp.shape[3]
    df, gf = dcols.ravel(), gp.ravel()
    o = _u(0)
    for n in range(n_):
        for c in range(cg):
            plane = (n * c_all + c0 + c) * hp * wp
            for i in range(kh):
                for j in range(kw):
                    for y in range(oh):
                        dst = _u(plane + (y * sh + i * dh) * wp + j * dw)
                        if sw == 1:
                            for x in range(ow):
                                gf[dst + _u(x)] += df[o + _u(x)]
                        else:
                            for x in range(ow):
                                gf[dst + _u(x * sw)] += df[o + _u(x)]
                        o += _u(ow)
