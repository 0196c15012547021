"""Average pooling (``avg_pool2d``, ``adaptive_avg_pool2d``) and the transposed convolution
(``conv_transpose2d``). Each pooling is linear, so its backward is its adjoint, and the adjoint's
backward is the pooling again: double backward comes free, as for ``nn_ops``' convolution.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .core import Op, apply_op
from .nn_ops import (_CONV_ATTRS, _conv_forward, _conv_input_grad, _pair, _pool_output_size,
                     conv_weight_grad, convolution)


# ---------------------------------------------------------------- avg_pool2d

def _avg_divisors(h, w, oh, ow, kernel, stride, padding, count_include_pad, divisor_override):
    """The divisor of each output position, as ATen's avg_pool2d kernel computes it: the window
    clipped to the padded input (count_include_pad) or to the input itself."""
    if divisor_override:
        return np.full((oh, ow), float(divisor_override))
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding

    def sizes(n_out, k, s, p, size):
        start = np.arange(n_out) * s - p
        end = np.minimum(start + k, size + p)
        padded = end - start
        clipped = np.minimum(end, size) - np.maximum(start, 0)
        return padded if count_include_pad else clipped

    return np.outer(sizes(oh, kh, sh, ph, h), sizes(ow, kw, sw, pw, w)).astype(np.float64)


def _avg_forward(x, kernel, stride, padding, out_hw, divisors):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    oh, ow = out_hw
    extra_h = max(0, (oh - 1) * sh + kh - (h + 2 * ph))
    extra_w = max(0, (ow - 1) * sw + kw - (w + 2 * pw))
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph + extra_h), (pw, pw + extra_w)))
    win = sliding_window_view(padded, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw][:, :, :oh, :ow]
    return (win.sum(axis=(4, 5)) / divisors).astype(x.dtype)


def _avg_adjoint(g, input_shape, kernel, stride, padding, divisors):
    """Each output's gradient, divided by its divisor, spread back over its window."""
    n, c, h, w = input_shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    oh, ow = g.shape[2], g.shape[3]
    share = (g / divisors).astype(g.dtype)
    grad = np.zeros((n, c, max(h + 2 * ph, (oh - 1) * sh + kh), max(w + 2 * pw, (ow - 1) * sw + kw)),
                    dtype=g.dtype)
    for i in range(kh):
        for j in range(kw):
            grad[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += share
    return np.ascontiguousarray(grad[:, :, ph:ph + h, pw:pw + w])


class AvgPool2D(Op):
    name = "AvgPool2DBackward0"
    saves_attrs = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                   "divisor_override")

    def forward(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, _plan):
        return _avg_forward(x, kernel_size, stride, padding, _plan["out_hw"], _plan["divisors"])

    def save(ctx, x, out, **attrs):
        ctx._attrs["_plan"] = attrs["_plan"]
        ctx._attrs["input_shape"] = tuple(x.shape)

    def backward(ctx, g):
        a = ctx._attrs
        return apply_op(AvgPool2DAdjoint, (g,), {"input_shape": a["input_shape"], "pool": a}),

    def jvp(x, out, dx, **attrs):
        return apply_op(AvgPool2D, (dx,), attrs)


class AvgPool2DAdjoint(Op):
    name = "AvgPool2DBackwardBackward0"

    def forward(g, input_shape, pool):
        return _avg_adjoint(g, input_shape, pool["kernel_size"], pool["stride"], pool["padding"],
                            pool["_plan"]["divisors"])

    def save(ctx, g, out, input_shape, pool):
        ctx._attrs = {"pool": pool}

    def backward(ctx, gg):
        pool = {k: v for k, v in ctx._attrs["pool"].items() if k != "input_shape"}
        return apply_op(AvgPool2D, (gg,), pool),

    def jvp(g, out, dg, input_shape, pool):
        return apply_op(AvgPool2DAdjoint, (dg,), {"input_shape": input_shape, "pool": pool})


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    squeeze = input.ndim == 3
    if squeeze:
        input = input.unsqueeze(0)
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or stride == [] else _pair(stride)
    padding = _pair(padding)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    h, w = input.shape[2], input.shape[3]
    oh = _pool_output_size(h, kernel[0], stride[0], padding[0], 1, ceil_mode)
    ow = _pool_output_size(w, kernel[1], stride[1], padding[1], 1, ceil_mode)
    plan = {"out_hw": (oh, ow), "divisors": _avg_divisors(h, w, oh, ow, kernel, stride, padding,
                                                          count_include_pad, divisor_override)}
    out = apply_op(AvgPool2D, (input,), {"kernel_size": kernel, "stride": stride, "padding": padding,
                                         "ceil_mode": ceil_mode, "count_include_pad": count_include_pad,
                                         "divisor_override": divisor_override, "_plan": plan})
    return out.squeeze(0) if squeeze else out


# ---------------------------------------------------------------- adaptive_avg_pool2d

