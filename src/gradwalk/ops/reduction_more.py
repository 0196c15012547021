"""More reductions and statistics, as PyTorch has them:

* one node each (``derivatives.yaml``): ``nansum`` (NansumBackward0), ``nanmedian``
  (NanmedianBackward0/1), ``kthvalue`` (KthvalueBackward0), ``mode`` (ModeBackward0), ``aminmax``
  (AminmaxBackward0), ``renorm`` (RenormBackward0, FunctionsManual's renorm_backward);
* composites, as ATen writes them (so their nodes are the ops they are made of): ``nanmean``
  (nansum / count), ``quantile`` / ``nanquantile`` (sort, gather, lerp: Sorting.cpp's
  quantile_compute), ``msort``, ``cov`` / ``corrcoef`` (Correlation.cpp), ``trapezoid`` /
  ``trapz`` / ``cumulative_trapezoid`` (Integration.cpp);
* without gradients (integer or boolean results): ``histc``, ``bincount``, ``bucketize``,
  ``searchsorted``, ``isin``.
"""
import numbers
import warnings

import numpy as np

from ._util import export, normalize_dim, normalize_dims
from .core import Op, apply_op
from .extra import MedianAll, _SelectAlongDim, _argsort
from .pointwise import mul_scalar


def _make(data):
    from ..tensor import Tensor

    return Tensor._make(np.asarray(data))


def _values_indices(values, indices, name):
    from .. import return_types

    return getattr(return_types, name)(values, indices) if hasattr(return_types, name) else (values, indices)


# ---------------------------------------------------------------- nan-ignoring reductions

class Nansum(Op):
    name = "NansumBackward0"

    def forward(x, dim, keepdim, dtype):
        out = np.nansum(x, axis=dim, keepdims=keepdim, dtype=dtype)
        return np.asarray(out)

    def save(ctx, x, out, dim, keepdim, dtype):
        ctx.save(self=x)
        ctx._attrs = {"dim": dim, "keepdim": keepdim}

    def backward(ctx, g):
        x, a = ctx.self, ctx._attrs
        if not a["keepdim"]:
            for d in a["dim"]:
                g = g.unsqueeze(d)
        return g.expand(*x.shape) * x.isnan().logical_not(),

    def jvp(x, out, dx, dim, keepdim, dtype):
        return dx.masked_fill(x.isnan(), 0).sum(dim, keepdim)


@export()
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    from .._dtype import as_dtype, int64

    if dtype is not None:
        np_dtype = as_dtype(dtype).np
    elif not input.dtype.is_floating_point:
        np_dtype = int64.np  # integers and bools sum to int64, as sum()
    else:
        np_dtype = None
    dims = normalize_dims(dim, input.ndim) if dim not in (None, [], ()) else tuple(range(input.ndim))
    return apply_op(Nansum, (input,), {"dim": dims, "keepdim": keepdim, "dtype": np_dtype})


@export()
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """ATen's composite: ``nansum(...) / (number of non-NaN values)`` (DivBackward0)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{input.dtype.short_name}")
    count = input.isnan().logical_not().sum(dim if dim is not None else tuple(range(input.ndim)), keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(count)


class NanmedianAll(MedianAll):
    name = "NanmedianBackward0"

    def forward(x):
        flat = x.reshape(-1)
        flat = np.sort(flat[~np.isnan(flat)]) if x.dtype.kind == "f" else np.sort(flat)
        if flat.size == 0:
            return np.asarray(np.nan, dtype=x.dtype)
        return np.asarray(flat[(flat.size - 1) // 2])


class NanmedianDim(_SelectAlongDim):
    name = "NanmedianBackward1"
    saves_attrs = ("dim", "keepdim")

    def forward(x, dim, keepdim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        order = _argsort(x, dim, False)  # NaN sorts last
        valid = ~np.isnan(x) if x.dtype.kind == "f" else np.ones(x.shape, bool)
        k = np.maximum(valid.sum(axis=dim, keepdims=True) - 1, 0) // 2
        idx = np.take_along_axis(order, k, axis=dim)
        values = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype(np.int64)


@export()
def nanmedian(input, dim=None, keepdim=False):
    if dim is None:
        return apply_op(NanmedianAll, (input,))
    values, indices = apply_op(NanmedianDim, (input,), {"dim": normalize_dim(dim, input.ndim),
                                                         "keepdim": keepdim})
    return _values_indices(values, indices, "nanmedian")


# ---------------------------------------------------------------- selections along a dim

class Kthvalue(_SelectAlongDim):
    name = "KthvalueBackward0"
    saves_attrs = ("dim", "keepdim", "k")

    def forward(x, k, dim, keepdim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        idx = np.take(_argsort(x, dim, False), [k - 1], axis=dim)
        values = np.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype(np.int64)


@export()
def kthvalue(input, k, dim=-1, keepdim=False):
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = apply_op(Kthvalue, (input,), {"k": k, "dim": d, "keepdim": keepdim})
    return _values_indices(values, indices, "kthvalue")


def _mode_along_last(rows):
    """Each row's most frequent value (the smallest of a tie) and its last index."""
    values = np.empty(rows.shape[0], rows.dtype)
    indices = np.empty(rows.shape[0], np.int64)
    for i, row in enumerate(rows):
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]
        values[i] = v
        indices[i] = np.flatnonzero((row == v) | (np.isnan(row) & np.isnan(v)) if row.dtype.kind == "f"
                                    else row == v)[-1]
    return values, indices


