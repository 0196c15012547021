"""softmax, log_softmax, the losses and ``linear``: the ops ``nn.functional`` is made of."""
import functools

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from ._util import export, formulas_on_arrays, normalize_dim
from .core import Op, apply_op
from .linalg import _ADDMM_PLAIN, Addmm, addmm, matmul
from .shape import T, _view_op

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction):
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


class Softmax(Op):
    name = "SoftmaxBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    def save(ctx, x, out, dim):
        ctx.save_result("result", out)

    def backward(ctx, g):
        y = ctx.result
        d = ctx._attrs["dim"]
        if formulas_on_arrays() and g._data.dtype is y._data.dtype:
            gd, yd = g._data, y._data
            return _tensor.Tensor._make(np.asarray(yd * (gd - (gd * yd).sum(axis=d, keepdims=True)))),
        return y * (g - (g * y).sum(d, keepdim=True)),

    def jvp(x, out, dx, dim):
        return out * (dx - (dx * out).sum(dim, keepdim=True))


class LogSoftmax(Op):
    name = "LogSoftmaxBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim):
        shifted = x - x.max(axis=dim, keepdims=True)
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
        if formulas_on_arrays() and g._data.dtype is y._data.dtype:
            gd = g._data
            scaled = np.exp(y._data)
            scaled *= gd.sum(axis=d, keepdims=True)
            return _tensor.Tensor._make(np.asarray(gd - scaled)),
        return g - y.exp() * g.sum(d, keepdim=True),

    def jvp(x, out, dx, dim):
        return dx - (out.exp() * dx).sum(dim, keepdim=True)


class MseLoss(Op):
    name = "MseLossBackward0"
    saves_attrs = ("reduction",)

    def forward(x, t, reduction):
        d = (x - t) ** 2
        return np.asarray(d.mean() if reduction == 1 else d.sum() if reduction == 2 else d, dtype=d.dtype)

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
    """Negative log likelihood over class log-probabilities (N, C) or (C,)."""

    name = "NllLossBackward0"
    saves_attrs = ("reduction", "ignore_index")

    def forward(x, target, weight, reduction, ignore_index):
        x2 = x.reshape(1, -1) if x.ndim == 1 else x
        t = target.reshape(-1)
        n = x2.shape[0]
        if weight is None and n and not (t == ignore_index).any():  # the common case: just pick
            picked = x2[_rows(n), t]
            np.negative(picked, out=picked)
            if reduction == 0:
                return picked.reshape(target.shape)
            total = picked.sum()
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

    def save(ctx, x, out, target, weight, reduction, ignore_index):
        ctx.save(self=x)
        ctx._attrs["target"] = target
        ctx._attrs["weight"] = weight

    def backward(ctx, g):
        Tensor = _tensor.Tensor
        a = ctx._attrs
        x = ctx.self
        coeff = _nll_coeff(x._data, a["target"], a["weight"], a["reduction"], a["ignore_index"])
        if a["reduction"] == 0:
            g = g.reshape(-1, 1) if x.ndim > 1 else g.reshape(1)
        if formulas_on_arrays() and g._data.dtype == coeff.dtype:
            coeff *= g._data
            return Tensor._make(coeff),
        return Tensor._make(coeff) * g,

    def jvp(x, out, dx, target, weight, reduction, ignore_index):
        # the loss is linear in x: its tangent is the same loss of the tangent
        return apply_op(NllLoss, (dx,), {"target": target, "weight": weight, "reduction": reduction,
                                         "ignore_index": ignore_index})


@functools.lru_cache(maxsize=32)
def _rows(n):
    """``np.arange(n)`` for fancy-indexing one entry per row; shared, so read-only."""
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows


def _nll_coeff(x, target, weight, reduction, ignore_index):
    """d nll_loss / d x before the incoming gradient: -weight[target] (over the total weight for
    "mean") at each row's target class, zero elsewhere."""
    shape = (1, x.shape[0]) if x.ndim == 1 else x.shape
    t = target.reshape(-1)
    n = shape[0]
    coeff = np.zeros(shape, dtype=x.dtype)
    if weight is None and n and not (t == ignore_index).any():
        one = x.dtype.type(1)
        coeff[_rows(n), t] = -one / x.dtype.type(n) if reduction == 1 else -one
        return coeff.reshape(x.shape)
    w = np.ones(shape[1], dtype=x.dtype) if weight is None else weight
    valid = t != ignore_index
    safe_t = np.where(valid, t, 0)
    coeff[np.arange(n), safe_t] = -w[safe_t] * valid
    if reduction == 1:
        coeff /= (w[safe_t] * valid).sum()
    return coeff.reshape(x.shape)


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
    return apply_op(MseLoss, (input, target), {"reduction": _reduction_enum(reduction)})


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    if target.dtype.np.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.short_name}")
    if input.ndim == 2 and target.ndim == 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]}).")
    t = target._array()
    shape = input._data.shape
    c = shape[-1] if len(shape) <= 2 else shape[1]
    as_unsigned = t.astype(np.int64, copy=False).view(np.uint64)  # negative targets become huge
    if (as_unsigned >= c).any():
        bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
        if bad.size:
            raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")
    if input.ndim > 2:  # (N, C, d1, ...) -> (N*d1*..., C)
        moved = input.movedim(1, -1)
        flat = moved.reshape(-1, c)
        out = nll_loss(flat, target.reshape(-1), weight, ignore_index=ignore_index, reduction=reduction)
        return out.reshape(target.shape) if reduction == "none" else out
    return apply_op(NllLoss, (input,), {"target": t, "weight": None if weight is None else weight._data,
                                        "reduction": _reduction_enum(reduction),
                                        "ignore_index": ignore_index})


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if target.dtype.is_floating_point:  # class probabilities
        logp = log_softmax(input, 1 if input.ndim > 1 else 0)
        loss = -(logp * target).sum(1 if input.ndim > 1 else 0)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    logp = log_softmax(input, 1 if input.ndim > 1 else 0)
    if label_smoothing:
        c = input.shape[1 if input.ndim > 1 else 0]
        nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
        smooth = -logp.sum(1 if input.ndim > 1 else 0)
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
            return apply_op(Addmm, (bias, input, _view_op(T, weight, _NO_ATTRS)), _ADDMM_PLAIN)
        return addmm(bias, input, weight.t())
    if bias is None:
        return matmul(input, weight.t())
    batch = input.shape[:-1]
    out = addmm(bias, input.reshape(-1, input.shape[-1]), weight.t())
    return out.view(*batch, weight.shape[0])
