"""softmax, log_softmax, the losses and ``linear``: the ops ``nn.functional`` is made of."""
import functools

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from .._meta import MetaArray, empty as meta_empty

from . import _float32_kernels as _k32
from ._util import export, formulas_on_arrays, max_keepdims, normalize_dim
from .core import Op, apply_op, result_dtype_many
from .linalg import Addmm, addmm, matmul
from .shape import T, _view_op

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction):
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


_F32 = np.dtype(np.float32)


def _as_rows(x, dim):
    """``x`` as the 2-D (rows, dim) array ATen's last-dim softmax kernels run on, when ``dim`` is
    float32 ``x``'s last non-trivial dim (every later size is 1: ATen's ``inner_size == 1``);
    else None. ATen makes the input contiguous first, as this does."""
    if x.dtype is not _F32 or x.ndim == 0 or x.size == 0:
        return None
    d = dim % x.ndim
    for n in x.shape[d + 1:]:
        if n != 1:
            return None
    return np.ascontiguousarray(x).reshape(-1, x.shape[d])


def _kernel_values(out, data):
    """A recorded backward formula's result (``create_graph=True``, a profiler) holding the
    kernel's values, so that its gradients are the same bits in every mode, as in PyTorch, where
    both run the one kernel. (Its graph is still the formula's, to differentiate again.) A meta
    result stays meta: the kernel ran on its zeros."""
    if out._data.__class__ is not MetaArray:
        out._data = data
    return out


class Softmax(Op):
    name = "SoftmaxBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim):
        rows = _as_rows(x, dim)
        if rows is not None:  # PyTorch's kernel: SLEEF's exp, its order of the sum
            return _k32.softmax_lastdim(rows).reshape(x.shape)
        e = np.exp(x - max_keepdims(x, dim))
        return e / e.sum(axis=dim, keepdims=True)

    def save(ctx, x, out, dim):
        ctx.save_result("result", out)

    def backward(ctx, g):
        y = ctx.result
        d = ctx._attrs["dim"]
        gd, yd = g._data, y._data
        rows = _as_rows(yd, d) if gd.dtype is yd.dtype and gd.shape == yd.shape else None
        if rows is not None:  # float32: PyTorch's kernel's bits
            data = _k32.softmax_backward_lastdim(_as_rows(gd, d), rows).reshape(yd.shape)
        if formulas_on_arrays() and gd.dtype is yd.dtype:
            if rows is not None:
                return _tensor.Tensor._make(data),
            return _tensor.Tensor._make(np.asarray(yd * (gd - (gd * yd).sum(axis=d, keepdims=True)))),
        out = y * (g - (g * y).sum(d, keepdim=True))
        return _kernel_values(out, data) if rows is not None else out,

    def jvp(x, out, dx, dim):
        return out * (dx - (dx * out).sum(dim, keepdim=True))


class LogSoftmax(Op):
    name = "LogSoftmaxBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim):
        rows = _as_rows(x, dim)
        if rows is not None:  # PyTorch's kernel: SLEEF's exp and log, its order of the sum
            return _k32.log_softmax_lastdim(rows).reshape(x.shape)
        shifted = x - max_keepdims(x, dim)
        log_sum = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        if type(shifted) is not np.ndarray:
            return shifted - log_sum
        shifted -= log_sum  # a fresh array: subtract in place
        return shifted

    def save(ctx, x, out, dim):
        ctx.save_result("result", out)

    def backward(ctx, g):
        y = ctx.result
        d = ctx._attrs["dim"]
        gd, yd = g._data, y._data
        if (yd.ndim == 2 and d == 1 and yd.dtype is _F32 and gd.dtype is _F32 and gd.shape == yd.shape
                and gd.flags.c_contiguous and yd.flags.c_contiguous and yd.size and formulas_on_arrays()):
            # the common case (a classifier's (batch, classes) float32 log-probabilities), with
            # nothing to reshape: what the lines below do
            return _tensor.Tensor._make(_k32.log_softmax_backward_lastdim(gd, yd)),
        rows = _as_rows(yd, d) if gd.dtype is yd.dtype and gd.shape == yd.shape else None
        if rows is not None:  # float32: PyTorch's kernel's bits
            data = _k32.log_softmax_backward_lastdim(_as_rows(gd, d), rows).reshape(yd.shape)
        if formulas_on_arrays() and gd.dtype is yd.dtype:
            if rows is not None:
                return _tensor.Tensor._make(data),
            scaled = np.exp(y._data)  # a fresh array: the rest happens in it
            scaled *= gd.sum(axis=d, keepdims=True)
            return _tensor.Tensor._make(np.subtract(gd, scaled, out=scaled)),
        out = g - y.exp() * g.sum(d, keepdim=True)
        return _kernel_values(out, data) if rows is not None else out,

    def jvp(x, out, dx, dim):
        return dx - (out.exp() * dx).sum(dim, keepdim=True)


