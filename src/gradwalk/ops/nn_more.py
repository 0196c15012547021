"""``torch.nn.functional`` ops gradwalk lacked (``pixel_shuffle``, ``prelu``, ``rms_norm``,
``cosine_similarity``, ``kl_div``, the 1-d pools, ``alpha_dropout``, ``constant_pad_nd``), and
the ``torch.*`` forms of the functional ops PyTorch exposes at the top level
(``torch.conv2d``, ``torch.dropout``, ``torch.layer_norm``, ``torch.batch_norm``, ...) with
PyTorch's positional signatures there (``torch.embedding(weight, indices)``,
``torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
cudnn_enabled)``, ``torch.kl_div(input, target, reduction=1)`` with ATen's reduction number).

The 1-d pools are PyTorch's composites: unsqueeze, the 2-d pool, squeeze (its graph has the same
three nodes); ``cosine_similarity``, ``kl_div``, ``rms_norm`` and ``alpha_dropout`` are
composites of existing ops as in ATen. ``pixel_shuffle``, ``prelu`` and ``constant_pad_nd`` are
one node each, as PyTorch records them.
"""
import math

import numpy as np

from ._util import export, normalize_dim
from .core import Op, apply_op


def _nnF():
    from ..nn import functional  # (at call time: nn.functional imports the ops)

    return functional


# ---------------------------------------------------------------- one-node ops

