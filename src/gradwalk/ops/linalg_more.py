"""Linear algebra beyond the inverse: determinants, powers and exponentials, factorizations
(Cholesky, QR, eigh, SVD), triangular and general solves, the pseudo-inverse, on NumPy's LAPACK.

Each factorization or solve is one node, named as PyTorch names it, with the backward formula of
PyTorch's ``FunctionsManual.cpp`` written in differentiable ops (so double backward works)::

    det          gA = g det(A) A^-H
    cholesky     gA = L^-H Phi(L^H gL) L^-1, symmetrized        (Murray 2016)
    solve        gB = A^-H gX,  gA = -gB X^H
    eigh         gA = V ((skew(V^H gV) / E) + diag(gL)) V^H,  E_ij = L_j - L_i
    svd          gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H + the parts off the span
    pinv, qr, cholesky_solve, cholesky_inverse, matrix_exp: as FunctionsManual.

The composites (logdet, matrix_power, multi_dot, vecdot, vander, cond, ...) are built on these and
on matmul, as ATen builds them, so their nodes are the ones PyTorch records.
"""
import warnings

import numpy as np

from ._util import export, normalize_dim
from .core import Op, apply_op
from .linalg_inverse import LinAlgError, _check_square, inv


def _make(data):
    from ..tensor import Tensor

    return Tensor._make(np.asarray(data))


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _check_float(A, name):
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype.short_name}")


def _check_matrix(A, name, arg="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    _check_float(A, name)


# ---------------------------------------------------------------- determinant

def _adjugate_t(a):
    """The transposed adjugate (d det / dA) from an SVD: right for singular matrices too."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return _mT((_mT(vh) * others[..., None, :]) @ _mT(u) * sign[..., None, None])


class LinalgDet(Op):
    name = "LinalgDetBackward0"

    def forward(A):
        return np.asarray(np.linalg.det(A), dtype=A.dtype)

    def save(ctx, A, out):
        ctx.save(A=A)
        ctx.save_result("result", out)

    def backward(ctx, g):
        A, det = ctx.A, ctx.result
        if (det._data == 0).any():  # singular: the adjugate (not differentiable again)
            return g.unsqueeze(-1).unsqueeze(-1) * _make(_adjugate_t(A._data).astype(A._data.dtype)),
        return (g * det).unsqueeze(-1).unsqueeze(-1) * inv(A).mT,

    def jvp(A, out, dA):
        return out * (inv(A) * dA.mT).sum((-2, -1))


@export("det")
def det(input):
    _check_square(input, "linalg.det")
    return apply_op(LinalgDet, (input,))


@export()
def logdet(input):
    """ATen's composite: ``where(sign == -1, nan, logabsdet)`` (WhereBackward0)."""
    _check_square(input, "logdet")
    from .functions import where

    sign, logabsdet = input.slogdet()
    return where(sign == -1, float("nan"), logabsdet)


# ---------------------------------------------------------------- powers and the exponential

@export()
def matrix_power(input, n):
    """ATen's linalg_matrix_power: a clone, one or two matmuls, or n's binary decomposition."""
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input.shape[-2] if input.ndim >= 2 else 1} by {input.shape[-1]} matrices")
    a = input
    if n == 0:
        from .factories import eye

        return a.clone().copy_(eye(a.shape[-1], dtype=a.dtype).expand_as(a))  # (CopyBackwards)
    if n < 0:
        a, n = inv(a), -n
    if n == 1:
        return a.clone()
    if n == 2:
        return a.matmul(a)
    if n == 3:
        return a.matmul(a).matmul(a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else z.matmul(z)
        if bit:
            result = z if result is None else result.matmul(z)
    return result


def _expm(a):
    """exp(A) by scaling and squaring with a degree-18 Taylor polynomial (no SciPy)."""
    norm = np.abs(a).sum(axis=-2).max(axis=-1).max() if a.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 0.25)))) if norm > 0.25 else 0
    x = a / (2.0 ** s)
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    result = eye.copy()
    for k in range(18, 0, -1):  # Horner: I + x/1 (I + x/2 (I + ...))
        result = eye + (x @ result) / k
    for _ in range(s):
        result = result @ result
    return result.astype(a.dtype, copy=False)


class LinalgMatrixExp(Op):
    name = "LinalgMatrixExpBackward0"

    def forward(A):
        return _expm(A)

    def save(ctx, A, out):
        ctx.save(self=A)

    def backward(ctx, g):
        # FunctionsManual's differential_analytic_matrix_function: exp of [[A^H, g], [0, A^H]]
        from .functions import cat

        A = ctx.self.mH
        n = A.shape[-1]
        top = cat([A, g], -1)
        bottom = cat([g.new_zeros(g.shape), A], -1)
        big = apply_op(LinalgMatrixExp, (cat([top, bottom], -2),))
        return big.narrow(-2, 0, n).narrow(-1, n, n),


@export()
def matrix_exp(input):
    _check_square(input, "linalg.matrix_exp")
    return apply_op(LinalgMatrixExp, (input,))


