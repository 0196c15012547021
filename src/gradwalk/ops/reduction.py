"""Reductions: sum, mean, max/min (all, over a dim), amax/amin, var/std, prod, logsumexp."""
import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from .._meta import MetaArray

from .._dtype import float32, int64
from ._util import export, max_keepdims, normalize_dim, normalize_dims
from .cascade_sum import cascade_sum
from .core import Op, apply_op


def _expand_back(g, in_shape, dims, keepdim):
    """Broadcast a reduced gradient back over the input's shape."""
    if not keepdim and dims:
        for d in sorted(dims):
            g = g.unsqueeze(d)
    return g.expand(in_shape)


class SumAll(Op):
    name = "SumBackward0"
    saves_attrs = ("self_sym_sizes",)

    def forward(x, self_sym_sizes, dtype=None):
        return np.asarray(cascade_sum(x if dtype is None or x.dtype == dtype else x.astype(dtype)))

    def backward(ctx, g):
        return g.expand(ctx._attrs["self_sym_sizes"]),

    def jvp(x, out, dx, self_sym_sizes, dtype=None):
        return dx.sum()


class SumDim(Op):
    name = "SumBackward1"
    saves_attrs = ("dim", "keepdim", "self_sym_sizes")

    def forward(x, dim, keepdim, self_sym_sizes, dtype=None):
        dim = tuple(range(x.ndim)) if dim is None else dim  # sum(dim=None): saved as None, as in PyTorch
        return np.asarray(cascade_sum(x if dtype is None or x.dtype == dtype else x.astype(dtype), dim, keepdim))

    def backward(ctx, g):
        a = ctx._attrs
        return _expand_back(g, a["self_sym_sizes"], a["dim"], a["keepdim"]),

    def jvp(x, out, dx, dim, keepdim, self_sym_sizes, dtype=None):
        return dx.sum(dim, keepdim=keepdim)


class MeanAll(Op):
    name = "MeanBackward0"
    saves_attrs = ("self_sym_sizes", "self_sym_numel")

    def forward(x, self_sym_sizes, self_sym_numel):
        if x.dtype.kind != "f":
            return np.asarray(x.mean(), dtype=x.dtype)
        return np.asarray(cascade_sum(x) / x.dtype.type(x.size), dtype=x.dtype)  # at::mean: sum, then div_

    def backward(ctx, g):
        a = ctx._attrs
        return (g / a["self_sym_numel"]).expand(a["self_sym_sizes"]),

    def jvp(x, out, dx, self_sym_sizes, self_sym_numel):
        return dx.mean()


class MeanDim(Op):
    name = "MeanBackward1"
    saves_attrs = ("dim", "keepdim", "self_sym_sizes", "self_sym_numel")

    def forward(x, dim, keepdim, self_sym_sizes, self_sym_numel):
        dim = tuple(range(x.ndim)) if dim is None else dim  # mean(dim=None): saved as None
        if x.dtype.kind != "f":
            return np.asarray(x.mean(axis=dim, keepdims=keepdim), dtype=x.dtype)
        n = 1
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            n *= x.shape[d]
        return np.asarray(cascade_sum(x, dim, keepdim) / x.dtype.type(n), dtype=x.dtype)

    def backward(ctx, g):
        a = ctx._attrs
        n = 1
        for d in (range(len(a["self_sym_sizes"])) if a["dim"] is None else a["dim"]):
            n *= a["self_sym_sizes"][d]
        return _expand_back(g / n, a["self_sym_sizes"], a["dim"], a["keepdim"]),

    def jvp(x, out, dx, dim, keepdim, self_sym_sizes, self_sym_numel):
        return dx.mean(dim, keepdim=keepdim)


