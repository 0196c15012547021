"""``gradwalk.nn.functional``: PyTorch's ``torch.nn.functional``.

The formulas live with the ops (``ops/activation.py`` for softmax, losses and linear,
``ops/nn_ops.py`` for convolution, pooling, normalization, embedding and the activations with
nodes of their own); this module only checks arguments the way PyTorch does and routes to them.
"""
import numpy as np

from .._meta import MetaArray, empty as _meta_empty
from ..ops import activation as _activation
from ..ops import nn_ops
from ..ops.activation import linear as _linear
from ..ops.core import Op, apply_op, observers as _observers
from ..ops.pointwise import relu as _relu, sigmoid, tanh  # noqa: F401
from ..ops.random_ops import _vmap_random


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (``ops/activation.py``); under a profiler, one ``aten::linear``
    event holds the ops it is made of, as PyTorch records it."""
    if _observers.profiler is None:
        return _linear(input, weight, bias)
    from ..profiler import composite_span

    with composite_span("aten::linear", (input, weight, bias)):
        return _linear(input, weight, bias)


def relu(input, inplace=False):
    """``F.relu(x, inplace=True)`` rectifies ``x`` itself (``relu_``), as PyTorch's does."""
    return input.relu_() if inplace else _relu(input)


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:  # x itself is rectified (PyTorch's node is then LeakyReluBackward1)
        return apply_op(nn_ops.LeakyRelu, (input,), {"negative_slope": negative_slope},
                        out_dtype=input.dtype, inplace=input)
    return apply_op(nn_ops.LeakyRelu, (input,), {"negative_slope": negative_slope})


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return apply_op(nn_ops.Gelu, (input,), {"approximate": approximate})


def silu(input, inplace=False):
    return apply_op(nn_ops.Silu, (input,))


def softplus(input, beta=1.0, threshold=20.0):
    return apply_op(nn_ops.Softplus, (input,), {"beta": beta, "threshold": threshold})


def elu(input, alpha=1.0, inplace=False):
    return apply_op(nn_ops.Elu, (input,), {"alpha": alpha})


def hardshrink(input, lambd=0.5):
    from ..ops.elementwise_more import hardshrink

    return hardshrink(input, lambd)


def celu(input, alpha=1.0, inplace=False):
    from ..ops import elementwise_more as M

    return M.celu_(input, alpha) if inplace else M.celu(input, alpha)


def selu(input, inplace=False):
    from ..ops import elementwise_more as M

    return M.selu_(input) if inplace else M.selu(input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    from ..ops import elementwise_more as M

    return (M.rrelu_ if inplace else M.rrelu)(input, lower, upper, training)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return apply_op(nn_ops.Hardtanh, (input,), {"min_val": min_val, "max_val": max_val})


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0)


def logsigmoid(input):
    return apply_op(nn_ops.LogSigmoid, (input,))


log_sigmoid = logsigmoid
erf = nn_ops.erf