class MseLoss(Op):
    name = "MseLossBackward0"
    saves_attrs = ("reduction",)

    def forward(x, t, reduction):
        d = (x - t) ** 2
        if reduction == 0:
            return d
        from .cascade_sum import cascade_sum  # ATen's apply_loss_reduction: sum(), mean() = sum / n

        total = cascade_sum(d)
        return np.asarray(total / d.dtype.type(d.size) if reduction == 1 else total, dtype=d.dtype)

    def save(ctx, x, t, out, reduction):
        ctx.save(self=x, target=t)

    def backward(ctx, g):
        x, t = ctx.self, ctx.target
        scale = 2.0 / x.numel() if ctx._attrs["reduction"] == 1 else 2.0
        gx = g * (x - t) * scale
        need = ctx.needs_input_grad
        return (gx if need[0] else None, -gx if need[1] else None)

    def jvp(x, t, out, dx, dt, reduction):
        d = (x - t) * (dx - dt) * 2.0
        return d.mean() if reduction == 1 else d.sum() if reduction == 2 else d


class NllLoss(Op):
    """Negative log likelihood over class log-probabilities (N, C) or (C,).

    ``total_weight``: the summed weight of the targets that count, when the caller knows it
    (``nll_loss`` does when no weight is given and no target can be ``ignore_index``: one per
    target), so that neither pass looks for ignored targets again."""

    name = "NllLossBackward0"

    def forward(x, target, weight, reduction, ignore_index, total_weight=None):
        x2 = x.reshape(1, -1) if x.ndim == 1 else x
        t = target.reshape(-1)
        n = x2.shape[0]
        if weight is None and n and (total_weight == n or not (t == ignore_index).any()):
            if reduction == 0:  # the common case: just pick
                picked = x2[_rows(n), t]
                return np.negative(picked, out=picked).reshape(target.shape)
            total = _k32.nll_picked_sum(x2, t, x.size >= _k32.FAST_MIN)  # ATen's order
            return np.asarray(total if reduction == 2 else total / x.dtype.type(n), dtype=x.dtype)
        w = np.ones(x2.shape[1], dtype=x.dtype) if weight is None else weight
        valid = t != ignore_index
        safe_t = np.where(valid, t, 0)
        picked = -x2[np.arange(n), safe_t] * w[safe_t] * valid
        if reduction == 0:
            return picked.reshape(target.shape).astype(x.dtype)
        if reduction == 2:
            return np.asarray(picked.sum(), dtype=x.dtype)
        total_w = (w[safe_t] * valid).sum()
        return np.asarray(picked.sum() / total_w, dtype=x.dtype)

    def save(ctx, x, out, target, weight, reduction, ignore_index, total_weight=None):
        ctx.save(self=x)
        dtype = x._data.dtype
        if total_weight is None:
            total_weight = _total_weight(target, weight, ignore_index, dtype)
        # as PyTorch's _saved_*; total_weight is left 0 for reduction="none", as ATen leaves it
        ctx._attrs = {"reduction": reduction, "ignore_index": ignore_index, "target": target, "weight": weight,
                      "total_weight": _tensor.Tensor._make(dtype.type(total_weight if reduction else 0))}

    def backward(ctx, g):
        """ATen's ``nll_loss_backward``: each counted row gets ``-(grad / total_weight)`` ("mean")
        or ``-grad``, times ``weight[target]``, at its target class; everything else is zero."""
        Tensor = _tensor.Tensor
        a = ctx._attrs
        if g._data.__class__ is MetaArray:  # a meta loss: the input's gradient has its shape, no values
            x = ctx.self._data
            return Tensor._make(meta_empty(x.shape, x.dtype)),
        xd = ctx.self._data
        reduction, weight, target, total = a["reduction"], a["weight"], a["target"], a["total_weight"]
        n = target.size
        # every target counts (with weight 1) when the total weight is their number, a number the
        # dtype holds exactly
        counted = (reduction != 0 and weight is None and total._data == n
                   and n <= _EXACT_COUNTS.get(xd.dtype, 0))
        rows, cols, w = _nll_picks(target, weight, a["ignore_index"], counted)
        shape = (1, xd.shape[0]) if xd.ndim == 1 else xd.shape
        if formulas_on_arrays() and g._data.dtype == xd.dtype:
            scale = g._data
            if reduction == 0:
                scale = scale.reshape(-1)[rows]
            elif reduction == 1 and rows.size:
                scale = scale / total._data
            scale = -scale
            grad = np.zeros(shape, dtype=xd.dtype)
            grad[rows, cols] = scale if w is None else w * scale
            return Tensor._make(grad.reshape(xd.shape)),
        # the same arithmetic through recorded ops (create_graph, or someone watching)
        mask = np.zeros(shape, dtype=xd.dtype)
        mask[rows, cols] = 1 if w is None else w
        if reduction == 0:
            scale = -(g.reshape(-1, 1) if xd.ndim > 1 else g.reshape(1))
        else:
            scale = -(g / total) if reduction == 1 and rows.size else -g
        return Tensor._make(mask.reshape(xd.shape)) * scale,

    def jvp(x, out, dx, target, weight, reduction, ignore_index, total_weight=None):
        # the loss is linear in x: its tangent is the same loss of the tangent
        return apply_op(NllLoss, (dx,), {"target": target, "weight": weight, "reduction": reduction,
                                         "ignore_index": ignore_index, "total_weight": total_weight})