class _ExtremeAll(Op):
    """max()/min()/amax/amin: ties share the gradient evenly."""

    np_fn = None

    @classmethod
    def forward(cls, x, dim=None, keepdim=False):
        if x.size == 0:
            raise RuntimeError(
                "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.")
        return np.asarray(cls.np_fn(x, axis=dim, keepdims=keepdim))

    def save(ctx, x, out, dim=None, keepdim=False):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x, r = ctx.self, ctx.result
        a = ctx._attrs or {}
        dims = a.get("dim")
        keep = a.get("keepdim", False)
        if dims is not None and not keep:
            for d in sorted(dims):
                r = r.unsqueeze(d)
                g = g.unsqueeze(d)
        mask = (x == r)
        count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
        return g * mask / count,

    def jvp(x, out, dx, dim=None, keepdim=False):
        r = out
        if dim is not None and not keepdim:
            for d in sorted(dim):
                r = r.unsqueeze(d)
        mask = x == r
        count = mask.sum(dim, keepdim=keepdim) if dim is not None else mask.sum()
        return (dx * mask).sum(dim, keepdim=keepdim) / count if dim is not None else (dx * mask).sum() / count


class MaxAll(_ExtremeAll):
    name = "MaxBackward1"
    np_fn = np.max


class MinAll(_ExtremeAll):
    name = "MinBackward1"
    np_fn = np.min


class Amax(_ExtremeAll):
    name = "AmaxBackward0"
    np_fn = np.max
    saves_attrs = ("dim", "keepdim")


class Amin(_ExtremeAll):
    name = "AminBackward0"
    np_fn = np.min
    saves_attrs = ("dim", "keepdim")


class _ExtremeDim(Op):
    """max(dim)/min(dim) -> (values, indices); the gradient goes to the first extreme index."""

    arg_fn = None
    saves_attrs = ("dim", "keepdim", "self_sym_sizes")

    @classmethod
    def forward(cls, x, dim, keepdim, self_sym_sizes):
        idx = cls.arg_fn(x, axis=dim, keepdims=True)
        values = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype(np.int64)

    def save(ctx, x, out, dim, keepdim, self_sym_sizes):
        ctx.save(indices=out[1])

    def backward(ctx, g, g_indices=None):
        from .shape import scatter_along

        a = ctx._attrs
        return scatter_along(g, ctx.indices, a["dim"], a["keepdim"], a["self_sym_sizes"]),

    def jvp(x, out, dx, dim, keepdim, self_sym_sizes):
        index = out[1] if keepdim else out[1].unsqueeze(dim)
        picked = dx.gather(dim, index)
        return (picked if keepdim else picked.squeeze(dim)), None  # indices have no tangent


class MaxDim(_ExtremeDim):
    name = "MaxBackward0"
    arg_fn = np.argmax


class MinDim(_ExtremeDim):
    name = "MinBackward0"
    arg_fn = np.argmin


class Var(Op):
    name = "VarBackward0"
    saves_attrs = ("dim", "correction", "keepdim")

    def forward(x, dim, correction, keepdim):
        with np.errstate(all="ignore"):
            return np.asarray(np.var(x, axis=dim, ddof=correction, keepdims=keepdim), dtype=x.dtype)

    def save(ctx, x, out, dim, correction, keepdim):
        ctx.save(self=x)

    def backward(ctx, g):
        a = ctx._attrs
        x = ctx.self
        dims = a["dim"]
        n = x.numel() if dims is None else int(np.prod([x.shape[d] for d in dims]))
        if dims is not None and not a["keepdim"]:
            for d in sorted(dims):
                g = g.unsqueeze(d)
        mean = x.mean(dims, keepdim=True) if dims is not None else x.mean()
        return g * (x - mean) * (2.0 / (n - a["correction"])),

    def jvp(x, out, dx, dim, correction, keepdim):
        n = x.numel() if dim is None else int(np.prod([x.shape[d] for d in dim]))
        mean = x.mean(dim, keepdim=True) if dim is not None else x.mean()
        s = ((x - mean) * dx)
        return (s.sum(dim, keepdim=keepdim) if dim is not None else s.sum()) * (2.0 / (n - correction))