@_vmap_random("dropout")  # under vmap: its randomness flag (func/_batching.py)
def dropout(input, p=0.5, training=True, inplace=False):
    """``input * mask / (1 - p)`` (MulBackward0, as PyTorch on CPU); the input itself when
    there is nothing to drop (``p=0`` or not training). The mask is PyTorch's:
    ``empty_like(input).bernoulli_(1 - p).div_(1 - p)``, on the default generator."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    from ..tensor import Tensor

    if p == 1:
        noise = Tensor._make(np.zeros((), dtype=input._data.dtype))
    elif input._data.__class__ is MetaArray:  # nothing drawn (PyTorch's generator is not touched either)
        noise = Tensor._make(input._data.copy())
    else:
        from .. import _distributions, random
        from ..ops.random_ops import _memory_order

        data = input._array()
        noise = np.empty_like(data)  # the input's layout, as empty_like: drawn in storage order
        keep = _distributions.bernoulli_scalar(random.default_generator, data.size, 1 - p)
        view = _memory_order(noise)
        view[...] = keep.reshape(view.shape)
        noise /= data.dtype.type(1 - p)  # noise.div_(1 - p), in the input's dtype
        noise = Tensor._make(noise)
    return input.mul_(noise) if inplace else input * noise


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return nn_ops.convolution(input, weight, bias, stride, padding, dilation, groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    out, indices = nn_ops.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


max_pool2d_with_indices = nn_ops.max_pool2d_with_indices


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return nn_ops.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    return nn_ops.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if input.dtype.np.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got torch.{input.dtype.legacy_name} instead (while checking arguments for embedding)")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    indices = input._data
    if indices.size and indices.__class__ is not MetaArray and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:  # rescale the looked-up rows in place, as PyTorch's embedding_renorm_
        rows = np.unique(indices)
        norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=1)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight._data[rows] *= scale[:, None].astype(weight._data.dtype)
    return nn_ops.embedding_rows(weight, indices, padding_idx)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def one_hot(tensor, num_classes=-1):
    from ..tensor import Tensor

    n = int(tensor._data.max()) + 1 if num_classes < 0 else num_classes
    if tensor._data.__class__ is MetaArray:  # (no values to look up)
        return Tensor._make(_meta_empty(tensor.shape + (n,), np.int64))
    return Tensor._make(np.eye(n, dtype=np.int64)[tensor._data])


def pad(input, pad, mode="constant", value=None):
    """Constant padding built from ``cat``; reflect / replicate / circular padding as one
    ``index_select`` per padded dimension (so both differentiate; PyTorch's nodes are
    ReflectionPad2DBackward0 etc., gradwalk's IndexSelectBackward0)."""
    from ..ops import functions as F

    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode != "constant":
        return _index_pad(input, pad, mode)
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got "
            f"padding length {len(pad)} and input of dimension {input.ndim}")
    out = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before < 0 or after < 0:  # negative padding crops
            out = out.narrow(dim, max(-before, 0),
                             out.shape[dim] - max(-before, 0) - max(-after, 0))
            before, after = max(before, 0), max(after, 0)
        parts = []
        if before:
            shape = list(out.shape)
            shape[dim] = before
            parts.append(F.full(shape, value or 0.0, dtype=input.dtype, device=input.device))
        parts.append(out)
        if after:
            shape = list(out.shape)
            shape[dim] = after
            parts.append(F.full(shape, value or 0.0, dtype=input.dtype, device=input.device))
        out = F.cat(parts, dim) if len(parts) > 1 else out
    return out