# the largest count of targets each float dtype holds exactly (2 ** (mantissa bits + 1))
_EXACT_COUNTS = {np.dtype(np.float16): 2 ** 11, np.dtype(np.float32): 2 ** 24, np.dtype(np.float64): 2 ** 53}


@functools.lru_cache(maxsize=32)
def _rows(n):
    """``np.arange(n)`` for fancy-indexing one entry per row; shared, so read-only."""
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows


def _total_weight(target, weight, ignore_index, dtype):
    """The summed weight of the targets that are not ``ignore_index``."""
    valid = target.reshape(-1) != ignore_index
    if weight is None:
        return int(valid.sum())
    return (weight[np.where(valid, target.reshape(-1), 0)] * valid).sum(dtype=dtype)


def _nll_picks(target, weight, ignore_index, counted):
    """The (row, class) entries ``nll_loss`` reads, and their weights (None: all 1):
    one per target that is not ``ignore_index``. ``counted``: every target counts, weight 1."""
    t = target.reshape(-1)
    if counted:
        return _rows(t.size), t, None
    rows = np.flatnonzero(t != ignore_index)
    cols = t[rows]
    return rows, cols, None if weight is None else weight[cols]


class BinaryCrossEntropy(Op):
    name = "BinaryCrossEntropyBackward0"
    saves_attrs = ("reduction",)

    def forward(x, t, weight, reduction):
        with np.errstate(all="ignore"):
            logx = np.maximum(np.log(x), -100)
            log1mx = np.maximum(np.log1p(-x), -100)
        loss = -(t * logx + (1 - t) * log1mx)
        if weight is not None:
            loss = loss * weight
        return np.asarray(loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss,
                          dtype=x.dtype)

    def save(ctx, x, t, out, weight, reduction):
        ctx.save(self=x, target=t)
        ctx._attrs["weight"] = weight

    def backward(ctx, g):
        Tensor = _tensor.Tensor
        x, t = ctx.self, ctx.target
        eps = 1e-12
        gx = g * (x - t) / ((1 - x) * x).clamp_min(eps)
        w = ctx._attrs["weight"]
        if w is not None:
            gx = gx * Tensor._make(w)
        if ctx._attrs["reduction"] == 1:
            gx = gx / x.numel()
        gt = None
        if ctx.needs_input_grad[1]:  # d/dt = log(1 - x) - log(x), with PyTorch's clamp at -100
            gt = g * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100))
            if w is not None:
                gt = gt * Tensor._make(w)
            if ctx._attrs["reduction"] == 1:
                gt = gt / x.numel()
        return gx, gt

    def jvp(x, t, out, dx, dt, weight, reduction):
        slope_x = (x - t) / ((1 - x) * x).clamp_min(1e-12)
        slope_t = (-x).log1p().clamp_min(-100) - x.log().clamp_min(-100)
        return _weighted_reduction(dx * slope_x + dt * slope_t, weight, reduction)