# ---------------------------------------------------------------- pseudo-inverse

class LinalgPinv(Op):
    name = "LinalgPinvBackward0"

    def forward(A, atol, rtol, hermitian):
        u, s, vh = np.linalg.svd(A, full_matrices=False, hermitian=hermitian)
        top = s.max(axis=-1, keepdims=True) if s.size else np.zeros(s.shape[:-1] + (1,), s.dtype)
        cutoff = np.maximum(atol, rtol * top)
        sinv = np.where(s > cutoff, 1 / np.where(s > cutoff, s, 1), 0)
        return ((_mT(vh) * sinv[..., None, :]) @ _mT(u)).astype(A.dtype, copy=False)

    def save(ctx, A, out, atol, rtol, hermitian):
        ctx.save(self=A)
        ctx.save_result("result", out)

    def backward(ctx, grad):
        return _pinv_backward(grad, ctx.result, ctx.self),


def _pinv_backward(grad, pinvA, A):
    if True:
        m, n = A.shape[-2], A.shape[-1]
        pinvAh, gradh = pinvA.mH, grad.mH
        if m <= n:
            K = gradh.matmul(pinvA)
            KpinvAh = K.matmul(pinvAh)
            return (-(pinvA.matmul(K)).mH + KpinvAh - A.matmul(pinvA).matmul(KpinvAh)
                    + pinvAh.matmul(pinvA).matmul(gradh - K.matmul(A)))
        K = pinvA.matmul(gradh)
        pinvAhK = pinvAh.matmul(K)
        return (-(K.matmul(pinvA)).mH + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh) + pinvAhK
                - pinvAhK.matmul(pinvA).matmul(A))


def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    _check_matrix(A, "linalg.pinv")
    eps = np.finfo(A._data.dtype).eps
    if rtol is None:
        rtol = eps * max(A.shape[-2], A.shape[-1]) if atol is None or atol == 0 else 0.0
    return apply_op(LinalgPinv, (A,), {"atol": 0.0 if atol is None else float(atol), "rtol": float(rtol),
                                       "hermitian": hermitian})


@export()
def pinverse(input, rcond=1e-15):
    return linalg_pinv(input, rtol=rcond)


# ---------------------------------------------------------------- triangular solves

def _tri_solve(A, B, upper, left, unitriangular):
    """X with op(A) X = B (left) or X A = B (right), A's other triangle ignored."""
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        T = T.copy()
        idx = np.arange(T.shape[-1])
        T[..., idx, idx] = 1
    if left:
        return np.linalg.solve(T, B)
    return _mT(np.linalg.solve(_mT(T), _mT(B)))


class LinalgSolveTriangular(Op):
    name = "LinalgSolveTriangularBackward0"
    saves_attrs = ("upper", "left", "unitriangular")

    def forward(A, B, upper, left, unitriangular):
        return _tri_solve(A, B, upper, left, unitriangular).astype(np.result_type(A, B), copy=False)

    def save(ctx, A, B, out, upper, left, unitriangular):
        ctx.save(self=A)
        ctx.save_result("result", out)

    def backward(ctx, gX):
        A, X, a = ctx.self, ctx.result, ctx._attrs
        upper, left, uni = a["upper"], a["left"], a["unitriangular"]
        need = ctx.needs_input_grad
        gB = solve_triangular(A.mH, gX, upper=not upper, left=left, unitriangular=uni)
        gA = None
        if need[0]:
            gA = -gB.matmul(X.mH) if left else -X.mH.matmul(gB)
            gA = gA.triu(1 if uni else 0) if upper else gA.tril(-1 if uni else 0)
            gA = gA.sum_to_size(A.shape) if tuple(gA.shape) != tuple(A.shape) else gA
        if need[1] and tuple(gB.shape) != tuple(ctx._attrs.get("B_shape", gB.shape)):
            gB = gB.sum_to_size(ctx._attrs["B_shape"])
        return gA, gB if need[1] else None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    if A.ndim < 2 or B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor "
                           f"{'A' if A.ndim < 2 else 'B'} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    k = B.shape[-2] if left else B.shape[-1]
    if k != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    _check_float(A, "linalg.solve_triangular")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype.short_name} and B of type {B.dtype.short_name} instead")
    return apply_op(LinalgSolveTriangular, (A, B), {"upper": upper, "left": left, "unitriangular": unitriangular})