class PixelShuffle(Op):
    name = "PixelShuffleBackward0"
    saves_attrs = ("upscale_factor",)

    def forward(x, upscale_factor):
        r = upscale_factor
        *lead, c, h, w = x.shape
        out = x.reshape(*lead, c // (r * r), r, r, h, w)
        n = len(lead)
        out = out.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
        return np.ascontiguousarray(out).reshape(*lead, c // (r * r), h * r, w * r)

    def backward(ctx, g):
        return pixel_unshuffle(g, ctx._attrs["upscale_factor"]),

    def jvp(x, out, dx, upscale_factor):
        return pixel_shuffle(dx, upscale_factor)


class PixelUnshuffle(Op):
    name = "PixelUnshuffleBackward0"
    saves_attrs = ("downscale_factor",)

    def forward(x, downscale_factor):
        r = downscale_factor
        *lead, c, h, w = x.shape
        out = x.reshape(*lead, c, h // r, r, w // r, r)
        n = len(lead)
        out = out.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
        return np.ascontiguousarray(out).reshape(*lead, c * r * r, h // r, w // r)

    def backward(ctx, g):
        return pixel_shuffle(g, ctx._attrs["downscale_factor"]),

    def jvp(x, out, dx, downscale_factor):
        return pixel_unshuffle(dx, downscale_factor)


@export(method=False)
def pixel_shuffle(input, upscale_factor):
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    c, r = input.shape[-3], upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return apply_op(PixelShuffle, (input,), {"upscale_factor": r})


@export(method=False)
def pixel_unshuffle(input, downscale_factor):
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    h, w, r = input.shape[-2], input.shape[-1], downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                           f"{h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                           f"{w} is not divisible by {r}")
    return apply_op(PixelUnshuffle, (input,), {"downscale_factor": r})


class Prelu(Op):
    """``prelu(x, w)``: x where positive, ``w * x`` elsewhere; ``w`` one value or one per
    channel (dim 1). ATen's ``_prelu_kernel`` and its backward."""

    name = "PreluKernelBackward0"

    def forward(x, w):
        return np.where(x > 0, x, w * x).astype(x.dtype, copy=False)

    def save(ctx, x, w, out):
        ctx.save(self=x, weight=w)

    def backward(ctx, g):
        from . import functions as F

        x, w = ctx._unpacked("self"), ctx._unpacked("weight")
        positive = x > 0
        gx = F.where(positive, g, w * g) if ctx.needs_input_grad[0] else None
        gw = F.where(positive, 0.0, x * g).sum_to_size(w.shape) if ctx.needs_input_grad[1] else None
        return gx, gw

    def jvp(x, w, out, dx, dw):
        from . import functions as F

        return F.where(x > 0, dx, w * dx + dw * x)


@export()
def prelu(input, weight):
    if weight.ndim > 1 or (weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1])):
        channels = input.shape[1] if input.ndim >= 2 else 1
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if weight.numel() != 1 and input.ndim >= 2:
        weight = weight.reshape([1, -1] + [1] * (input.ndim - 2))  # (ATen's view: a ViewBackward0 edge)
    return apply_op(Prelu, (input, weight))


class ConstantPadNd(Op):
    name = "ConstantPadNdBackward0"
    saves_attrs = ("pad",)

    def forward(x, pad, value):
        n = len(pad) // 2
        widths = [(0, 0)] * (x.ndim - n) + [(pad[2 * i], pad[2 * i + 1]) for i in range(n)][::-1]
        crop = tuple(slice(max(-lo, 0), x.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))
        out = x[crop]
        return np.pad(out, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], constant_values=value)

    def backward(ctx, g):
        return constant_pad_nd(g, [-p for p in ctx._attrs["pad"]]),

    def jvp(x, out, dx, pad, value):
        return constant_pad_nd(dx, pad, 0)


@export(method=False)
def constant_pad_nd(input, pad, value=0):
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {input.ndim} dimensions.")
    return apply_op(ConstantPadNd, (input,), {"pad": tuple(pad), "value": value})


class NativeGroupNorm(Op):
    """``group_norm``: each sample's channels cut into ``group`` groups, each group normalized
    by its own mean and variance, then scaled and shifted per channel (ATen's
    ``native_group_norm``; gradwalk keeps only its first output)."""

    name = "NativeGroupNormBackward0"
    saves_attrs = ("N", "C", "HxW", "group", "eps")

    def forward(x, *affine, N, C, HxW, group, eps, has_weight, has_bias):
        xg = x.reshape(N, group, -1)
        mean = xg.mean(axis=2, keepdims=True)
        rstd = 1 / np.sqrt(((xg - mean) ** 2).mean(axis=2, keepdims=True) + eps)
        out = ((xg - mean) * rstd).reshape(N, C, -1)
        if has_weight:
            out = out * affine[0].reshape(1, C, 1)
        if has_bias:
            out = out + affine[-1].reshape(1, C, 1)
        return out.reshape(x.shape).astype(x.dtype, copy=False)

    def save(ctx, x, *affine, out, N, C, HxW, group, eps, has_weight, has_bias):
        ctx.save(input=x, weight=affine[0] if has_weight else None)
        ctx._attrs["affine"] = (has_weight, has_bias)

    def backward(ctx, g):
        """``native_group_norm_backward``: with x_hat the normalized input and dy = g * weight,
        dx = rstd * (dy - mean(dy) - x_hat * mean(dy * x_hat)) over each group."""
        a = ctx._attrs
        n, c, group, eps = a["N"], a["C"], a["group"], a["eps"]
        has_weight, has_bias = a["affine"]
        x, w = ctx._unpacked("input"), ctx._unpacked("weight")
        xg = x.reshape(n, group, -1)
        mean = xg.mean(2, keepdim=True)
        rstd = ((xg - mean) ** 2).mean(2, keepdim=True).add(eps).rsqrt()
        x_hat = ((xg - mean) * rstd).reshape(n, c, -1)
        g3 = g.reshape(n, c, -1)
        dy = g3 * w.reshape(1, c, 1) if has_weight else g3
        dyg, xhg = dy.reshape(n, group, -1), x_hat.reshape(n, group, -1)
        dx = (rstd * (dyg - dyg.mean(2, keepdim=True) - xhg * (dyg * xhg).mean(2, keepdim=True))).reshape(x.shape)
        grads = [dx if ctx.needs_input_grad[0] else None]
        if has_weight:
            grads.append((g3 * x_hat).sum((0, 2)))
        if has_bias:
            grads.append(g3.sum((0, 2)))
        return tuple(grads)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in "
                               f"input, but got {name} of shape {list(t.shape)} and input of shape "
                               f"{list(input.shape)}")
    affine = tuple(t for t in (weight, bias) if t is not None)
    attrs = {"N": n, "C": c, "HxW": input.numel() // max(n * c, 1), "group": num_groups, "eps": eps,
             "has_weight": weight is not None, "has_bias": bias is not None}
    return apply_op(NativeGroupNorm, (input,) + affine, attrs)


@export("group_norm", method=False)
def torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return group_norm(input, num_groups, weight, bias, eps)


def _single(v):
    return (int(v[0]) if isinstance(v, (tuple, list)) else int(v),)


def _as_2d(attrs):
    """A 1-d convolution's arguments as those of the 2-d one over a height of 1."""
    return {"stride": (1,) + attrs["stride"], "padding": (0,) + attrs["padding"],
            "dilation": (1,) + attrs["dilation"], "groups": attrs["groups"]}


class Convolution1d(Op):
    """``conv1d``: the 2-d convolution's arrays over a height of 1, under the same one node
    (``ConvolutionBackward0``, as PyTorch's; its backward is the 2-d ``convolution_backward``)."""

    name = "ConvolutionBackward0"
    saves_attrs = ("stride", "padding", "dilation", "groups")

    def forward(x, w, b=None, *, stride, padding, dilation, groups):
        from .nn_ops import Convolution

        return Convolution.forward(x[:, :, None, :], w[:, :, None, :], b,
                                   **_as_2d(locals()))[:, :, 0, :]

    def save(ctx, x, w, b=None, *, out, stride, padding, dilation, groups):
        ctx.save(input=x, weight=w)

    def backward(ctx, g):
        from .nn_ops import ConvolutionBackward

        need = ctx.needs_input_grad
        grads = apply_op(ConvolutionBackward, (g.unsqueeze(2), ctx.input.unsqueeze(2), ctx.weight.unsqueeze(2)),
                         dict(_as_2d(ctx._attrs), output_mask=need))
        gx, gw, gb = (t if n else None for t, n in zip(grads, need))
        return (gx.squeeze(2) if gx is not None else None, gw.squeeze(2) if gw is not None else None, gb)