class Std(Op):
    name = "StdBackward0"
    saves_attrs = ("dim", "correction", "keepdim")

    def forward(x, dim, correction, keepdim):
        with np.errstate(all="ignore"):
            return np.asarray(np.std(x, axis=dim, ddof=correction, keepdims=keepdim), dtype=x.dtype)

    def save(ctx, x, out, dim, correction, keepdim):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        a = ctx._attrs
        x, r = ctx.self, ctx.result
        dims = a["dim"]
        n = x.numel() if dims is None else int(np.prod([x.shape[d] for d in dims]))
        if dims is not None and not a["keepdim"]:
            for d in sorted(dims):
                g = g.unsqueeze(d)
                r = r.unsqueeze(d)
        mean = x.mean(dims, keepdim=True) if dims is not None else x.mean()
        return g * (x - mean) / (r * (n - a["correction"])),

    def jvp(x, out, dx, dim, correction, keepdim):
        n = x.numel() if dim is None else int(np.prod([x.shape[d] for d in dim]))
        mean = x.mean(dim, keepdim=True) if dim is not None else x.mean()
        s = (x - mean) * dx
        s = s.sum(dim, keepdim=keepdim) if dim is not None else s.sum()
        return s / (out * (n - correction))


class Prod(Op):
    name = "ProdBackward0"

    def forward(x):
        return np.asarray(x.prod())

    def save(ctx, x, out):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x = ctx.self
        if x.ndim == 0:
            return g,
        if not (x._data == 0).any():  # PyTorch's prod_backward: grad * (result / input)
            return g * (ctx.result / x),
        # with zeros: the product of all the other elements (no division)
        Tensor = _tensor.Tensor
        flat = x._data.reshape(-1)
        others = np.array([np.prod(np.delete(flat, i)) for i in range(flat.size)], dtype=flat.dtype)
        return g * Tensor._make(others.reshape(x.shape)),

    def jvp(x, out, dx):
        flat = x._data.reshape(-1)
        Tensor = _tensor.Tensor
        others = np.array([np.prod(np.delete(flat, i)) for i in range(flat.size)], dtype=flat.dtype)
        return (dx * Tensor._make(others.reshape(x.shape))).sum()


def _prod_of_others(x, axis):
    """Along ``axis``, the product of every element but the one at each place (no division, so
    zeros are fine): the running product from the left times the one from the right."""
    ones_shape = list(x.shape)
    ones_shape[axis] = 1
    one = np.ones(ones_shape, dtype=x.dtype)
    left = np.cumprod(np.concatenate([one, np.take(x, range(x.shape[axis] - 1), axis=axis)], axis), axis)
    flipped = np.flip(x, axis)
    right = np.cumprod(np.concatenate([one, np.take(flipped, range(x.shape[axis] - 1), axis=axis)], axis), axis)
    return left * np.flip(right, axis)


class ProdDim(Op):
    name = "ProdBackward1"
    saves_attrs = ("dim", "keepdim")

    def forward(x, dim, keepdim):
        return np.asarray(np.prod(x, axis=dim, keepdims=keepdim))

    def save(ctx, x, out, dim, keepdim):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        a = ctx._attrs
        x = ctx.self
        if x.ndim == 0:
            return g,
        result = ctx.result
        if not a["keepdim"]:
            g = g.unsqueeze(a["dim"])
            result = result.unsqueeze(a["dim"])
        if not (x._data == 0).any():  # PyTorch's prod_backward: grad * (result / input)
            return g * (result / x),
        others = _tensor.Tensor._make(_prod_of_others(x._data, a["dim"]))
        return g * others,

    def jvp(x, out, dx, dim, keepdim):
        others = _tensor.Tensor._make(_prod_of_others(x._data, dim))
        return (dx * others).sum(dim, keepdim=keepdim)


class Logsumexp(Op):
    name = "LogsumexpBackward0"
    saves_attrs = ("dim", "keepdim")

    def forward(x, dim, keepdim):
        m = max_keepdims(x, dim)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(all="ignore"):
            r = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
        return np.asarray(r if keepdim else r.squeeze(axis=dim), dtype=x.dtype)

    def save(ctx, x, out, dim, keepdim):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x, r = ctx.self, ctx.result
        if not ctx._attrs["keepdim"]:
            for d in sorted(ctx._attrs["dim"]):
                g, r = g.unsqueeze(d), r.unsqueeze(d)
        return g * (x - r).exp(),

    def jvp(x, out, dx, dim, keepdim):
        r = out
        if not keepdim:
            for d in sorted(dim):
                r = r.unsqueeze(d)
        return (dx * (x - r).exp()).sum(dim, keepdim=keepdim)