class TriangularSolve(Op):
    name = "TriangularSolveBackward0"
    saves_attrs = ("upper", "transpose", "unitriangular")

    def forward(b, A, upper, transpose, unitriangular):
        M = np.triu(A) if upper else np.tril(A)
        X = _tri_solve(_mT(M) if transpose else M, b, upper != transpose, True, unitriangular)
        return X.astype(A.dtype, copy=False), np.broadcast_to(A, X.shape[:-2] + A.shape[-2:]).copy()

    def save(ctx, b, A, out, upper, transpose, unitriangular):
        ctx.save(A=A)
        ctx.save_result("solution", out[0])

    def backward(ctx, g_x, g_m=None):
        A, x, a = ctx.A, ctx.solution, ctx._attrs
        upper, transpose, uni = a["upper"], a["transpose"], a["unitriangular"]
        need = ctx.needs_input_grad
        grad_b = grad_a = None
        if g_x is not None:
            grad_b = triangular_solve(g_x, A, upper, not transpose, uni).solution
            if need[1]:
                grad_a = -x.matmul(grad_b.mH) if transpose else -grad_b.matmul(x.mH)
                grad_a = grad_a.triu(int(uni)) if upper else grad_a.tril(-int(uni))
        elif need[0]:
            grad_b = x.new_zeros(x.shape)  # (as PyTorch: a zero gradient, not none)
        if need[1] and g_m is not None:  # the cloned coefficient's gradient, all of it
            grad_a = g_m if grad_a is None else grad_a + g_m
        return grad_b if need[0] else None, grad_a


@export()
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    from .. import return_types

    _deprecated("triangular_solve", "torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangularand will be removed in a future PyTorch release.\n"
                "torch.linalg.solve_triangular has its arguments reversed and does not return a copy of one of "
                "the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
                "torch.linalg.solve_triangular(A, B).")
    if input.ndim < 2 or A.ndim < 2:
        raise RuntimeError("torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{input.ndim} dimensions instead" if input.ndim < 2 else
                           "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
                           f"{A.ndim} dimensions instead")
    solution, coeff = apply_op(TriangularSolve, (input, A), {"upper": upper, "transpose": transpose,
                                                             "unitriangular": unitriangular})
    return return_types.triangular_solve(solution, coeff)


# ---------------------------------------------------------------- Cholesky

def _cholesky_array(A, name):
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        mats = A.reshape(-1, A.shape[-2], A.shape[-1])
        for b, mat in enumerate(mats):
            for order in range(1, mat.shape[-1] + 1):
                try:
                    np.linalg.cholesky(mat[:order, :order])
                except np.linalg.LinAlgError:
                    where = f"(Batch element {b}): " if A.ndim > 2 else ""
                    raise LinAlgError(f"{name}: {where}The factorization could not be completed because the "
                                       f"input is not positive-definite (the leading minor of order {order} is "
                                       "not positive-definite).") from None
        raise


def _cholesky_backward(gL, upper, L):
    if upper:
        L, gL = L.mH, gL.mH
    gA = L.mH.matmul(gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = solve_triangular(L.mH, gA, upper=True, left=True)
    return solve_triangular(L, gA, upper=False, left=False)


class LinalgCholeskyEx(Op):
    name = "LinalgCholeskyExBackward0"
    saves_attrs = ("upper",)

    def forward(A, upper):
        L = _cholesky_array(A, "linalg.cholesky").astype(A.dtype, copy=False)
        return (np.ascontiguousarray(_mT(L)) if upper else L), np.zeros(A.shape[:-2], np.int32)

    def save(ctx, A, out, upper):
        ctx.save_result("L", out[0])

    def backward(ctx, gL, g_info=None):
        return _cholesky_backward(gL, ctx._attrs["upper"], ctx.L),


class Cholesky(LinalgCholeskyEx):
    name = "CholeskyBackward0"

    def forward(A, upper):
        L = _cholesky_array(A, "cholesky").astype(A.dtype, copy=False)
        return np.ascontiguousarray(_mT(L)) if upper else L

    def save(ctx, A, out, upper):
        ctx.save_result("result", out)

    def backward(ctx, gL):
        return _cholesky_backward(gL, ctx._attrs["upper"], ctx.result),


def cholesky_ex(A, *, upper=False, check_errors=False):
    from .. import return_types

    _check_square(A, "linalg.cholesky")
    L, info = apply_op(LinalgCholeskyEx, (A,), {"upper": upper})
    return return_types.linalg_cholesky_ex(L, info)


def linalg_cholesky(A, *, upper=False):
    return cholesky_ex(A, upper=upper).L


_warned = set()  # PyTorch's TORCH_WARN_ONCE: each deprecated name warns once per process


def _deprecated(name, message):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)


@export()
def cholesky(input, upper=False):
    if "cholesky" not in _warned:
        _warned.add("cholesky")
        warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
                      "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
                      "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
                      "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
                      "for all valid (symmetric positive definite) inputs.", UserWarning, stacklevel=2)
    _check_square(input, "cholesky")
    return apply_op(Cholesky, (input,), {"upper": upper})


class CholeskySolve(Op):
    name = "CholeskySolveBackward0"
    saves_attrs = ("upper",)

    def forward(B, L, upper):
        Lo = _mT(L) if upper else L
        Lo = np.tril(Lo)
        return np.linalg.solve(_mT(Lo), np.linalg.solve(Lo, B)).astype(B.dtype, copy=False)

    def save(ctx, B, L, out, upper):
        ctx.save(input2=L)
        ctx.save_result("result", out)

    def backward(ctx, g):
        L, X, upper = ctx.input2, ctx.result, ctx._attrs["upper"]
        need = ctx.needs_input_grad
        grad_self = g.cholesky_solve(L, upper)
        grad_L = None
        if need[1]:
            common = grad_self.matmul(X.mH)
            common = common + common.mH
            grad_L = -L.matmul(common) if upper else -common.matmul(L)
        return grad_self if need[0] else None, grad_L