def _regions(size, n_out):
    """ATen's adaptive windows: [floor(i*size/n), ceil((i+1)*size/n)) for each output i."""
    return [((i * size) // n_out, -(-((i + 1) * size) // n_out)) for i in range(n_out)]


class AdaptiveAvgPool2D(Op):
    name = "AdaptiveAvgPool2DBackward0"

    def forward(x, output_size):
        rows, cols = _regions(x.shape[-2], output_size[0]), _regions(x.shape[-1], output_size[1])
        out = np.empty(x.shape[:-2] + tuple(output_size), dtype=x.dtype)
        for i, (r0, r1) in enumerate(rows):
            for j, (c0, c1) in enumerate(cols):
                out[..., i, j] = x[..., r0:r1, c0:c1].mean(axis=(-2, -1))
        return out

    def save(ctx, x, out, output_size):
        ctx._attrs = {"output_size": output_size, "input_shape": tuple(x.shape)}

    def backward(ctx, g):
        return apply_op(AdaptiveAvgPool2DAdjoint, (g,), dict(ctx._attrs)),

    def jvp(x, out, dx, output_size):
        return apply_op(AdaptiveAvgPool2D, (dx,), {"output_size": output_size})


class AdaptiveAvgPool2DAdjoint(Op):
    name = "AdaptiveAvgPool2DBackwardBackward0"

    def forward(g, output_size, input_shape):
        rows, cols = _regions(input_shape[-2], output_size[0]), _regions(input_shape[-1], output_size[1])
        grad = np.zeros(input_shape, dtype=g.dtype)
        for i, (r0, r1) in enumerate(rows):
            for j, (c0, c1) in enumerate(cols):
                grad[..., r0:r1, c0:c1] += (g[..., i, j] / ((r1 - r0) * (c1 - c0)))[..., None, None]
        return grad

    def save(ctx, g, out, output_size, input_shape):
        ctx._attrs = {"output_size": output_size}

    def backward(ctx, gg):
        return apply_op(AdaptiveAvgPool2D, (gg,), dict(ctx._attrs)),

    def jvp(g, out, dg, output_size, input_shape):
        return apply_op(AdaptiveAvgPool2DAdjoint, (dg,), {"output_size": output_size,
                                                          "input_shape": input_shape})


def adaptive_avg_pool2d(input, output_size):
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    size = _pair(output_size) if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    size = tuple(input.shape[-2 + i] if s is None else int(s) for i, s in enumerate(size))
    if size == (1, 1):  # ATen computes the mean over the last two dims here (MeanBackward1)
        return input.mean((-1, -2), keepdim=True)
    return apply_op(AdaptiveAvgPool2D, (input,), {"output_size": size})


# ---------------------------------------------------------------- conv_transpose2d

class ConvTranspose(Op):
    """``conv_transpose2d``: the input-gradient of a convolution, as a forward op
    (``ConvolutionBackward0`` with ``transposed=True``, as PyTorch's node)."""

    name = "ConvolutionBackward0"
    saves_attrs = _CONV_ATTRS + ("output_padding",)

    def forward(x, w, b=None, *, stride, padding, dilation, groups, output_padding, out_shape):
        out = _conv_input_grad(x, w, out_shape, stride, padding, dilation, groups)
        if b is not None:
            out = out + b.reshape(1, -1, 1, 1)
        return np.ascontiguousarray(out)

    def save(ctx, x, w, b=None, *, out, **attrs):
        ctx.save(input=x, weight=w)
        ctx._attrs["transposed"] = True

    def backward(ctx, g):
        a = {k: ctx._attrs[k] for k in _CONV_ATTRS}
        need = ctx.needs_input_grad
        gx = convolution(g, ctx.weight, None, **a) if need[0] else None
        gw = conv_weight_grad(g, ctx.input, ctx.weight.shape, a) if need[1] else None
        gb = g.sum((0, 2, 3)) if len(need) > 2 and need[2] else None
        return gx, gw, gb

    def jvp(*args, **attrs):
        # args: the inputs (x, w[, b]), the output, then one tangent per input: linear in x and
        # in w (the product rule), plus the bias tangent
        n_inputs = (len(args) - 1) // 2
        x, w = args[0], args[1]
        dx, dw = args[n_inputs + 1], args[n_inputs + 2]
        total = apply_op(ConvTranspose, (dx, w), attrs) + apply_op(ConvTranspose, (x, dw), attrs)
        if n_inputs > 2:
            total = total + args[-1].reshape(1, -1, 1, 1)
        return total


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    squeeze = input.ndim == 3
    if squeeze:
        input = input.unsqueeze(0)
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {weight.shape[0]} channels, but got {input.shape[1]} channels instead")
    stride, padding, dilation, output_padding = (_pair(stride), _pair(padding), _pair(dilation),
                                                 _pair(output_padding))
    n, _, h, w = input.shape
    kh, kw = weight.shape[2], weight.shape[3]
    oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    ow = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
             "output_padding": output_padding, "out_shape": (n, weight.shape[1] * groups, oh, ow)}
    inputs = (input, weight) if bias is None else (input, weight, bias)
    out = apply_op(ConvTranspose, inputs, attrs)
    node = out.grad_fn
    if bias is None and node is not None:  # the bias edge exists all the same, as in convolution()
        node.next_functions += ((None, 0),)
        node.needs_input_grad += (False,)
    return out.squeeze(0) if squeeze else out


_ = _conv_forward