# ---------------------------------------------------------------- the functions users call

def _sum_dtype(x, dtype):
    if dtype is not None:
        from .._dtype import as_dtype

        return as_dtype(dtype)
    return int64 if x.dtype.np.kind in "bi" else x.dtype


_NO_DIM = object()  # sum()/mean() without dim (SumBackward0) is not sum(dim=None) (SumBackward1)


@export()
def sum(input, dim=_NO_DIM, keepdim=False, *, dtype=None):  # noqa: A001
    out_dtype = _sum_dtype(input, dtype)
    np_dtype = out_dtype.np
    if dim is _NO_DIM and not keepdim:
        return apply_op(SumAll, (input,), {"self_sym_sizes": input.shape, "dtype": np_dtype},
                        out_dtype=out_dtype)
    dims = None if dim is _NO_DIM or dim is None else normalize_dims(dim, input.ndim)
    return apply_op(SumDim, (input,), {"dim": dims, "keepdim": keepdim,
                                       "self_sym_sizes": input.shape, "dtype": np_dtype},
                    out_dtype=out_dtype)


@export()
def mean(input, dim=_NO_DIM, keepdim=False, *, dtype=None):
    if not input.dtype.is_floating_point and dtype is None:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {input.dtype.short_name}")
    if dim is _NO_DIM and not keepdim:
        return apply_op(MeanAll, (input,), {"self_sym_sizes": input.shape,
                                            "self_sym_numel": input.numel()})
    dims = None if dim is _NO_DIM or dim is None else normalize_dims(dim, input.ndim)
    return apply_op(MeanDim, (input,), {"dim": dims, "keepdim": keepdim, "self_sym_sizes": input.shape,
                                        "self_sym_numel": input.numel()})


def _extreme(all_op, dim_op, pairwise, input, dim, keepdim, name):
    Tensor = _tensor.Tensor
    from .shape import _namedtuple_values_indices

    if isinstance(dim, Tensor):  # torch.max(a, b)
        return pairwise(input, dim)
    if dim is None:
        return apply_op(all_op, (input,))
    d = normalize_dim(dim, input.ndim)
    values, indices = apply_op(dim_op, (input,), {"dim": d, "keepdim": keepdim,
                                                  "self_sym_sizes": input.shape})
    return _namedtuple_values_indices(values, indices, name)


@export()
def max(input, dim=None, keepdim=False):  # noqa: A001
    from .pointwise import maximum

    return _extreme(MaxAll, MaxDim, maximum, input, dim, keepdim, "max")


@export()
def min(input, dim=None, keepdim=False):  # noqa: A001
    from .pointwise import minimum

    return _extreme(MinAll, MinDim, minimum, input, dim, keepdim, "min")


@export()
def amax(input, dim=(), keepdim=False):
    dims = normalize_dims(dim if dim != () else None, input.ndim)
    return apply_op(Amax, (input,), {"dim": dims, "keepdim": keepdim})


@export()
def amin(input, dim=(), keepdim=False):
    dims = normalize_dims(dim if dim != () else None, input.ndim)
    return apply_op(Amin, (input,), {"dim": dims, "keepdim": keepdim})


@export()
def argmax(input, dim=None, keepdim=False):
    Tensor = _tensor.Tensor
    if dim is None:
        index = np.argmax(input._data)  # (a meta tensor's: a meta array)
        return Tensor._make(np.asarray(index, dtype=np.int64) if index.__class__ is not MetaArray
                            else index.astype(np.int64))
    return Tensor._make(np.argmax(input._data, axis=dim, keepdims=keepdim).astype(np.int64))