@export()
def cholesky_solve(input, input2, upper=False):
    if input.ndim < 2 or input2.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead"
                           if input.ndim < 2 else
                           f"u should have at least 2 dimensions, but has {input2.ndim} dimensions instead")
    return apply_op(CholeskySolve, (input, input2), {"upper": upper})


class CholeskyInverse(Op):
    name = "CholeskyInverseBackward0"
    saves_attrs = ("upper",)

    def forward(L, upper):
        T = np.triu(L) if upper else np.tril(L)
        A = _mT(T) @ T if upper else T @ _mT(T)
        return np.linalg.inv(A).astype(L.dtype, copy=False)

    def save(ctx, L, out, upper):
        ctx.save(self=L)
        ctx.save_result("result", out)

    def backward(ctx, g):
        L, inverse = ctx.self, ctx.result
        common = inverse.matmul((g + g.mH).matmul(inverse))
        return -L.matmul(common) if ctx._attrs["upper"] else -common.matmul(L),


@export()
def cholesky_inverse(input, upper=False):
    _check_square(input, "cholesky_inverse")
    return apply_op(CholeskyInverse, (input,), {"upper": upper})


# ---------------------------------------------------------------- general solve

class LinalgSolveEx(Op):
    name = "LinalgSolveExBackward0"
    saves_attrs = ("left",)

    def forward(A, B, left, vector):
        try:
            if vector:
                X = np.linalg.solve(A, B[..., None])[..., 0]
            elif left:
                X = np.linalg.solve(A, B)
            else:
                X = _mT(np.linalg.solve(_mT(A), _mT(B)))
        except np.linalg.LinAlgError:
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
        return X.astype(A.dtype, copy=False), np.zeros(A.shape[:-2], np.int32)

    def save(ctx, A, B, out, left, vector):
        ctx.save(A=A)
        ctx.save_result("result", out[0])
        ctx._attrs["vector"] = vector
        ctx._attrs["B_shape"] = tuple(B.shape)

    def backward(ctx, gX, g_info=None):
        A, X, a = ctx.A, ctx.result, ctx._attrs
        need = ctx.needs_input_grad
        gB = linalg_solve(A.mH, gX, left=a["left"])
        gA = None
        if need[0]:
            if a["vector"]:
                gA = -gB.unsqueeze(-1).matmul(X.unsqueeze(-2))
            else:
                gA = -gB.matmul(X.mH) if a["left"] else -X.mH.matmul(gB)
            if tuple(gA.shape) != tuple(A.shape):
                gA = gA.sum_to_size(A.shape)
        if need[1] and tuple(gB.shape) != a["B_shape"]:
            gB = gB.sum_to_size(a["B_shape"])
        return gA, gB if need[1] else None


def solve_ex(A, B, *, left=True, check_errors=False):
    from .. import return_types

    _check_square(A, "linalg.solve")
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    n = A.shape[-1]
    k = B.shape[-1] if vector else (B.shape[-2] if left else B.shape[-1])
    if k != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2] if B.ndim > 1 else B.shape[-1]}x{B.shape[-1] if B.ndim > 1 else 1})")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype.short_name} and B of type {B.dtype.short_name} instead")
    X, info = apply_op(LinalgSolveEx, (A, B), {"left": left, "vector": vector})
    return return_types.linalg_solve_ex(X, info)


def linalg_solve(A, B, *, left=True):
    return solve_ex(A, B, left=left).result


# ---------------------------------------------------------------- QR

class LinalgQr(Op):
    name = "LinalgQrBackward0"
    saves_attrs = ("mode",)

    def forward(A, mode):
        if mode == "r":
            return np.zeros((0,), A.dtype), np.linalg.qr(A, mode="r").astype(A.dtype, copy=False)
        Q, R = np.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
        return Q.astype(A.dtype, copy=False), R.astype(A.dtype, copy=False)

    def save(ctx, A, out, mode):
        ctx.save_result("Q", out[0])
        ctx.save_result("R", out[1])

    def backward(ctx, gQ, gR=None):
        Q, R, mode = ctx.Q, ctx.R, ctx._attrs["mode"]
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                               "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                               "differentiate through linalg.qr.")
        m, n = Q.shape[-2], R.shape[-1]
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")
        if gQ is not None and gR is not None:
            gA = gR.matmul(R.mH) - Q.mH.matmul(gQ)
        elif gQ is not None:
            gA = -Q.mH.matmul(gQ)
        else:
            gA = gR.matmul(R.mH)
        if m >= n:
            t = gA.triu()
            sym = t + t.mH
            sym = sym - 0.5 * sym.diagonal(0, -2, -1).diag_embed()
            gA = Q.matmul(sym)
            if gQ is not None:
                gA = gA + gQ
            return solve_triangular(R.mH, gA, upper=False, left=False),
        raise NotImplementedError("gradwalk: the derivative of linalg.qr of a wide matrix (nrows < ncols) "
                                  "is not implemented")


