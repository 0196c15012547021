"""``torch.linalg``: the norms scripts use. Every one is a single ``LinalgVectorNorm`` node
(``ops/reduction.py``), as in PyTorch: ``linalg.norm(x)`` and ``matrix_norm(A)`` ('fro') are
vector norms over the flattened or the last two dimensions.

    >>> import gradwalk as torch
    >>> torch.linalg.norm(torch.tensor([[3., -4.], [1., 2.]], requires_grad=True))
    tensor(5.4772, grad_fn=<LinalgVectorNormBackward0>)
"""
from .ops._util import normalize_dims
from .ops.core import apply_op
from .ops.reduction import LinalgVectorNorm


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype.short_name}")
    if not (ord == float("inf") or ord > 0):
        raise NotImplementedError(f"gradwalk's linalg.vector_norm supports ord > 0 and inf, not {ord}")
    if dtype is not None:
        x = x.to(dtype)
    dims = normalize_dims(dim, x.ndim)
    return apply_op(LinalgVectorNorm, (x,), {"ord": ord, "dim": dims, "keepdim": keepdim})


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if ord != "fro":
        from .ops.linalg_more import matrix_norm_ord

        return matrix_norm_ord(A if dtype is None else A.to(dtype), ord, dim, keepdim)
    return vector_norm(A, 2, dim, keepdim, dtype=dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """A vector norm (1-D input, an int ``dim``, or no ``ord`` and no ``dim``: the flattened
    2-norm) or a matrix norm (2-D input or a pair of dims)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                               f"1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or (dim is not None and len(dim) == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def inv(A):
    """``torch.linalg.inv`` (``ops/linalg_inverse.py``)."""
    from .ops.linalg_inverse import inv as _inv

    return _inv(A)


def slogdet(A):
    """``torch.linalg.slogdet``: ``(sign, logabsdet)`` (``ops/linalg_inverse.py``)."""
    from .ops.linalg_inverse import linalg_slogdet

    return linalg_slogdet(A)


# the rest of torch.linalg (ops/linalg_more.py)
from .ops.linalg_more import (cholesky_ex, cond, eigh, eigvalsh, inv_ex, lstsq, matrix_rank,  # noqa: E402,F401
                              multi_dot, solve_ex, solve_triangular, svdvals, tensorinv, tensorsolve,
                              vander, vecdot)
from .ops.linalg_more import det, matrix_exp, matrix_power  # noqa: E402,F401
from .ops.linalg_more import (linalg_cholesky as cholesky, linalg_cross as cross,  # noqa: E402,F401
                              linalg_diagonal as diagonal, linalg_pinv as pinv, linalg_qr as qr,
                              linalg_solve as solve, svd_linalg as svd)
from .ops.linalg import matmul  # noqa: E402,F401
from .ops.linalg_inverse import LinAlgError  # noqa: E402,F401
from .ops.linalg_more import (linalg_lu as lu, linalg_lu_solve as lu_solve, lu_factor,  # noqa: E402,F401
                              lu_factor_ex)