@export()
def argmin(input, dim=None, keepdim=False):
    Tensor = _tensor.Tensor
    if dim is None:
        index = np.argmin(input._data)  # (a meta tensor's: a meta array)
        return Tensor._make(np.asarray(index, dtype=np.int64) if index.__class__ is not MetaArray
                            else index.astype(np.int64))
    return Tensor._make(np.argmin(input._data, axis=dim, keepdims=keepdim).astype(np.int64))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@export()
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    dims = None if dim is None else normalize_dims(dim, input.ndim)
    return apply_op(Var, (input,), {"dim": dims, "correction": _correction(unbiased, correction),
                                    "keepdim": keepdim})


@export()
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    import warnings

    if isinstance(dim, bool):
        unbiased, dim = dim, None
    dims = None if dim is None else normalize_dims(dim, input.ndim)
    corr = _correction(unbiased, correction)
    n = input.numel() if dims is None else int(np.prod([input.shape[d] for d in dims]))
    if n - corr <= 0:
        warnings.warn("std(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=2)
    return apply_op(Std, (input,), {"dim": dims, "correction": corr, "keepdim": keepdim})


@export()
def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return apply_op(Prod, (input,))
    return apply_op(ProdDim, (input,), {"dim": normalize_dim(dim, input.ndim), "keepdim": keepdim})


@export()
def logsumexp(input, dim, keepdim=False):
    return apply_op(Logsumexp, (input,), {"dim": normalize_dims(dim, input.ndim), "keepdim": keepdim})


class LinalgVectorNorm(Op):
    """``x.norm(p, dim)``: one node, as in PyTorch; the gradient at a zero norm is 0, not nan."""

    name = "LinalgVectorNormBackward0"
    saves_attrs = ("ord", "dim", "keepdim")

    def forward(x, ord, dim, keepdim):
        with np.errstate(all="ignore"):
            a = np.abs(x)
            if ord == float("inf"):
                r = a.max(axis=dim, keepdims=keepdim)
            elif ord == 1:
                r = a.sum(axis=dim, keepdims=keepdim)
            else:
                r = (a ** ord).sum(axis=dim, keepdims=keepdim) ** (1.0 / ord)
        return np.asarray(r, dtype=x.dtype)

    def save(ctx, x, out, ord, dim, keepdim):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        from . import functions as F

        a = ctx._attrs
        x, norm, p = ctx.self, ctx.result, a["ord"]
        if not a["keepdim"]:
            for d in a["dim"]:
                g, norm = g.unsqueeze(d), norm.unsqueeze(d)
        if p == 1:
            return x.sign() * g,
        if p == float("inf"):  # ties at the maximum share the gradient evenly
            at_max = (x.abs() == norm)
            count = at_max.sum(a["dim"], keepdim=True) if a["dim"] else at_max.sum()
            return x.sign() * at_max * (g / count),
        if p == 2:
            return x * F.where(norm == 0, 0.0, g / norm),
        return x * x.abs().pow(p - 2) * F.where(norm == 0, 0.0, g / norm.pow(p - 1)),

    def jvp(x, out, dx, ord, dim, keepdim):
        from . import functions as F

        norm = out
        if not keepdim:
            for d in dim:
                norm = norm.unsqueeze(d)
        if ord == 1:
            slope = x.sign()
        elif ord == float("inf"):
            at_max = (x.abs() == norm)
            count = at_max.sum(dim, keepdim=True) if dim else at_max.sum()
            slope = x.sign() * at_max / count
        elif ord == 2:
            slope = x * F.where(norm == 0, 0.0, 1.0 / norm)
        else:
            slope = x * x.abs().pow(ord - 2) * F.where(norm == 0, 0.0, 1.0 / norm.pow(ord - 1))
        return (slope * dx).sum(dim, keepdim=keepdim) if dim else (slope * dx).sum()


@export()
def norm(input, p=2, dim=None, keepdim=False):
    p = 2 if p in (None, "fro") else p
    dims = normalize_dims(dim, input.ndim)
    return apply_op(LinalgVectorNorm, (input,), {"ord": p, "dim": dims, "keepdim": keepdim})


_ = float32