class Mode(_SelectAlongDim):
    name = "ModeBackward0"
    saves_attrs = ("dim", "keepdim")

    def forward(x, dim, keepdim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        moved = np.moveaxis(x, dim, -1)
        values, indices = _mode_along_last(moved.reshape(-1, moved.shape[-1]))
        values, indices = values.reshape(moved.shape[:-1]), indices.reshape(moved.shape[:-1])
        if keepdim:
            values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
        return values, indices


@export()
def mode(input, dim=-1, keepdim=False):
    values, indices = apply_op(Mode, (input,), {"dim": normalize_dim(dim, input.ndim), "keepdim": keepdim})
    return _values_indices(values, indices, "mode")


class Aminmax(Op):
    """``(min, max)`` in one node; each gradient is shared evenly by the ties, as amin's and amax's."""

    name = "AminmaxBackward0"

    def forward(x, dim, keepdim):
        axis = None if dim is None else dim
        return (np.asarray(np.min(x, axis=axis, keepdims=keepdim)),
                np.asarray(np.max(x, axis=axis, keepdims=keepdim)))

    def save(ctx, x, out, dim, keepdim):
        ctx.save(self=x)
        ctx.save_result("min", out[0])
        ctx.save_result("max", out[1])
        ctx._attrs = {"dim": dim, "keepdim": keepdim}

    def backward(ctx, g_min, g_max=None):
        x, a = ctx.self, ctx._attrs
        dims = tuple(range(x.ndim)) if a["dim"] is None else (a["dim"],)
        grad = None
        for g, r in ((g_min, ctx.min), (g_max, ctx.max)):
            if g is None:
                continue
            if not a["keepdim"] and a["dim"] is not None:
                g, r = g.unsqueeze(a["dim"]), r.unsqueeze(a["dim"])
            mask = x == r
            part = g * mask / mask.sum(dims, keepdim=True)
            grad = part if grad is None else grad + part
        return grad,


@export()
def aminmax(input, *, dim=None, keepdim=False):
    from .. import return_types

    d = None if dim is None else normalize_dim(dim, input.ndim)
    if input.numel() == 0 and (d is None or input.shape[d] == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                           "has no identity.")
    low, high = apply_op(Aminmax, (input,), {"dim": d, "keepdim": keepdim})
    if d is None and keepdim:  # every dim kept as size 1
        low, high = low.reshape([1] * input.ndim), high.reshape([1] * input.ndim)
    return return_types.aminmax(low, high)


@export()
def msort(input):
    return input.sort(0).values


# ---------------------------------------------------------------- quantiles

_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    from ..tensor import Tensor

    if input.dtype.np not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
                           f"nearest, but got {interpolation}")
    if isinstance(q, numbers.Number):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = Tensor._make(np.asarray(q, dtype=input.dtype.np))
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if ((q._data < 0) | (q._data > 1)).any():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if input.numel() == 0 and dim is None:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    # the output shape without q's dim (Sorting.cpp's quantile_output_shape)
    if dim is None:
        out_shape = [1] * input.ndim if keepdim else []
        sorted_ = input.flatten().sort().values
    else:
        d = normalize_dim(dim, input.ndim)
        out_shape = list(input.shape) if input.ndim else []
        if input.ndim:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        if d == input.ndim - 1 or input.ndim == 0:
            sorted_ = input.sort().values
        else:
            sorted_ = input.unsqueeze(-1).transpose(d, -1).sort().values
    sorted_ = sorted_.view(out_shape + [sorted_.shape[-1] if sorted_.ndim else 1])
    n = sorted_.shape[-1]
    # the ranks (no gradient flows to q here)
    qs, nans = q._data.astype(np.float64), np.isnan(sorted_._data)
    if ignore_nan:
        ranks = np.maximum(qs * ((~nans).sum(-1, keepdims=True) - 1), 0)
    else:
        ranks = np.where(nans.any(-1, keepdims=True), float(n - 1), qs * (n - 1))
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    ranks = Tensor._make(ranks.astype(input.dtype.np))
    below = ranks.to(dtype=_int64())
    values = sorted_.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks.new_full(ranks.shape, 0.5) if interpolation == "midpoint" else ranks - below
        values = values.lerp(sorted_.gather(-1, ranks.ceil().to(dtype=_int64())), weights)
    if q.ndim == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def _int64():
    from .._dtype import int64

    return int64