@export(method=False)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    squeeze = input.ndim == 2
    if squeeze:
        input = input.unsqueeze(0)
    if input.ndim != 3:
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                           f"{list(input.shape)}")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{input.shape[1]} channels instead")
    stride, dilation = _single(stride), _single(dilation)
    if isinstance(padding, str):
        padding = (0,) if padding == "valid" else (dilation[0] * (weight.shape[2] - 1) // 2,)
    attrs = {"stride": stride, "padding": _single(padding), "dilation": dilation, "groups": groups}
    out = apply_op(Convolution1d, (input, weight) if bias is None else (input, weight, bias), attrs)
    node = out.grad_fn
    if bias is None and node is not None:  # aten::convolution's bias edge, as in nn_ops.convolution
        node.next_functions += ((None, 0),)
        node.needs_input_grad += (False,)
    return out.squeeze(0) if squeeze else out


class ConvTranspose1d(Op):
    """``conv_transpose1d``: the 2-d transposed convolution's arrays over a height of 1."""

    name = "ConvolutionBackward0"
    saves_attrs = ("stride", "padding", "dilation", "groups", "output_padding")

    def forward(x, w, b=None, *, stride, padding, dilation, groups, output_padding, out_shape):
        from .pooling import ConvTranspose

        a = _as_2d(locals())
        return ConvTranspose.forward(x[:, :, None, :], w[:, :, None, :], b, **a, output_padding=(0,) + output_padding,
                                     out_shape=out_shape[:2] + (1,) + out_shape[2:])[:, :, 0, :]

    def save(ctx, x, w, b=None, *, out, **attrs):
        ctx.save(input=x, weight=w)
        ctx._attrs["transposed"] = True

    def backward(ctx, g):
        from .nn_ops import conv_weight_grad

        a = ctx._attrs
        need = ctx.needs_input_grad
        gx = conv1d(g, ctx.weight, None, a["stride"], a["padding"], a["dilation"], a["groups"]) if need[0] else None
        gw = None
        if need[1]:
            gw = conv_weight_grad(g.unsqueeze(2), ctx.input.unsqueeze(2), ctx.weight.unsqueeze(2).shape,
                                  _as_2d(a)).squeeze(2)
        gb = g.sum((0, 2)) if len(need) > 2 and need[2] else None
        return gx, gw, gb


@export(method=False)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    squeeze = input.ndim == 2
    if squeeze:
        input = input.unsqueeze(0)
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                           "channels instead")
    stride, padding, dilation, output_padding = (_single(stride), _single(padding), _single(dilation),
                                                 _single(output_padding))
    n, _, length = input.shape
    k = weight.shape[2]
    out_len = (length - 1) * stride[0] - 2 * padding[0] + dilation[0] * (k - 1) + output_padding[0] + 1
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
             "output_padding": output_padding, "out_shape": (n, weight.shape[1] * groups, out_len)}
    out = apply_op(ConvTranspose1d, (input, weight) if bias is None else (input, weight, bias), attrs)
    node = out.grad_fn
    if bias is None and node is not None:
        node.next_functions += ((None, 0),)
        node.needs_input_grad += (False,)
    return out.squeeze(0) if squeeze else out


# ---------------------------------------------------------------- composites

def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    from .nn_ops import max_pool2d_with_indices

    def one(v, default):
        v = default if v is None or v == () or v == [] else v
        return v[0] if isinstance(v, (tuple, list)) else v

    k = one(kernel_size, None)
    out, indices = max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, one(stride, k)), (0, one(padding, 0)),
                                           (1, one(dilation, 1)), ceil_mode)
    out = out.squeeze(-2)
    return (out, indices.squeeze(-2)) if return_indices else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    from .pooling import avg_pool2d

    def one(v, default):
        v = default if v is None or v == () or v == [] else v
        return v[0] if isinstance(v, (tuple, list)) else v

    k = one(kernel_size, None)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, one(stride, k)), (0, one(padding, 0)), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    from .pooling import adaptive_avg_pool2d

    size = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