class BCEWithLogits(Op):
    name = "BinaryCrossEntropyWithLogitsBackward0"
    saves_attrs = ("reduction",)

    def forward(x, t, weight, pos_weight, reduction):
        # log(1 + exp(-|x|)) + max(x, 0) - x*t, the stable form
        if pos_weight is None:
            loss = np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))
        else:
            lw = 1 + (pos_weight - 1) * t
            loss = (1 - t) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
        if weight is not None:
            loss = loss * weight
        return np.asarray(loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss,
                          dtype=x.dtype)

    def save(ctx, x, t, out, weight, pos_weight, reduction):
        ctx.save(self=x, target=t)
        ctx._attrs["weight"] = weight
        ctx._attrs["pos_weight"] = pos_weight

    def backward(ctx, g):
        Tensor = _tensor.Tensor
        x, t = ctx.self, ctx.target
        pw = ctx._attrs["pos_weight"]
        s = x.sigmoid()
        if pw is None:
            gx = g * (s - t)
        else:
            pw_t = Tensor._make(pw)
            gx = g * ((pw_t * t + 1 - t) * s - pw_t * t)
        w = ctx._attrs["weight"]
        if w is not None:
            gx = gx * Tensor._make(w)
        if ctx._attrs["reduction"] == 1:
            gx = gx / x.numel()
        need = ctx.needs_input_grad
        gt = None
        if need[1]:
            gt = -g * x if pw is None else g * -x
            if ctx._attrs["reduction"] == 1:
                gt = gt / x.numel()
        return gx, gt

    def jvp(x, t, out, dx, dt, weight, pos_weight, reduction):
        Tensor = _tensor.Tensor
        s = x.sigmoid()
        if pos_weight is None:
            slope_x, slope_t = s - t, -x
        else:
            pw = Tensor._make(pos_weight)
            softplus_neg_x = (-x.abs()).exp().log1p() + (-x).clamp_min(0)
            slope_x = (pw * t + 1 - t) * s - pw * t
            slope_t = -x + (pw - 1) * softplus_neg_x
        return _weighted_reduction(dx * slope_x + dt * slope_t, weight, reduction)


def _weighted_reduction(loss, weight, reduction):
    if weight is not None:
        loss = loss * _tensor.Tensor._make(weight)
    return loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss


# ---------------------------------------------------------------- the functions users call

def _softmax_dim(x, dim):
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return normalize_dim(dim, x.ndim)


@export()
def softmax(input, dim=None, dtype=None, _stacklevel=3):
    if dtype is not None:
        input = input.to(dtype)
    return apply_op(Softmax, (input,), {"dim": _softmax_dim(input, dim)})


@export()
def log_softmax(input, dim=None, dtype=None, _stacklevel=3):
    if dtype is not None:
        input = input.to(dtype)
    return apply_op(LogSoftmax, (input,), {"dim": _softmax_dim(input, dim)})


def _check_same_size(input, target, name):
    if input.shape != target.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
            "same size.", UserWarning, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_same_size(input, target, "mse_loss")
    if input.shape != target.shape:
        shape = np.broadcast_shapes(input.shape, target.shape)
        input, target = input.expand(shape), target.expand(shape)
    result_dtype = result_dtype_many((input, target))  # float32 with int64 targets: float32
    if target.dtype is not result_dtype and not target.requires_grad:
        target = _tensor.Tensor._make(target._data.astype(result_dtype.np))
    return apply_op(MseLoss, (input, target), {"reduction": _reduction_enum(reduction)},
                    out_dtype=None if input.dtype is result_dtype else result_dtype)