@export()
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@export()
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ---------------------------------------------------------------- covariance

@export()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Correlation.cpp's cov: rows are variables, columns observations (SqueezeBackward0)."""
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype.short_name == "Bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got fweights "
                               f"with {fweights.ndim} dimensions")
        if fweights.dtype.is_floating_point or fweights.dtype.short_name == "Bool":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                               f"{fweights.dtype.short_name} dtype")
        if fweights.numel() != n:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations "
                               f"in the input but got {fweights.numel()} != {n}")
        if n and fweights._data.min() < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got aweights "
                               f"with {aweights.ndim} dimensions")
        if not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights "
                               f"with {aweights.dtype.short_name} dtype")
        if aweights.numel() != n:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations "
                               f"in the input but got {aweights.numel()} != {n}")
        if n and aweights._data.min() < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is not None:
        w_sum = w.sum()
        if w_sum.item() == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    else:
        w_sum = _make(np.int64(n))
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if norm_factor.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "number of observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x * w if w is not None else x).t())
    return c.true_divide(norm_factor.detach()).squeeze()


@export()
def corrcoef(input):
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input "
                           f"with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


# ---------------------------------------------------------------- integration

class DivScalar(Op):
    """``div.Scalar``, as ATen's C++ ``tensor / 2.`` records it (DivBackward1)."""

    name = "DivBackward1"
    saves_attrs = ("other",)

    def forward(x, other):
        return x / other

    def backward(ctx, g):
        return g / ctx._attrs["other"],

    def jvp(x, out, dx, other):
        return dx / other


def _div_scalar(x, number):
    return apply_op(DivScalar, (x,), {"other": number})


def _slices(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)


