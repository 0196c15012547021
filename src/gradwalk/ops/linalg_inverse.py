"""The inverse and the log-determinant: ``inverse`` / ``linalg.inv`` (LinalgInvExBackward0) and
``slogdet`` / ``linalg.slogdet`` (LinalgSlogdetBackward0), on NumPy's LAPACK.

Both backward formulas are written with differentiable ops, so double backward works::

    d inv(A)      = -inv(A)^T  g  inv(A)^T
    d logabsdet   = g * inv(A)^T          (the sign's gradient is zero for real matrices)
"""
import numpy as np

from ._util import export
from .core import Op, apply_op


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``): a matrix the factorization or
    solve cannot handle (singular, not positive-definite)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


def _check_square(A, name):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.short_name}")


class LinalgInv(Op):
    name = "LinalgInvExBackward0"

    def forward(x):
        try:
            return np.asarray(np.linalg.inv(x), dtype=x.dtype)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.inv: The diagonal element 1 is zero, the inversion could not "
                               "be completed because the input matrix is singular.") from None

    def save(ctx, x, out):
        ctx.save_result("inverse", out)

    def backward(ctx, g):
        inv_t = ctx.inverse.transpose(-2, -1)
        return -(inv_t.matmul(g).matmul(inv_t)),

    def jvp(x, out, dx):
        return -(out.matmul(dx).matmul(out))


class LinalgSlogdet(Op):
    name = "LinalgSlogdetBackward0"

    def forward(x):
        sign, logabsdet = np.linalg.slogdet(x)
        return np.asarray(sign, dtype=x.dtype), np.asarray(logabsdet, dtype=x.dtype)

    def save(ctx, x, out):
        ctx.save(A=x)

    def backward(ctx, g_sign, g_logabsdet=None):
        if g_logabsdet is None:
            return None,
        inv_t = inv(ctx.A).transpose(-2, -1)
        return g_logabsdet.unsqueeze(-1).unsqueeze(-1) * inv_t,

    def jvp(A, out, dA):
        # d log|det A| = trace(A^-1 dA); a real sign has a zero tangent (as PyTorch's)
        from ..tensor import Tensor

        sign = Tensor._make(np.zeros_like(out[0]._data))
        return sign, (inv(A).transpose(-2, -1) * dA).sum((-2, -1))


@export("inverse")
def inv(input):
    _check_square(input, "linalg.inv")
    return apply_op(LinalgInv, (input,))


def _slogdet(A, name):
    from .. import return_types

    _check_square(A, "linalg.slogdet")
    sign, logabsdet = apply_op(LinalgSlogdet, (A,))
    return getattr(return_types, name)(sign, logabsdet)


@export()
def slogdet(input):
    return _slogdet(input, "slogdet")


def linalg_slogdet(A):
    return _slogdet(A, "linalg_slogdet")


@export(method=False)
def chain_matmul(*matrices):
    """``torch.chain_matmul`` (deprecated in PyTorch: ``linalg.multi_dot``): the product, left to right."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = matrices[0]
    for m in matrices[1:]:
        out = out.matmul(m)
    return out