def _index_pad(input, pad, mode):
    import numpy as np

    from ..ops import functions as F

    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for i in range(k):
        dim = input.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        n = input.shape[dim]
        if mode == "reflect" and (before >= n or after >= n):
            raise RuntimeError(
                f"Argument #{2 + 2 * k}: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
                f"{list(input.shape)}")
        if mode == "circular" and (before > n or after > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "reflect":
            index = np.arange(-before, n + after)
            index = np.where(index < 0, -index, index)
            index = np.where(index >= n, 2 * (n - 1) - index, index)
        elif mode == "replicate":
            index = np.clip(np.arange(-before, n + after), 0, n - 1)
        else:  # circular: negative padding crops first, then the rest wraps around the crop
            lo, hi = max(-before, 0), n - max(-after, 0)
            index = lo + np.arange(-max(before, 0), hi - lo + max(after, 0)) % (hi - lo)
        out = F.index_select(out, dim, F.tensor(index.astype(np.int64)))
    return out


# ---------------------------------------------------------------- average pooling, transposed conv

from ..ops.pooling import adaptive_avg_pool2d, avg_pool2d, conv_transpose2d  # noqa: E402,F401
from ..ops.misc import huber_loss, scaled_dot_product_attention  # noqa: E402,F401
from ..ops import misc as _misc  # noqa: E402


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: ``input * noise`` with one draw per (sample, channel), PyTorch's
    ``empty(N, C, 1, 1).bernoulli_(1 - p).div_(1 - p)`` on the default generator."""
    import warnings

    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and silence "
                      "this warning, please use dropout instead. Note that dropout2d exists to provide "
                      "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
                      "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                      "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
                      "is the channel dim. This behavior will change in a future release to interpret "
                      "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
                      "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    if p == 0 or not training or input.numel() == 0:
        return input
    from ..ops import functions as ops

    noise_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    if p == 1:
        noise = ops.zeros(noise_shape, dtype=input.dtype)
    else:
        noise = ops.empty(noise_shape, dtype=input.dtype).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each (sample, channel) normalised over its own spatial elements: as PyTorch's
    ``at::instance_norm``, a ``batch_norm`` over the input viewed as one sample of N*C channels
    (weight, bias and running stats repeated N times), viewed back."""
    if use_input_stats:
        spatial = int(np.prod(input.shape[2:], dtype=np.int64))
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[0], input.shape[1]

    def repeat(t):
        return None if t is None else t.repeat(b)

    mean_, var_ = repeat(running_mean), repeat(running_var)
    shape = (1, b * c) + tuple(input.shape[2:])
    out = batch_norm(input.contiguous().view(shape), mean_, var_, repeat(weight), repeat(bias),
                     use_input_stats, momentum, eps)
    from ..grad_mode import no_grad

    with no_grad():  # the repeated running stats, averaged back into the caller's
        if running_mean is not None:
            running_mean.copy_(mean_.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(var_.view(b, c).mean(0))
    return out.view(input.shape)


class _Threshold(Op):
    """``F.threshold(x, threshold, value)``: ``x`` where ``x > threshold``, else ``value``. Its
    gradient passes where ``x > threshold`` (PyTorch's ``threshold_backward(grad, self, threshold)``)."""

    name = "ThresholdBackward0"
    saves_attrs = ("threshold",)

    def forward(x, threshold, value):
        return np.where(x > threshold, x, np.asarray(value, dtype=x.dtype)).astype(x.dtype, copy=False)

    def save(ctx, x, out, threshold, value):
        ctx.save(self=x)

    def backward(ctx, g):
        return _threshold_backward(g, ctx.self, ctx._attrs["threshold"]),

    def jvp(x, out, dx, threshold, value):
        return _threshold_backward(dx, x, threshold)


class _ThresholdInplace(_Threshold):
    """``F.threshold(x, ..., inplace=True)``: PyTorch's ``threshold_`` saves (a copy of) the input
    as it was, so the gradient passes where the old ``x > threshold``."""

    name = "ThresholdBackward1"


def _threshold_backward(grad, y, threshold):
    from ..ops.pointwise import threshold_backward

    return threshold_backward(grad, y if threshold == 0 else y - threshold)


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return apply_op(_ThresholdInplace, (input,), {"threshold": threshold, "value": value},
                        out_dtype=input.dtype, inplace=input)
    return apply_op(_Threshold, (input,), {"threshold": threshold, "value": value})


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


# ---------------------------------------------------------------- softmax and the losses: PyTorch's signatures
# (``_stacklevel`` before ``dtype``; the deprecated ``size_average=``/``reduce=`` turned into the
# ``reduction`` they mean, as ``torch.nn._reduction.legacy_get_string`` does, with its warning)

from ._reduction import get_softmax_dim as _get_softmax_dim, legacy_get_string as _legacy  # noqa: E402


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.ndim, _stacklevel)
    return _activation.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return _activation.log_softmax(input, dim, dtype=dtype)


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _legacy(size_average, reduce)
    return reduction


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _activation.mse_loss(input, target, reduction=_reduction(size_average, reduce, reduction),
                                weight=weight)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _activation.l1_loss(input, target, reduction=_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _misc.smooth_l1_loss(input, target, reduction=_reduction(size_average, reduce, reduction),
                                beta=beta)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _activation.nll_loss(input, target, weight, ignore_index=ignore_index,
                                reduction=_reduction(size_average, reduce, reduction))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return _activation.cross_entropy(input, target, weight, ignore_index=ignore_index,
                                     reduction=_reduction(size_average, reduce, reduction),
                                     label_smoothing=label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    return _activation.binary_cross_entropy(input, target, weight,
                                            reduction=_reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    return _activation.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(size_average, reduce, reduction),
        pos_weight=pos_weight)


# (ops/nn_more.py: PyTorch's composites and one-node ops that were missing here)
from ..ops.nn_more import (adaptive_avg_pool1d, alpha_dropout, avg_pool1d, cosine_similarity,  # noqa: E402,F401
                           feature_alpha_dropout, kl_div, max_pool1d, pairwise_distance, pixel_shuffle,
                           pixel_unshuffle, prelu, rms_norm, group_norm, conv1d, conv_transpose1d)
from ..ops.products import pdist  # noqa: E402,F401