def linalg_qr(A, mode="reduced"):
    from .. import return_types

    _check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    Q, R = apply_op(LinalgQr, (A,), {"mode": mode})
    return return_types.linalg_qr(Q, R)


@export()
def qr(input, some=True):
    from .. import return_types

    _deprecated("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
                "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
                "'complete')")
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return return_types.qr(Q, R)


# ---------------------------------------------------------------- symmetric eigendecomposition

class LinalgEigh(Op):
    name = "LinalgEighBackward0"

    def forward(A, UPLO):
        L, V = np.linalg.eigh(A, UPLO=UPLO)
        return L.astype(A.dtype, copy=False), V.astype(A.dtype, copy=False)

    def save(ctx, A, out, UPLO):
        ctx.save_result("eigenvalues", out[0])
        ctx.save_result("eigenvectors", out[1])

    def backward(ctx, gL, gV=None):
        L, V = ctx.eigenvalues, ctx.eigenvectors
        if gV is None:
            return V.matmul(gL.unsqueeze(-1) * V.mH),
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        E = E + _eye_like(E)  # the diagonal of E is 1 (its numerator there is 0 or gL)
        VhgV = V.mH.matmul(gV)
        VhgV = 0.5 * (VhgV - VhgV.mH)
        gA = VhgV / E if gL is None else (VhgV + gL.diag_embed()) / E
        return V.matmul(gA.matmul(V.mH)),


def _eye_like(E):
    from .factories import eye

    return eye(E.shape[-1], dtype=E.dtype)


def eigh(A, UPLO="L"):
    from .. import return_types

    _check_square(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    L, V = apply_op(LinalgEigh, (A,), {"UPLO": UPLO})
    return return_types.linalg_eigh(L, V)


def eigvalsh(A, UPLO="L"):
    return eigh(A, UPLO).eigenvalues


# ---------------------------------------------------------------- SVD

class LinalgSvd(Op):
    name = "LinalgSvdBackward0"

    def forward(A, full_matrices, compute_uv):
        if not compute_uv:
            S = np.linalg.svd(A, compute_uv=False)
            return np.zeros((0,), A.dtype), S.astype(A.dtype, copy=False), np.zeros((0,), A.dtype)
        U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
        return U.astype(A.dtype, copy=False), S.astype(A.dtype, copy=False), Vh.astype(A.dtype, copy=False)

    def save(ctx, A, out, full_matrices, compute_uv):
        if compute_uv:
            ctx.save_result("U", out[0])
            ctx.save_result("Vh", out[2])
        else:  # svdvals: PyTorch's node computes U and V for backward; so does this one
            U, _, Vh = np.linalg.svd(A._data, full_matrices=False)
            ctx.save(U=_make(U.astype(A._data.dtype)), Vh=_make(Vh.astype(A._data.dtype)))
        ctx.save_result("S", out[1])

    def backward(ctx, gU, gS=None, gVh=None):
        U, S, Vh = ctx.U, ctx.S, ctx.Vh
        k = S.shape[-1]
        if U.shape[-1] != k:  # full_matrices: only the first k columns carry a gradient
            U = U.narrow(-1, 0, k)
            gU = None if gU is None else gU.narrow(-1, 0, k)
        if Vh.shape[-2] != k:
            Vh = Vh.narrow(-2, 0, k)
            gVh = None if gVh is None else gVh.narrow(-2, 0, k)
        m, n = U.shape[-2], Vh.shape[-1]
        if gU is None and gVh is None:
            if gS is None:
                return None,
            return (U.matmul(gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)).matmul(Vh)),
        V = Vh.mH
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
        E = E + _eye_like(E)
        terms = []
        if gU is not None:
            UhgU = U.mH.matmul(gU)
            terms.append((UhgU - UhgU.mH) * S.unsqueeze(-2))
        if gVh is not None:
            VhgV = V.mH.matmul(gVh.mH)
            terms.append(S.unsqueeze(-1) * (VhgV - VhgV.mH))
        gA = (terms[0] if len(terms) == 1 else terms[0] + terms[1]) / E
        if gS is not None:
            gA = gA + gS.diag_embed()
        if m > n and gU is not None:
            gA = U.matmul(gA)
            gUSinv = gU / S.unsqueeze(-2)
            gA = gA + gUSinv - U.matmul(U.mH.matmul(gUSinv))
            return gA.matmul(Vh),
        if m < n and gVh is not None:
            gA = gA.matmul(Vh)
            SinvgVh = gVh / S.unsqueeze(-1)
            gA = gA + SinvgVh - SinvgVh.matmul(V).matmul(Vh)
            return U.matmul(gA),
        return (U.matmul(gA.matmul(Vh)) if m >= n else U.matmul(gA).matmul(Vh)),


