"""Ops real tutorials call that have no gradient (or none gradwalk computes): bitwise
arithmetic on integer tensors (``torch.bitwise_xor``, ``a ^ b``, ``~a``), ``torch.unique``,
``torch.cross`` and ``torch.svd``.

Bitwise ops and ``unique`` are not differentiable in PyTorch either (integer results, or
``unique``'s values with no formula), so they return plain tensors. ``cross`` is differentiable and
built from existing ops, so it records the nodes of the products and differences it is made of.
``svd`` computes its result with LAPACK through NumPy; asking for its gradient raises an error
that names it, instead of a wrong answer.
"""
import numpy as np

from .. import grad_mode
from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from .._meta import MetaArray
from .._dtype import float32
from ._util import export, normalize_dim


def _Tensor():
    return _tensor.Tensor


def _data(x):
    return x._data if isinstance(x, _Tensor()) else x


def _integral_or_bool(name, *tensors):
    for t in tensors:
        if isinstance(t, _Tensor()) and t.dtype.is_floating_point:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'{t.dtype.short_name}\'')


def _bitwise(name, np_fn, input, other):
    _integral_or_bool(name, input, other)
    if isinstance(other, float) or isinstance(input, float):
        raise TypeError(f"{name}(): argument 'other' must be an integer, not float")
    return _Tensor()._make(_array(np_fn(_data(input), _data(other))))


@export()
def bitwise_and(input, other):
    return _bitwise("bitwise_and", np.bitwise_and, input, other)


@export()
def bitwise_or(input, other):
    return _bitwise("bitwise_or", np.bitwise_or, input, other)


@export()
def bitwise_xor(input, other):
    return _bitwise("bitwise_xor", np.bitwise_xor, input, other)


@export()
def bitwise_not(input):
    _integral_or_bool("bitwise_not", input)
    return _Tensor()._make(_array(np.invert(input._data)))


def _array(result):
    """A NumPy result as a tensor's data (a meta array stays one)."""
    return result if result.__class__ is MetaArray else np.asarray(result)