@export(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """ATen's: each side divided by a copy of its norm (clamped to ``eps`` outside the graph),
    multiplied, summed over ``dim``."""
    from .. import grad_mode, linalg

    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1 = x1.expand(shape) if tuple(x1.shape) != shape else x1
    x2 = x2.expand(shape) if tuple(x2.shape) != shape else x2
    d = normalize_dim(dim, len(shape))
    n1 = linalg.vector_norm(x1, 2, dim=d, keepdim=True).clone()
    n2 = linalg.vector_norm(x2, 2, dim=d, keepdim=True).clone()
    with grad_mode.no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(d)


@export(method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from .. import linalg

    dim = max(x1.ndim, x2.ndim) - 1
    return linalg.vector_norm(x1 - x2 + eps, p, dim=dim, keepdim=keepdim)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    from . import functions as F

    if size_average is not None or reduce is not None:
        reduction = "sum" if reduce is not False and size_average is False else (
            "none" if reduce is False else "mean")
    reduction = _REDUCTIONS.get(reduction, reduction)
    if log_target:
        loss = F.exp(target) * (target - input)
    else:
        loss = F.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """ATen's composite: ``input * rsqrt(mean(input**2 over the normalized dims) + eps) * weight``,
    ``eps`` the dtype's machine epsilon when not given."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    result = input * input.pow(2).mean(dims, keepdim=True).add_(eps).rsqrt()
    return result * weight if weight is not None else result


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_or_feature_dropout(input, p, training, inplace, alpha=True, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_or_feature_dropout(input, p, training, inplace, alpha=True, feature=True)


def _alpha_or_feature_dropout(input, p, train, inplace, alpha, feature):
    """ATen's ``_dropout_impl``: a Bernoulli(1 - p) noise (one value per channel for the feature
    forms), scaled; the alpha forms add ``b`` so that SELU's mean and variance are kept."""
    from . import functions as F

    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(F.zeros((), dtype=input.dtype)) if inplace else input * F.zeros((), dtype=input.dtype)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    noise = F.empty(shape, dtype=input.dtype).bernoulli_(1 - p)
    if alpha:
        a_const = 1.7580993408473766
        a = 1.0 / math.sqrt((a_const * a_const * p + 1) * (1 - p))
        b = noise.add(-1).mul_(a_const * a).add_(a_const * a * p)
        noise.mul_(a)
        out = input.mul_(noise) if inplace else input * noise
        return out.add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


# ---------------------------------------------------------------- the torch.* forms

@export(method=False)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _nnF().conv2d(input, weight, bias, stride, padding, dilation, groups)


@export(method=False)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _nnF().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


@export("dropout", method=False)
def torch_dropout(input, p, train):
    return _nnF().dropout(input, p, train)


@export("dropout_", method=False)
def torch_dropout_(input, p, train):
    return _nnF().dropout(input, p, train, inplace=True)


@export("alpha_dropout", method=False)
def torch_alpha_dropout(input, p, train):
    return alpha_dropout(input, p, train)


@export("alpha_dropout_", method=False)
def torch_alpha_dropout_(input, p, train):
    return alpha_dropout(input, p, train, inplace=True)


@export("feature_dropout", method=False)
def torch_feature_dropout(input, p, train):
    return _alpha_or_feature_dropout(input, p, train, False, alpha=False, feature=True)


@export("feature_dropout_", method=False)
def torch_feature_dropout_(input, p, train):
    return _alpha_or_feature_dropout(input, p, train, True, alpha=False, feature=True)


@export("feature_alpha_dropout", method=False)
def torch_feature_alpha_dropout(input, p, train):
    return feature_alpha_dropout(input, p, train)


@export("embedding", method=False)
def torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _nnF().embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                            scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@export("layer_norm", method=False)
def torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _nnF().layer_norm(input, normalized_shape, weight, bias, eps)


@export("batch_norm", method=False)
def torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _nnF().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@export("instance_norm", method=False)
def torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                        cudnn_enabled):
    return _nnF().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@export("max_pool1d", method=False)
def torch_max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


@export("max_pool2d", method=False)
def torch_max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _nnF().max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@export("avg_pool1d", method=False)
def torch_avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


@export("adaptive_avg_pool1d", method=False)
def torch_adaptive_avg_pool1d(input, output_size):
    return adaptive_avg_pool1d(input, output_size)


@export("kl_div", method=False)
def torch_kl_div(input, target, reduction=0, log_target=False):
    """(PyTorch 2.13's ``torch.kl_div(a, b)`` reduces nothing: its default is 0, not Mean.)"""
    return kl_div(input, target, reduction=reduction, log_target=log_target)


@export("binary_cross_entropy_with_logits", method=False)
def torch_binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return _nnF().binary_cross_entropy_with_logits(input, target, weight, reduction=_REDUCTIONS.get(
        reduction, reduction), pos_weight=pos_weight)


@export("rms_norm", method=False)
def torch_rms_norm(input, normalized_shape, weight=None, eps=None):
    return rms_norm(input, normalized_shape, weight, eps)