def _dx_along(x, y, dim):
    """The spacing tensor from sample points ``x``: its diff along ``dim`` (a 1-D x broadcast there)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        dx = x[1:] - x[:-1]
        shape = [1] * y.ndim
        shape[dim] = dx.shape[0]
        return dx.view(shape)
    left, right = _slices(x, normalize_dim(dim, x.ndim))
    return right - left


@export()
def trapezoid(y, x=None, *, dx=None, dim=-1):
    from ..tensor import Tensor

    d = normalize_dim(dim, y.ndim)
    if isinstance(x, Tensor) and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    if y.shape[d] == 0:
        shape = list(y.shape)
        del shape[d]
        return y.new_zeros(shape)
    if isinstance(x, Tensor):
        left, right = _slices(y, d)
        return _div_scalar(((left + right) * _dx_along(x, y, d)).sum(d), 2.)
    spacing = 1 if dx is None and x is None else (dx if dx is not None else x)
    return mul_scalar(y.sum(d) - mul_scalar(y.select(d, 0) + y.select(d, -1), 0.5), spacing)


@export()
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@export()
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    from ..tensor import Tensor

    d = normalize_dim(dim, y.ndim)
    left, right = _slices(y, d) if y.shape[d] else (y, y)
    if isinstance(x, Tensor):
        return _div_scalar((_dx_along(x, y, d) * (left + right)).cumsum(d), 2.)
    spacing = 1 if dx is None and x is None else (dx if dx is not None else x)
    return mul_scalar(left + right, spacing / 2.).cumsum(d)


# ---------------------------------------------------------------- renorm

class Renorm(Op):
    name = "RenormBackward0"
    saves_attrs = ("p", "dim", "maxnorm")

    @staticmethod
    def _norm(x, p, dim):
        dims = tuple(i for i in range(x.ndim) if i != dim)
        a = np.abs(x)
        if p == float("inf"):
            return a.max(axis=dims, keepdims=True) if dims else a
        return (a ** p).sum(axis=dims, keepdims=True) ** (1.0 / p)

    def forward(x, p, dim, maxnorm):
        norm = Renorm._norm(x, p, dim)
        factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(x.dtype)
        return x * factor

    def save(ctx, x, out, p, dim, maxnorm):
        ctx.save(self=x)

    def backward(ctx, g):
        # FunctionsManual's renorm_backward
        x, a = ctx.self, ctx._attrs
        p, dim, maxnorm = a["p"], a["dim"], a["maxnorm"]
        dims = tuple(i for i in range(x.ndim) if i != dim)
        norm = x.norm(p, dims, keepdim=True) if dims else x.abs()
        grad_output = (x * g).sum(dims, keepdim=True) if dims else x * g
        if p == 2:
            nb = x * grad_output / norm.masked_fill(norm == 0, 1)
        elif p == float("inf"):
            mask = x.abs() == norm
            nb = x.sgn() * mask * grad_output / mask.sum(dims, keepdim=True)
        else:
            nb = x.sgn() * x.abs() ** (p - 1) * grad_output / norm.masked_fill(norm == 0, 1) ** (p - 1)
        invnorm = (norm + 1e-7).reciprocal()
        factor = invnorm * maxnorm
        return (factor * g - (maxnorm * invnorm * invnorm) * nb).where(norm > maxnorm, g),


@export()
def renorm(input, p, dim, maxnorm):
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    return apply_op(Renorm, (input,), {"p": p, "dim": normalize_dim(dim, input.ndim), "maxnorm": maxnorm})


@export(function=False)
def renorm_(self, p, dim, maxnorm):
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    return apply_op(Renorm, (self,), {"p": p, "dim": normalize_dim(dim, self.ndim), "maxnorm": maxnorm},
                    out_dtype=self.dtype, inplace=self)


# ---------------------------------------------------------------- counting and searching (no gradient)

@export()
def histc(input, bins=100, min=0, max=0):  # noqa: A002
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{input.dtype.short_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    x = input._data.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histogram(): max must be larger than min")
    inside = x[(x >= lo) & (x <= hi)]
    pos = ((inside - lo) * bins / (hi - lo)).astype(np.int64)
    pos[pos == bins] = bins - 1
    return _make(np.bincount(pos, minlength=bins).astype(input.dtype.np))


@export()
def bincount(input, weights=None, minlength=0):
    if input.dtype.is_floating_point or input.dtype.short_name == "Bool":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{input.dtype.short_name}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = input._data
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _make(np.bincount(x, minlength=minlength).astype(np.int64))
    if weights.ndim != 1 or weights.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = weights._data
    out_dtype = np.float32 if w.dtype == np.float32 else np.float64
    return _make(np.bincount(x, weights=w.astype(np.float64), minlength=minlength).astype(out_dtype))


def _side(right, side):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side "
                               "of left while right was True")
        return side
    return "right" if right else "left"


@export()
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    from ..tensor import Tensor

    side = _side(right, side)
    scalar = not isinstance(input, Tensor)
    values = np.asarray(input if scalar else input._data)
    seq = sorted_sequence._data
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
        seq = np.take_along_axis(seq, sorter._data, axis=-1)
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        if scalar or seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first "
                               "N-1 dimensions of boundaries tensor and input value tensor must match, but "
                               f"we got boundaries tensor {list(seq.shape)} and input value tensor "
                               f"{list(values.shape)}")
        rows, vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(r, v, side=side) for r, v in zip(rows, vals)]).reshape(values.shape)
    return _make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


@export()
def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@export()
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    from ..tensor import Tensor

    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _make(np.isin(a, b, invert=invert))