def svd_linalg(A, full_matrices=True):
    from .. import return_types

    _check_matrix(A, "linalg.svd")
    U, S, Vh = apply_op(LinalgSvd, (A,), {"full_matrices": full_matrices, "compute_uv": True})
    return return_types.linalg_svd(U, S, Vh)


def svdvals(A):
    _check_matrix(A, "linalg.svdvals")
    return apply_op(LinalgSvd, (A,), {"full_matrices": False, "compute_uv": False})[1]


@export()
def svd(input, some=True, compute_uv=True):
    """``torch.svd`` (deprecated in PyTorch): ``(U, S, V)``, V not transposed."""
    from .. import return_types

    U, S, Vh = svd_linalg(input, full_matrices=not some)
    if not compute_uv:
        return return_types.svd(U.new_zeros(U.shape), S, Vh.new_zeros(Vh.shape))
    return return_types.svd(U, S, Vh.mH)


# ---------------------------------------------------------------- composites of torch.linalg

def multi_dot(tensors):
    """Left to right (ATen orders the products by cost; the values agree to rounding)."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = first.unsqueeze(0)
    if last.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    out = mats[0]
    for m in mats[1:]:
        out = out.mm(m)
    shape = ([first.shape[0]] if first.ndim == 2 else []) + ([last.shape[-1]] if last.ndim == 2 else [])
    return out.view(shape)


def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


def vander(x, N=None):
    from .functions import cat

    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must be at least 1-dimensional.")
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise RuntimeError("N must be greater than 1.")
    ones = x.new_ones(x.shape + (1,))
    if n == 1:
        return ones
    return cat([ones, x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)], -1)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    _check_matrix(A, "linalg.matrix_rank")
    S = np.linalg.svd(A._data, compute_uv=False)
    eps = np.finfo(A._data.dtype).eps
    top = S.max(axis=-1, keepdims=True) if S.size else 0
    if tol is not None:
        atol, rtol = tol, 0.0
    if rtol is None:
        rtol = eps * max(A.shape[-2:]) if atol is None or atol == 0 else 0.0
    cutoff = np.maximum(0.0 if atol is None else atol, rtol * top)
    return _make((S > cutoff).sum(axis=-1).astype(np.int64))


def cond(A, p=None):
    from ..linalg import matrix_norm

    if p is None or p in (2, -2):
        s = svdvals(A)
        s_max, s_min = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (s_min / s_max if p == -2 else s_max / s_min).squeeze(-1)
    return (matrix_norm(A, p) * matrix_norm(inv(A), p)).nan_to_num(float("inf"))  # singular: inf


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def linalg_cross(input, other, *, dim=-1):
    d = normalize_dim(dim, input.ndim)
    if input.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} "
                           f"and {other.shape[d] if other.ndim > d else 0}")
    return apply_op(LinalgCross, (input, other), {"dim": d})


class LinalgCross(Op):
    name = "LinalgCrossBackward0"
    saves_attrs = ("dim",)

    def forward(a, b, dim):
        return np.cross(a, b, axis=dim)

    def save(ctx, a, b, out, dim):
        need = ctx.needs_input_grad
        ctx.save(self=a if need[1] else None, other=b if need[0] else None)

    def backward(ctx, g):
        need, d = ctx.needs_input_grad, ctx._attrs["dim"]
        return (linalg_cross(ctx.other, g, dim=d) if need[0] else None,
                linalg_cross(g, ctx.self, dim=d) if need[1] else None)


def inv_ex(A, *, check_errors=False):
    from .. import return_types

    return return_types.linalg_inv_ex(inv(A), _make(np.zeros(A.shape[:-2], np.int32)))


def tensorinv(A, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = int(np.prod(A.shape[:ind]))
    cols = int(np.prod(A.shape[ind:]))
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(out_shape)


def tensorsolve(A, B, dims=None):
    if dims is not None:
        nd = A.ndim
        A = A.permute([i for i in range(nd) if i not in [d % nd for d in dims]] + [d % nd for d in dims])
    rows = B.numel()
    x_shape = tuple(A.shape[B.ndim:])
    return linalg_solve(A.reshape(rows, -1), B.reshape(rows)).reshape(x_shape)


class LinalgLstsq(Op):
    """The least-squares solution (through the pseudo-inverse: full-rank A gives LAPACK's gelsy
    solution); backward is FunctionsManual's linalg_lstsq_backward."""

    name = "LinalgLstsqBackward0"

    def forward(A, B, vector):
        pinv = LinalgPinv.forward(A, 0.0, np.finfo(A.dtype).eps * max(A.shape[-2:]), False)
        X = (pinv @ B[..., None])[..., 0] if vector else pinv @ B
        return X.astype(A.dtype, copy=False)

    def save(ctx, A, B, out, vector):
        ctx.save(self=A, b=B)
        ctx._attrs = {"vector": vector}

    def backward(ctx, gX):
        A, B, vector = ctx.self, ctx.b, ctx._attrs["vector"]
        need = ctx.needs_input_grad
        if vector:
            gX, B = gX.unsqueeze(-1), B.unsqueeze(-1)
        pinvA = linalg_pinv(A)
        gA = _pinv_backward(gX.matmul(B.mH), pinvA, A) if need[0] else None
        gB = pinvA.mH.matmul(gX) if need[1] else None
        if vector and gB is not None:
            gB = gB.squeeze(-1)
        return gA, gB