def _check_nll_shapes(x_shape, t_shape):
    """PyTorch's shape checks (``nll_loss_nd``, ``nll_loss``, ``nll_loss2d``), in its order and words."""
    if len(x_shape) < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {len(x_shape)})")
    if len(x_shape) != 1 and x_shape[0] != (t_shape[0] if t_shape else 0):  # a 0-d target reads as 0
        raise ValueError(f"Expected input batch_size ({x_shape[0]}) to match target batch_size "
                         f"({t_shape[0] if t_shape else 0}).")
    if len(x_shape) <= 2:
        if len(t_shape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if len(x_shape) == 1 and t_shape not in ((), (1,)):
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t_shape[0]}")
    elif len(x_shape) == 4:
        if len(t_shape) != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {len(t_shape)}")
        if t_shape[1:] != x_shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(x_shape)} , target: {list(t_shape)}")
    elif t_shape[1:] != x_shape[2:]:
        raise RuntimeError(f"Expected target size {list(x_shape[:1] + x_shape[2:])}, got {list(t_shape)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.short_name}")
    x_shape, t_shape = input._data.shape, target._data.shape
    _check_nll_shapes(x_shape, t_shape)
    t = target._array()
    c = x_shape[-1] if len(x_shape) <= 2 else x_shape[1]
    in_range = True
    if t.size and t.__class__ is not MetaArray:  # (a meta target has no values to check)
        as_unsigned = t.astype(np.int64, copy=False).view(np.uint64)  # negative targets become huge
        if as_unsigned.max() >= c:
            in_range = False
            bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
            if bad.size:
                raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")
    if input.ndim > 2:  # (N, C, d1, ...) -> (N*d1*..., C)
        moved = input.movedim(1, -1)
        flat = moved.reshape(-1, c)
        out = nll_loss(flat, target.reshape(-1), weight, ignore_index=ignore_index, reduction=reduction)
        return out.reshape(target.shape) if reduction == "none" else out
    # every target is a class in [0, C), so none is ignore_index when that lies outside: each counts once
    counted = weight is None and in_range and not 0 <= ignore_index < c
    return apply_op(NllLoss, (input,), {"target": t, "weight": None if weight is None else weight._data,
                                        "reduction": _reduction_enum(reduction),
                                        "ignore_index": ignore_index,
                                        "total_weight": t.size if counted else None})


_CLASS_DIM = ({"dim": 0}, {"dim": 1})  # log_softmax's attributes, shared: nobody writes into them


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    class_dim = 1 if input._data.ndim > 1 else 0
    if target._data.dtype.kind == "f":  # class probabilities
        logp = log_softmax(input, class_dim)
        loss = -(logp * target).sum(class_dim)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    logp = apply_op(LogSoftmax, (input,), _CLASS_DIM[class_dim])  # log_softmax(input, class_dim)
    if label_smoothing:
        c = input.shape[class_dim]
        nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
        smooth = -logp.sum(class_dim)
        smooth = smooth.mean() if reduction == "mean" else smooth.sum() if reduction == "sum" else smooth
        return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if input.shape != target.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size.")
    return apply_op(BinaryCrossEntropy, (input, target),
                    {"weight": None if weight is None else weight._data,
                     "reduction": _reduction_enum(reduction)})


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if input.shape != target.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return apply_op(BCEWithLogits, (input, target),
                    {"weight": None if weight is None else weight._data,
                     "pos_weight": None if pos_weight is None else pos_weight._data,
                     "reduction": _reduction_enum(reduction)})


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    d = (input - target).abs()
    return d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d


_NO_ATTRS = {}


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: AddmmBackward0 (after TBackward0 for ``weight.t()``) for 2-D
    input, as PyTorch."""
    x, w = input._data, weight._data
    x_shape = x.shape
    if x_shape[-1:] != w.shape[-1:]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(input.shape[:-1]))}x{input.shape[-1]} "
            f"and {weight.shape[1]}x{weight.shape[0]})")
    if len(x_shape) == 2 and bias is not None:
        dtype = w.dtype
        if w.ndim == 2 and x.dtype is dtype and bias._data.dtype is dtype:
            # nn.Linear's case: what addmm() and t() would check holds already, so run their ops
            # (no attributes: alpha = beta = 1)
            return apply_op(Addmm, (bias, input, _view_op(T, weight, _NO_ATTRS)))
        return addmm(bias, input, weight.t())
    if bias is None:
        return matmul(input, weight.t())
    batch = input.shape[:-1]
    out = addmm(bias, input.reshape(-1, input.shape[-1]), weight.t())
    return out.view(*batch, weight.shape[0])