@export()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """``torch.unique``: the distinct values in ascending order (PyTorch's CPU kernel sorts them
    whether or not ``sorted`` is asked), and optionally each element's index into them and how
    often each occurs."""
    x = input._data
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(x.shape)
    else:
        dim = normalize_dim(dim, x.ndim)
        values, inverse, counts = np.unique(x, axis=dim, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    out = [_Tensor()._make(np.asarray(values))]
    if return_inverse:
        out.append(_Tensor()._make(np.asarray(inverse, dtype=np.int64)))
    if return_counts:
        out.append(_Tensor()._make(np.asarray(counts, dtype=np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@export()
def cross(input, other, dim=None):
    """``torch.cross``: the vector product along a dimension of size 3 (the first such one when
    ``dim`` is not given, with PyTorch's deprecation warning), as products and differences of
    the components so the gradient flows."""
    from . import functions as F

    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
                      "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
                      "change to agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(input.shape, other.shape)
        dims = [d for d, n in enumerate(shape) if n == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    a, b = F.broadcast_tensors(input, other)
    dim = normalize_dim(dim, a.ndim)
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                           f"Got {a.shape[dim]} and {b.shape[dim]}")
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return F.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


@export(method=False)
def broadcast_tensors(*tensors):
    """``torch.broadcast_tensors``: each tensor expanded (a view) to the common shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


@export()
def svd(input, some=True, compute_uv=True):
    """``torch.svd``: ``U, S, V`` with ``input = U @ diag(S) @ V.mT`` (LAPACK's gesdd, as
    PyTorch's CPU kernel). No gradient: under autograd it raises an error naming svd."""
    from .. import return_types

    if input.requires_grad and grad_mode.is_grad_enabled():
        raise NotImplementedError("gradwalk: the gradient of torch.svd / torch.linalg.svd is not supported; "
                                  "call it on a tensor that does not require grad (or under torch.no_grad())")
    x = input._data
    if not compute_uv:
        s = np.linalg.svd(x, compute_uv=False)
        m, n = x.shape[-2:]
        u = np.zeros(x.shape[:-2] + (m, m if not some else min(m, n)), dtype=x.dtype)
        v = np.zeros(x.shape[:-2] + (n, n if not some else min(m, n)), dtype=x.dtype)
    else:
        u, s, vh = np.linalg.svd(x, full_matrices=not some)
        v = np.swapaxes(vh, -1, -2)
    make = _Tensor()._make
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(float32.np)
    return return_types.svd(make(np.ascontiguousarray(u, dtype=dtype)), make(np.ascontiguousarray(s, dtype=dtype)),
                            make(np.ascontiguousarray(v, dtype=dtype)))


# ---------------------------------------------------------------- smooth L1 and Huber losses

from .core import Op, apply_op  # noqa: E402


class SmoothL1Loss(Op):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (PyTorch's kernel)."""

    name = "SmoothL1LossBackward0"
    saves_attrs = ("reduction", "beta")

    def forward(x, t, reduction, beta):
        z = np.abs(x - t)
        loss = np.where(z < beta, 0.5 * z * z / beta if beta else z, z - 0.5 * beta).astype(z.dtype)
        return _reduce(loss, reduction)

    def save(ctx, x, t, out, reduction, beta):
        ctx.save(self=x, target=t)

    def backward(ctx, g):
        x, t = ctx.self, ctx.target
        beta = ctx._attrs["beta"]
        d = (x - t)._data
        slope = np.where(d < -beta, -1.0, np.where(d > beta, 1.0, d / beta if beta else 0.0)).astype(d.dtype)
        return _loss_grads(ctx, g, slope, x.numel())

    def jvp(x, t, out, dx, dt, reduction, beta):
        d = x - t  # the slope: d / beta inside (-beta, beta), the sign of d outside
        slope = (d / beta).clamp(-1.0, 1.0) if beta else d.sign()
        return _reduce_tangent(slope * (dx - dt), reduction)


class HuberLoss(Op):
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (PyTorch's kernel)."""

    name = "HuberLossBackward0"
    saves_attrs = ("reduction", "delta")

    def forward(x, t, reduction, delta):
        z = np.abs(x - t)
        loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(z.dtype)
        return _reduce(loss, reduction)

    def save(ctx, x, t, out, reduction, delta):
        ctx.save(self=x, target=t)

    def backward(ctx, g):
        x, t = ctx.self, ctx.target
        delta = ctx._attrs["delta"]
        d = (x - t)._data
        slope = np.where(d <= -delta, -delta, np.where(d >= delta, delta, d)).astype(d.dtype)
        return _loss_grads(ctx, g, slope, x.numel())

    def jvp(x, t, out, dx, dt, reduction, delta):
        return _reduce_tangent((x - t).clamp(-delta, delta) * (dx - dt), reduction)


def _reduce(loss, reduction):
    return np.asarray(loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss, dtype=loss.dtype)


def _reduce_tangent(tangent, reduction):
    return tangent.mean() if reduction == 1 else tangent.sum() if reduction == 2 else tangent


def _loss_grads(ctx, g, slope, numel):
    scale = 1.0 / numel if ctx._attrs["reduction"] == 1 else 1.0
    gx = g * _Tensor()._make(slope * np.asarray(scale, dtype=slope.dtype))
    need = ctx.needs_input_grad
    return (gx if need[0] else None, -gx if need[1] else None)


def _loss_inputs(name, input, target):
    from .activation import _check_same_size
    from .core import result_dtype_many

    _check_same_size(input, target, name)
    if input.shape != target.shape:
        shape = np.broadcast_shapes(input.shape, target.shape)
        input, target = input.expand(shape), target.expand(shape)
    dtype = result_dtype_many((input, target))
    if target.dtype is not dtype and not target.requires_grad:
        target = _Tensor()._make(target._data.astype(dtype.np))
    return input, target, dtype


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    from .activation import _reduction_enum

    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:  # PyTorch: l1_loss (so a MeanBackward0 / SumBackward0 node)
        from .activation import l1_loss

        return l1_loss(input, target, reduction=reduction)
    input, target, dtype = _loss_inputs("smooth_l1_loss", input, target)
    return apply_op(SmoothL1Loss, (input, target), {"reduction": _reduction_enum(reduction), "beta": float(beta)},
                    out_dtype=None if input.dtype is dtype else dtype)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    from .activation import _reduction_enum

    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    input, target, dtype = _loss_inputs("huber_loss", input, target)
    return apply_op(HuberLoss, (input, target), {"reduction": _reduction_enum(reduction), "delta": float(delta)},
                    out_dtype=None if input.dtype is dtype else dtype)


# ---------------------------------------------------------------- attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(q @ k.mT * scale + mask) @ v``, PyTorch's reference formula (its docs'
    "efficient implementation equivalent"), written with gradwalk's ops so it differentiates.
    PyTorch's CPU kernel (flash attention) gives the same values to rounding but records one
    ``ScaledDotProductFlashAttentionForCpuBackward0`` node where this records the ops it is made of."""
    import math

    from . import functions as F
    from .activation import softmax

    if enable_gqa:
        raise NotImplementedError("gradwalk: scaled_dot_product_attention(enable_gqa=True) is not supported")
    L, S = query.shape[-2], key.shape[-2]
    scale_factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    attn = F.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        keep = np.tril(np.ones((L, S), dtype=bool))
        attn = attn.masked_fill(_Tensor()._make(~keep), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            attn = attn.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            attn = attn + attn_mask
    attn = softmax(attn, -1)
    if dropout_p > 0.0:
        from ..nn import functional as nnF

        attn = nnF.dropout(attn, dropout_p, training=True)
    return F.matmul(attn, value)


# ---------------------------------------------------------------- functions PyTorch 2 removed

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_REMOVED_MESSAGES = {
    "solve": _REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
    "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, "
    "which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
    "replaced with:\nX = torch.linalg.solve(A, B)",
    "eig": _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
    "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
    "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
    "L_complex, V_complex = torch.linalg.eig(A)",
    "symeig": _REMOVED + "The default behavior has changed from using the upper triangular portion of the matrix by "
    "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced "
    "with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
    "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "lstsq": _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
    "reversed arguments and does not return the QR decomposition in the returned tuple (although it returns other "
    "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe "
    "returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
    "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
    "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    "matrix_rank": "This function was deprecated since version 1.9 and is now removed.\nPlease use the "
    "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
    "`torch.linalg.matrix_rank()` to 'hermitian'.",
}


def _removed(name, method=True):
    def fn(*args, **kwargs):
        raise RuntimeError(_REMOVED_MESSAGES[name])

    fn.__name__ = name
    fn.__doc__ = f"``torch.{name}``: removed in PyTorch 2; raises PyTorch's RuntimeError naming its replacement."
    return export(name, method=method)(fn)


solve = _removed("solve")
eig = _removed("eig")
symeig = _removed("symeig")
lstsq = _removed("lstsq")
matrix_rank = _removed("matrix_rank", method=False)