def lstsq(A, B, rcond=None, *, driver=None):
    from .. import return_types

    _check_matrix(A, "linalg.lstsq")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    X = apply_op(LinalgLstsq, (A, B), {"vector": vector})
    empty = A.new_zeros((0,))
    return return_types.linalg_lstsq(X, empty, _make(np.zeros((0,), np.int64)), empty)


def matrix_power_linalg(A, n):
    return matrix_power(A, n)



# ---------------------------------------------------------------- LU

def _lu_array(A):
    """LAPACK's getrf: partial pivoting, unit lower L and U packed in one matrix, 1-based pivots
    (square matrices; one column at a time, each step vectorised over the batch)."""
    LU = np.array(A, dtype=A.dtype, copy=True)
    n = LU.shape[-1]
    batch = LU.reshape(-1, n, n)
    pivots = np.zeros((batch.shape[0], n), np.int32)
    rows = np.arange(batch.shape[0])
    for k in range(n):
        p = k + np.argmax(np.abs(batch[:, k:, k]), axis=1)
        pivots[:, k] = p + 1
        top, piv = batch[rows, k].copy(), batch[rows, p].copy()
        batch[rows, k], batch[rows, p] = piv, top
        diag = batch[:, k, k]
        safe = np.where(diag == 0, 1, diag)
        batch[:, k + 1:, k] /= safe[:, None]
        batch[:, k + 1:, k + 1:] -= batch[:, k + 1:, k, None] * batch[:, k, None, k + 1:]
    return LU, pivots.reshape(A.shape[:-2] + (n,))


def _unpack_arrays(LU, pivots):
    n = LU.shape[-1]
    L = np.tril(LU, -1) + np.eye(n, dtype=LU.dtype)
    U = np.triu(LU)
    perm = np.broadcast_to(np.arange(n), pivots.shape).copy()
    flat_perm, flat_piv = perm.reshape(-1, n), pivots.reshape(-1, n) - 1
    for b in range(flat_perm.shape[0]):
        for k in range(n):
            j = flat_piv[b, k]
            flat_perm[b, k], flat_perm[b, j] = flat_perm[b, j], flat_perm[b, k]
    P = np.zeros(LU.shape, LU.dtype)
    np.put_along_axis(P, perm[..., None], 1, axis=-1)  # row i of P A is row perm[i] of A
    return _mT(P), L, U


def _lu_backward(gL, gU, P, L, U):
    """FunctionsManual's linalg_lu_backward (square A = P L U)."""
    phi = (L.mH.matmul(gL)).tril(-1) if gL is not None else None
    psi = gU.matmul(U.mH).triu() if gU is not None else None
    inner = phi if psi is None else (psi if phi is None else phi + psi)
    gR = solve_triangular(L.mH, inner, upper=True, left=True, unitriangular=True)
    gA = solve_triangular(U.mH, gR, upper=False, left=False)
    return P.matmul(gA)


def _check_lu_square(A, name):
    _check_matrix(A, name)
    if A.shape[-1] != A.shape[-2]:
        raise NotImplementedError(f"gradwalk's {name} supports square matrices; got "
                                  f"{A.shape[-2]} by {A.shape[-1]}")


class LinalgLuFactorEx(Op):
    name = "LinalgLuFactorExBackward0"
    saves_attrs = ("pivot",)

    def forward(A, pivot):
        LU, pivots = _lu_array(A)
        return LU, pivots, np.zeros(A.shape[:-2], np.int32)

    def save(ctx, A, out, pivot):
        ctx.save_result("LU", out[0])
        ctx.save(pivots=out[1])

    def backward(ctx, gLU, g_pivots=None, g_info=None):
        LU = ctx.LU
        P, L, U = (_make(a) for a in _unpack_arrays(LU._data, ctx.pivots._data))
        return _lu_backward(gLU.tril(-1), gLU.triu(), P, L, U),


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    from .. import return_types

    _check_lu_square(A, "linalg.lu_factor")
    LU, pivots, info = apply_op(LinalgLuFactorEx, (A,), {"pivot": pivot})
    return return_types.linalg_lu_factor_ex(LU, pivots, info)


def lu_factor(A, *, pivot=True):
    from .. import return_types

    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return return_types.linalg_lu_factor(LU, pivots)


class LinalgLu(Op):
    name = "LinalgLuBackward0"
    saves_attrs = ("pivot",)

    def forward(A, pivot):
        return _unpack_arrays(*_lu_array(A))

    def save(ctx, A, out, pivot):
        ctx.save(P=out[0])
        ctx.save_result("L", out[1])
        ctx.save_result("U", out[2])

    def backward(ctx, gP, gL=None, gU=None):
        return _lu_backward(gL, gU, ctx.P, ctx.L, ctx.U),


def linalg_lu(A, *, pivot=True):
    from .. import return_types

    _check_lu_square(A, "linalg.lu")
    P, L, U = apply_op(LinalgLu, (A,), {"pivot": pivot})
    return return_types.linalg_lu(P.detach(), L, U)


class LuUnpack(Op):
    name = "LuUnpackBackward0"

    def forward(LU, pivots, unpack_data, unpack_pivots):
        return _unpack_arrays(LU, pivots)

    def save(ctx, LU, out, pivots, unpack_data, unpack_pivots):
        pass

    def backward(ctx, gP, gL=None, gU=None):
        parts = [g for g in ((gL.tril(-1) if gL is not None else None),
                             (gU.triu() if gU is not None else None)) if g is not None]
        return (parts[0] if len(parts) == 1 else parts[0] + parts[1]) if parts else None,


@export(method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    from .. import return_types

    _check_lu_square(LU_data, "lu_unpack")
    P, L, U = apply_op(LuUnpack, (LU_data,), {"pivots": LU_pivots._data, "unpack_data": unpack_data,
                                              "unpack_pivots": unpack_pivots})
    return return_types.lu_unpack(P.detach(), L, U)


class LinalgLuSolve(Op):
    name = "LinalgLuSolveBackward0"
    saves_attrs = ("left", "adjoint")

    def forward(LU, B, pivots, left, adjoint):
        P, L, U = _unpack_arrays(LU, pivots)
        A = P @ L @ U
        if adjoint:
            A = _mT(A)
        X = np.linalg.solve(A, B) if left else _mT(np.linalg.solve(_mT(A), _mT(B)))
        return X.astype(LU.dtype, copy=False)

    def save(ctx, LU, B, out, pivots, left, adjoint):
        ctx.save(LU=LU)
        ctx.save_result("result", out)
        ctx._attrs["pivots"] = pivots

    def backward(ctx, gX):
        LU, X, a = ctx.LU, ctx.result, ctx._attrs
        need = ctx.needs_input_grad
        gLU = None
        if need[0]:
            if not a["left"] or a["adjoint"]:
                raise NotImplementedError("gradwalk: the derivative of lu_solve with respect to LU is "
                                          "implemented for left=True, adjoint=False")
            # gA = -A^-H gX X^H with A = P L U: P^T gA = L^-H gR, gR = U^-H (-gX X^H); then
            # gL = (P^T gA U^H).tril(-1), gU = (L^H P^T gA).triu() = gR.triu()
            L = _make(np.tril(LU._data, -1) + np.eye(LU.shape[-1], dtype=LU._data.dtype))
            U = LU.triu()
            gR = solve_triangular(U.mH, -gX.matmul(X.mH), upper=False)
            gL = solve_triangular(L.mH, gR.matmul(U.mH), upper=True, left=True, unitriangular=True).tril(-1)
            gLU = gL + gR.triu()
        gB = None
        if need[1]:
            gB = apply_op(LinalgLuSolve, (LU, gX), {"pivots": a["pivots"], "left": a["left"],
                                                    "adjoint": not a["adjoint"]})
        return gLU, gB


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    _check_lu_square(LU, "linalg.lu_solve")
    return apply_op(LinalgLuSolve, (LU, B), {"pivots": pivots._data, "left": left, "adjoint": adjoint})


@export()
def lu_solve(input, LU_data, LU_pivots):
    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed "
                "in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return linalg_lu_solve(LU_data, LU_pivots, input)


@export()
def lu(input, pivot=True, get_infos=False):
    _deprecated("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould "
                "be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info "
                "= torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                "torch.linalg.lu_factor_ex(A, compute_pivots)")
    factor = lu_factor_ex(input, pivot=pivot)
    return (factor.LU, factor.pivots, factor.info) if get_infos else (factor.LU, factor.pivots)


# ---------------------------------------------------------------- matrix norms other than Frobenius

def matrix_norm_ord(A, ord, dim=(-2, -1), keepdim=False):  # noqa: A002
    """ATen's linalg_matrix_norm for 'nuc', +-2 (singular values), +-1 and +-inf (column and row
    sums of absolute values)."""
    from ..linalg import vector_norm

    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = normalize_dim(dim[0], A.ndim), normalize_dim(dim[1], A.ndim)
    if ord == "nuc" or ord in (2, -2):
        rest = [i for i in range(A.ndim) if i not in (d0, d1)]
        perm = rest + [d0, d1]
        s = svdvals(A.permute(perm))
        result = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            reverse = [perm.index(i) for i in range(A.ndim)]
            result = result.unsqueeze(-1).unsqueeze(-1).permute(reverse)
        return result
    if ord not in (1, -1, float("inf"), -float("inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if abs(ord) == float("inf"):
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = vector_norm(A, 1.0, d0, keepdim)
    return sums.amax(d1, keepdim) if ord > 0 else sums.amin(d1, keepdim)


@export(method=False)
def nuclear_norm(input, dim=None, keepdim=False):
    _deprecated("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will "
                "be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` "
                "instead")
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return matrix_norm_ord(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)
