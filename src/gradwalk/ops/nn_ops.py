"""The ops of ``nn.functional`` that have backward nodes of their own in PyTorch.

Convolution runs on NumPy with im2col: one strided copy per kernel tap builds every sample's
patches, then one batched matrix product per layer (the input gradient: the transposed product,
then one strided add per tap; no Python loop over output positions). Layers of at least
``CONV_FAST_MIN`` column entries build and scatter the same columns with the compiled kernels of
``ops/_conv_fast.py`` (numba, when installed), a few samples at a time so the columns stay in cache
between the copy and the product: the same values and the same additions in the same order, so the
same bits as the NumPy path (tests/test_conv_speedpaths.py runs both). Max pooling takes one pass
per kernel tap over the whole batch, and its backward writes each gradient where its window's
maximum was (one assignment when windows do not overlap). Activations' backward formulas are
written with gradwalk ops, so their second derivatives work; the big ops (convolution, pooling,
embedding) have linear backward passes, made ops of their own so that ``create_graph=True``
records them too.
"""
import math

import numpy as np

from .. import _fast
from ._util import as_tensor_arg
from ._scatter import index_add_rows
from .core import Op, apply_op

try:  # scipy ships with scikit-learn; without it, erf falls back to the math module
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover
    _erf = np.vectorize(math.erf, otypes=[np.float64])

_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_PI = math.sqrt(2 / math.pi)


# ---------------------------------------------------------------- activations

class LeakyRelu(Op):
    name = "LeakyReluBackward0"
    saves_attrs = ("negative_slope",)

    def forward(x, negative_slope):
        return np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)

    def save(ctx, x, out, negative_slope):
        ctx.save(self=x)

    def backward(ctx, g):
        return leaky_relu_backward(g, ctx.self, ctx._attrs["negative_slope"]),

    def jvp(x, out, dx, negative_slope):
        return leaky_relu_backward(dx, x, negative_slope)


class LeakyReluBackward(Op):
    """``g`` where ``x > 0``, ``g * slope`` elsewhere; an op of its own (as PyTorch) so a second
    derivative sees ``x`` as an input (whose gradient is zero)."""

    name = "LeakyReluBackwardBackward0"
    saves_attrs = ("negative_slope",)

    def forward(g, x, negative_slope):
        return np.where(x > 0, g, g * negative_slope).astype(g.dtype, copy=False)

    def save(ctx, g, x, out, negative_slope):
        ctx.save(self=x)

    def backward(ctx, gg):
        x = ctx.self
        need = ctx.needs_input_grad
        return (leaky_relu_backward(gg, x, ctx._attrs["negative_slope"]) if need[0] else None,
                x * 0.0 if need[1] else None)

    def jvp(g, x, out, dg, dx, negative_slope):
        return leaky_relu_backward(dg, x, negative_slope)


def leaky_relu_backward(g, x, negative_slope):
    return apply_op(LeakyReluBackward, (g, x), {"negative_slope": negative_slope})


class Gelu(Op):
    """``x * Phi(x)``, exactly (``approximate='none'``) or with the tanh formula."""

    name = "GeluBackward0"
    saves_attrs = ("approximate",)

    def forward(x, approximate):
        if approximate == "tanh":
            return (0.5 * x * (1 + np.tanh(_SQRT_2_PI * (x + 0.044715 * x ** 3)))).astype(x.dtype, copy=False)
        return (0.5 * x * (1 + _erf(x * _SQRT1_2))).astype(x.dtype, copy=False)

    def save(ctx, x, out, approximate):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * gelu_derivative(ctx.self, ctx._attrs["approximate"]),

    def jvp(x, out, dx, approximate):
        return dx * gelu_derivative(x, approximate)


def gelu_derivative(x, approximate):
    """d gelu / dx, with gradwalk ops (so it can be differentiated again)."""
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * _SQRT_2_PI
        t = inner.tanh()
        d_inner = (x * x * (3 * 0.044715) + 1) * _SQRT_2_PI
        return (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * d_inner
    cdf = (erf(x * _SQRT1_2) + 1) * 0.5
    pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return cdf + x * pdf


class Erf(Op):
    name = "ErfBackward0"

    def forward(x):
        return _erf(x).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * ((x * x * -1).exp() * (2 / math.sqrt(math.pi))),

    def jvp(x, out, dx):
        return dx * ((x * x * -1).exp() * (2 / math.sqrt(math.pi)))


def erf(input):
    return apply_op(Erf, (as_tensor_arg(input),))


class Silu(Op):
    name = "SiluBackward0"

    def forward(x):
        if x.dtype == np.float32:
            from ._float32_kernels import silu

            return silu(x)  # ATen's kernel: SLEEF's exp where vectorised, glibc's expf elsewhere
        with np.errstate(all="ignore"):
            return (x / (1 + np.exp(-x))).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        s = x.sigmoid()
        return g * (s * (x * (1 - s) + 1)),

    def jvp(x, out, dx):
        s = x.sigmoid()
        return dx * (s * (x * (1 - s) + 1))


class Softplus(Op):
    """``log(1 + exp(beta*x)) / beta``, linear above ``threshold`` (as PyTorch)."""

    name = "SoftplusBackward0"
    saves_attrs = ("beta", "threshold")

    def forward(x, beta, threshold):
        bx = x * beta
        with np.errstate(all="ignore"):
            soft = np.log1p(np.exp(bx)) / beta
        return np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)

    def save(ctx, x, out, beta, threshold):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * _softplus_slope(ctx.self, ctx._attrs["beta"], ctx._attrs["threshold"]),

    def jvp(x, out, dx, beta, threshold):
        return dx * _softplus_slope(x, beta, threshold)


def _softplus_slope(x, beta, threshold):
    from . import functions as F

    bx = x * beta
    return F.where(bx > threshold, 1.0, bx.sigmoid())


class Elu(Op):
    name = "EluBackward0"
    saves_attrs = ("alpha",)

    def forward(x, alpha):
        with np.errstate(all="ignore"):
            return np.where(x > 0, x, alpha * np.expm1(x)).astype(x.dtype, copy=False)

    def save(ctx, x, out, alpha):
        ctx.save(self=x)

    def backward(ctx, g):
        from . import functions as F

        x = ctx.self
        return F.where(x > 0, g, g * (x.exp() * ctx._attrs["alpha"])),

    def jvp(x, out, dx, alpha):
        from . import functions as F

        return F.where(x > 0, dx, dx * (x.exp() * alpha))


class Hardtanh(Op):
    """``clamp(x, min_val, max_val)``; the gradient is zero at and beyond the bounds."""

    name = "HardtanhBackward0"
    saves_attrs = ("min_val", "max_val")

    def forward(x, min_val, max_val):
        return np.clip(x, min_val, max_val).astype(x.dtype, copy=False)

    def save(ctx, x, out, min_val, max_val):
        ctx.save(self=x)

    def backward(ctx, g):
        x = ctx.self
        return g * ((x > ctx._attrs["min_val"]) & (x < ctx._attrs["max_val"])),

    def jvp(x, out, dx, min_val, max_val):
        return dx * ((x > min_val) & (x < max_val))


class LogSigmoid(Op):
    name = "LogSigmoidBackward0"

    def forward(x):
        with np.errstate(all="ignore"):
            return (np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)

    def save(ctx, x, out):
        ctx.save(self=x)

    def backward(ctx, g):
        return g * (-ctx.self).sigmoid(),

    def jvp(x, out, dx):
        return dx * (-x).sigmoid()


# ---------------------------------------------------------------- convolution (im2col)

def _pair(v):
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else tuple(int(i) for i in v)


def _taps(x, kernel, stride, padding, dilation):
    """The output size (OH, OW) and, for each kernel tap (i, j), the (N, C, OH, OW) strided view of
    the padded ``x`` holding the pixel that tap sees at every output position."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if ph or pw:
        x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    views = {(i, j): x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
             for i in range(kh) for j in range(kw)}
    return oh, ow, views


def _patches(x, kernel, stride, padding, dilation):
    """im2col laid out for one batched product: (N, C*kh*kw, OH*OW), whose entry
    (n, (c, i, j), (oh, ow)) is the pixel of channel c that kernel tap (i, j) sees at output
    position (oh, ow). One strided copy per kernel tap (kh*kw copies of whole blocks), no loop
    over positions."""
    n, c = x.shape[:2]
    oh, ow, views = _taps(x, kernel, stride, padding, dilation)
    cols = np.empty((n, c) + tuple(kernel) + (oh, ow), dtype=x.dtype)
    for (i, j), seen in views.items():
        cols[:, :, i, j] = seen
    return cols.reshape(n, -1, oh * ow), oh, ow


def _columns(x, kernel, stride, padding, dilation):
    """im2col with one row per output position: (N*OH*OW, C*kh*kw), for the weight gradient's
    single matrix product (its layout fixes the order BLAS sums in: the same as before)."""
    n, c = x.shape[:2]
    oh, ow, views = _taps(x, kernel, stride, padding, dilation)
    cols = np.empty((n, oh, ow, c) + tuple(kernel), dtype=x.dtype)
    for (i, j), seen in views.items():
        cols[..., i, j] = seen.transpose(0, 2, 3, 1)
    return cols.reshape(n * oh * ow, -1), oh, ow


# The compiled im2col / col2im of ``ops/_conv_fast.py`` (numba) run for layers of at least this
# many column entries (N * C * kh * kw * OH * OW: the digits CNN's second layer has 295k); smaller
# ones stay on the NumPy code above and below, so they never import numba or load a kernel. Both
# paths copy the same values and add in the same order (the same bits); tests lower this to run
# both on small layers.
CONV_FAST_MIN = 1 << 14
# On the fast path the columns are built and multiplied a few samples at a time, in a buffer of
# about this many entries (512 KiB of float32: it stays in the core's L2 cache between im2col and
# the matrix product); each sample's product is the same BLAS call as in the batched matmul.
_CONV_CHUNK = 1 << 17


def _fast_conv(entries):
    """gradwalk.ops._conv_fast for a layer of ``entries`` column entries, or None (NumPy path)."""
    if entries < CONV_FAST_MIN or _fast.numba_njit() is None:
        return None
    from . import _conv_fast

    return _conv_fast


def _padded(fast, x, padding):
    """``x`` zero-padded on both sides of H and W, as one C-contiguous array (the fast kernels
    index it flat)."""
    (ph, pw) = padding
    if ph or pw:
        n, c, h, w = x.shape
        out = np.empty((n, c, h + 2 * ph, w + 2 * pw), dtype=x.dtype)
        fast.pad(x, out, ph, pw)
        return out
    return np.ascontiguousarray(x)


def _out_size(size, kernel, stride, padding, dilation):
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(size, kernel, stride, padding, dilation))


def _conv_forward(x, w, stride, padding, dilation, groups, bias=None):
    """Each sample's output is weight (O, C*kh*kw) @ its patches (C*kh*kw, OH*OW): one batched
    matrix product (stacked over the groups), landing in (N, O, OH, OW) order with no
    transpose; then + bias."""
    n = x.shape[0]
    o, cg, kh, kw = w.shape
    og = o // groups
    oh, ow = _out_size(x.shape[2:], (kh, kw), stride, padding, dilation)
    fast = _fast_conv(n * cg * groups * kh * kw * oh * ow)
    if fast:
        return _conv_forward_fast(fast, x, w, stride, padding, dilation, groups, oh, ow, bias)
    cols = _patches(x, (kh, kw), stride, padding, dilation)[0]
    out = _grouped_matmul(w.reshape(groups, og, -1), cols, groups).reshape(n, o, oh, ow)
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


_matmul = np.matmul  # every product of the convolutions (one name, so a benchmark can swap in another BLAS)


def _grouped_matmul(w3, cols, groups, out=None):
    """(G, og, K) weights times each sample's (G*K, L) columns, group by group: one matmul, the
    same BLAS product per (sample, group) as a loop over the groups (vmap folds a batch of
    weights into the groups, so G can be in the hundreds)."""
    n, length = cols.shape[0], cols.shape[-1]
    if groups == 1:
        return _matmul(w3[0], cols, out=out)
    result = _matmul(w3, cols.reshape(n, groups, -1, length),
                       out=None if out is None else out.reshape(n, groups, -1, length))
    return result.reshape(n, -1, length)


def _conv_forward_fast(fast, x, w, stride, padding, dilation, groups, oh, ow, bias):
    """``_conv_forward`` with compiled im2col, a chunk of samples at a time: the same columns and
    the same per-sample products, written straight into the output, the bias added while the
    chunk is in cache (the same one addition per element)."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    og = o // groups
    xp = _padded(fast, x, padding)
    out = np.empty((n, o, oh * ow), dtype=np.result_type(x, w))
    step = max(1, _CONV_CHUNK // (c * kh * kw * oh * ow))
    buf = np.empty((min(step, n), c, kh, kw, oh, ow), dtype=x.dtype)
    w3 = w.reshape(groups, og, -1)
    for s in range(0, n, step):
        e = min(s + step, n)
        cols = buf[:e - s]
        fast.patches(xp[s:e], 0, cols, *stride, *dilation)
        chunk = out[s:e]
        _grouped_matmul(w3, cols.reshape(e - s, c * kh * kw, oh * ow), groups, out=chunk)
        if bias is not None:
            np.add(chunk, bias.reshape(o, 1), out=chunk)
    return out.reshape(n, o, oh, ow)


def _conv_input_grad(g, w, input_shape, stride, padding, dilation, groups):
    """col2im of weight.T @ g: every kernel tap adds its share back to the pixels it read, one
    strided add of a whole (N, C, OH, OW) block per tap."""
    n, c, h, wd = input_shape
    o, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    oh, ow = g.shape[2], g.shape[3]
    grad = np.zeros((n, c, h + 2 * ph, wd + 2 * pw), dtype=g.dtype)
    g3 = g.reshape(n, o, oh * ow)
    og = o // groups
    wt = w.reshape(groups, og, -1).transpose(0, 2, 1)  # each group's weight.T
    fast = _fast_conv(n * c * kh * kw * oh * ow)
    if fast:  # the same products and adds, a chunk of samples at a time
        step = max(1, _CONV_CHUNK // (c * kh * kw * oh * ow))
        buf = np.empty((min(step, n), c * kh * kw, oh * ow), dtype=np.result_type(g, w))
        for s in range(0, n, step):
            e = min(s + step, n)
            dcols = buf[:e - s]
            _grouped_matmul(wt, g3[s:e], groups, out=dcols)
            fast.col2im(dcols.reshape(e - s, c, kh, kw, oh, ow), grad[s:e], 0, sh, sw, dh, dw)
    else:
        dcols = _grouped_matmul(wt, g3, groups).reshape(n, c, kh, kw, oh, ow)
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
                cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
                grad[:, :, rows, cols] += dcols[:, :, i, j]
    return grad[:, :, ph:ph + h, pw:pw + wd]


def _conv_weight_grad(x, g, weight_shape, stride, padding, dilation, groups):
    """grad_output's rows (O, N*OH*OW) @ the columns (N*OH*OW, C*kh*kw): one BLAS call per group
    (its layout fixes the order BLAS sums in), stacked over the groups."""
    o, cg, kh, kw = weight_shape
    og = o // groups
    n, c = x.shape[:2]
    oh, ow = g.shape[2], g.shape[3]
    fast = _fast_conv(n * c * kh * kw * oh * ow)
    if fast:
        cols = np.empty((n * oh * ow, c * kh * kw), dtype=x.dtype)
        fast.rows(_padded(fast, x, padding), 0, cols, oh, ow, kh, kw, *stride, *dilation)
    else:
        cols = _columns(x, (kh, kw), stride, padding, dilation)[0]
    if groups == 1:
        g_rows = g.transpose(1, 0, 2, 3).reshape(o, -1)
        return _matmul(g_rows, cols).reshape(o, cg, kh, kw)
    # each group's rows of g times its own columns, made contiguous (as BLAS saw them one group
    # at a time), in one stacked product
    g_rows = g.reshape(n, groups, og, oh * ow).transpose(1, 2, 0, 3).reshape(groups, og, -1)
    cols = np.ascontiguousarray(cols.reshape(n * oh * ow, groups, -1).transpose(1, 0, 2))
    return _matmul(g_rows, cols).reshape(o, cg, kh, kw)


_CONV_ATTRS = ("stride", "padding", "dilation", "groups")


class Convolution(Op):
    name = "ConvolutionBackward0"
    saves_attrs = _CONV_ATTRS

    def forward(x, w, b=None, *, stride, padding, dilation, groups):
        return _conv_forward(x, w, stride, padding, dilation, groups, bias=b)

    def save(ctx, x, w, b=None, *, out, stride, padding, dilation, groups):
        ctx.save(input=x, weight=w)

    def backward(ctx, g):
        # one op computes all three, as PyTorch's convolution_backward (one node with
        # create_graph=True: ConvolutionBackwardBackward0, edges grad_output, input, weight)
        a = ctx._attrs
        need = ctx.needs_input_grad  # (input, weight, bias): convolution() gives bias an edge
        attrs = {k: a[k] for k in _CONV_ATTRS}
        gx, gw, gb = apply_op(ConvolutionBackward, (g, ctx.input, ctx.weight),
                              dict(attrs, output_mask=need))
        return (gx if need[0] else None, gw if need[1] else None, gb if need[2] else None)

    def jvp(*args, stride, padding, dilation, groups):
        # args: the inputs (x, w[, b]), the output, then one tangent per input
        n_inputs = (len(args) - 1) // 2
        x, w, b = (args[:n_inputs] + (None,))[:3]
        tangents = args[n_inputs + 1:]
        attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        dx, dw = tangents[0], tangents[1]
        total = None
        if dx is not None:
            total = convolution(dx, w, None, **attrs)
        if dw is not None:
            part = convolution(x, dw, None, **attrs)
            total = part if total is None else total + part
        if b is not None and len(tangents) > 2 and tangents[2] is not None:
            part = tangents[2].reshape(1, -1, 1, 1)
            total = part if total is None else total + part
        return total


class ConvolutionBackward(Op):
    """``convolution_backward``: the gradients for input, weight and bias from ``grad_output``.
    Outputs that ``output_mask`` leaves out are empty placeholders (PyTorch's undefined tensors)."""

    name = "ConvolutionBackwardBackward0"

    def forward(g, x, w, *, stride, padding, dilation, groups, output_mask):
        empty = np.empty((0,), dtype=g.dtype)
        return (_conv_input_grad(g, w, x.shape, stride, padding, dilation, groups)
                if output_mask[0] else empty,
                _conv_weight_grad(x, g, w.shape, stride, padding, dilation, groups)
                if output_mask[1] else empty,
                g.sum((0, 2, 3)) if output_mask[2] else empty)

    def save(ctx, g, x, w, out, **attrs):
        ctx.save(grad_output=g, input=x, weight=w)
        ctx._attrs = attrs

    def backward(ctx, ggx, ggw, ggb):
        # grad_input = convT(g, w), grad_weight = wgrad(x, g), grad_bias = g.sum((0, 2, 3)):
        # each is linear in each of its arguments
        a = {k: ctx._attrs[k] for k in _CONV_ATTRS}
        need = ctx.needs_input_grad
        g, x, w = ctx.grad_output, ctx.input, ctx.weight
        gg = None
        if need[0]:
            if ggx is not None:
                gg = convolution(ggx, w, None, **a)
            if ggw is not None:
                part = convolution(x, ggw, None, **a)
                gg = part if gg is None else gg + part
            if ggb is not None:
                part = ggb.reshape(1, -1, 1, 1).expand(*g.shape)
                gg = part if gg is None else gg + part
        gx = conv_input_grad(g, ggw, x.shape, a) if need[1] and ggw is not None else None
        gw = conv_weight_grad(ggx, g, w.shape, a) if need[2] and ggx is not None else None
        return gg, gx, gw

    def jvp(g, x, w, out, dg, dx, dw, *, stride, padding, dilation, groups, output_mask):
        # bilinear in (g, w) and in (x, g): the product rule, each part the op itself
        a = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
        return (conv_input_grad(dg, w, x.shape, a) + conv_input_grad(g, dw, x.shape, a)
                if output_mask[0] else None,
                conv_weight_grad(dx, g, w.shape, a) + conv_weight_grad(x, dg, w.shape, a)
                if output_mask[1] else None,
                dg.sum((0, 2, 3)) if output_mask[2] else None)


class ConvolutionInputGrad(Op):
    """grad_input of a convolution (a transposed convolution): linear in ``g`` and ``w``."""

    name = "ConvolutionBackwardBackward0"

    def forward(g, w, *, input_shape, stride, padding, dilation, groups):
        return _conv_input_grad(g, w, input_shape, stride, padding, dilation, groups)

    def save(ctx, g, w, out, **attrs):
        ctx.save(grad_output=g, weight=w)
        ctx._attrs = attrs

    def backward(ctx, gg):
        a = {k: ctx._attrs[k] for k in _CONV_ATTRS}
        need = ctx.needs_input_grad
        return (convolution(gg, ctx.weight, None, **a) if need[0] else None,
                conv_weight_grad(gg, ctx.grad_output, ctx.weight.shape, a) if need[1] else None)

    def jvp(g, w, out, dg, dw, *, input_shape, **a):
        return conv_input_grad(dg, w, input_shape, a) + conv_input_grad(g, dw, input_shape, a)


class ConvolutionWeightGrad(Op):
    """grad_weight of a convolution: linear in the input and in ``g``."""

    name = "ConvolutionBackwardBackward0"

    def forward(x, g, *, weight_shape, stride, padding, dilation, groups):
        return _conv_weight_grad(x, g, weight_shape, stride, padding, dilation, groups)

    def save(ctx, x, g, out, **attrs):
        ctx.save(input=x, grad_output=g)
        ctx._attrs = dict(attrs, input_shape=tuple(x.shape))

    def backward(ctx, gg):
        a = {k: ctx._attrs[k] for k in _CONV_ATTRS}
        need = ctx.needs_input_grad
        return (conv_input_grad(ctx.grad_output, gg, ctx._attrs["input_shape"], a) if need[0] else None,
                convolution(ctx.input, gg, None, **a) if need[1] else None)

    def jvp(x, g, out, dx, dg, *, weight_shape, **a):
        return conv_weight_grad(dx, g, weight_shape, a) + conv_weight_grad(x, dg, weight_shape, a)


def conv_input_grad(g, w, input_shape, attrs):
    return apply_op(ConvolutionInputGrad, (g, w), dict(attrs, input_shape=tuple(input_shape)))


def conv_weight_grad(x, g, weight_shape, attrs):
    return apply_op(ConvolutionWeightGrad, (x, g), dict(attrs, weight_shape=tuple(weight_shape)))


def convolution(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``conv2d`` on (N, C, H, W) input; ``ConvolutionBackward0`` with edges (input, weight, bias)."""
    squeeze = input.ndim == 3
    if squeeze:
        input = input.unsqueeze(0)
    if input.ndim != 4:
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(input.shape)}")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{input.shape[1]} channels instead")
    stride, dilation = _pair(stride), _pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        else:  # 'same' (stride 1): pad so the output keeps the input's size
            padding = tuple(d * (k - 1) // 2 for d, k in zip(dilation, weight.shape[2:]))
    padding = _pair(padding)
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    inputs = (input, weight) if bias is None else (input, weight, bias)
    out = apply_op(Convolution, inputs, attrs)
    node = out.grad_fn
    if bias is None and node is not None:  # aten::convolution's bias is a Tensor? argument: an edge all the same
        node.next_functions += ((None, 0),)
        node.needs_input_grad += (False,)
    return out.squeeze(0) if squeeze else out


# ---------------------------------------------------------------- max pooling

# The compiled scatter of max pooling's backward (``ops/_pool_fast.py``, numba) runs for float
# gradients of pools of at least this many input elements (the digits CNN's pool has 65k);
# smaller ones stay on the NumPy code below. Both paths give the same bits. (A compiled forward,
# max and argmax per window in one pass, measured no faster than the NumPy passes: 5-7 ms on
# 64x32x32x32, as session 5 found.)
POOL_FAST_MIN = 1 << 14


def _fast_pool(x, size):
    """gradwalk.ops._pool_fast for a float array ``x`` of a pool of ``size`` input elements, or
    None (the NumPy path)."""
    if x.dtype.kind != "f" or size < POOL_FAST_MIN or _fast.numba_njit() is None:
        return None
    from . import _pool_fast

    return _pool_fast


def _pool_output_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input
        out -= 1
    return out


class MaxPool2DWithIndices(Op):
    """Max over each window; remembers where each max came from (flat index into H*W)."""

    name = "MaxPool2DWithIndicesBackward0"
    saves_attrs = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def forward(x, kernel_size, stride, padding, dilation, ceil_mode, indices_out):
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
        oh = _pool_output_size(h, kh, sh, ph, dh, ceil_mode)
        ow = _pool_output_size(w, kw, sw, pw, dw, ceil_mode)
        # pad with -inf: enough on the bottom/right for ceil_mode's partial windows
        extra_h = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - (h + 2 * ph))
        extra_w = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - (w + 2 * pw))
        padded = np.pad(x, ((0, 0), (0, 0), (ph, ph + extra_h), (pw, pw + extra_w)),
                        constant_values=-np.inf) if (ph or pw or extra_h or extra_w) else x
        # one pass per kernel tap over the whole (N, C, OH, OW) block of the values it sees: the
        # first maximum in the window's row-major order wins, and a NaN beats every number
        # (np.argmax's rule), with no loop over positions and no branches on the data
        def scan(nans):
            best, tap = None, None
            for i in range(kh):
                for j in range(kw):
                    seen = padded[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                                  j * dw:j * dw + sw * (ow - 1) + 1:sw]
                    if best is None:
                        best = seen.copy()
                        tap = np.zeros(seen.shape, dtype=np.int8 if kh * kw < 128 else np.intp)
                        continue
                    wins = seen > best
                    if nans:
                        wins |= np.isnan(seen) & ~np.isnan(best)
                    np.maximum(best, seen, out=best)  # NaN wins here too
                    tap += wins * (i * kw + j - tap)  # tap = i * kw + j where this tap wins
            return best, tap

        best, tap = scan(False)
        # np.maximum carries any NaN of a window into its result: only then are the taps redone
        # with the NaN rule (a pass over the output, not over the 4x larger input)
        if x.dtype.kind == "f" and np.isnan(best).any():
            best, tap = scan(True)
        # flat index into the (unpadded) H*W plane, as PyTorch's indices
        offsets = np.array([i * dh * w + j * dw for i in range(kh) for j in range(kw)], dtype=np.int64)
        base = (np.arange(oh)[:, None] * sh - ph) * w + (np.arange(ow)[None, :] * sw - pw)
        indices = np.take(offsets, tap)
        indices += base
        indices_out.append(indices)
        zero = best == 0
        if zero.any():  # np.maximum may pick +0.0 over an earlier -0.0: the picked element's own sign
            # (flat positions and ``take``: after a ReLU many windows are all zeros, and indexing
            # with (sample, channel, index) arrays took 7x as long)
            at = np.flatnonzero(zero)
            source = at // (oh * ow) * (h * w) + indices.reshape(-1).take(at)
            best.reshape(-1)[at] = x.reshape(-1).take(source)
        return best

    def save(ctx, x, out, **attrs):
        ctx._attrs["indices"] = attrs["indices_out"][0]
        ctx._attrs["input_shape"] = tuple(x.shape)

    def backward(ctx, g):
        a = ctx._attrs
        (kh, kw), (sh, sw), (dh, dw) = a["kernel_size"], a["stride"], a["dilation"]
        disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
        return pool_scatter(g, a["indices"], a["input_shape"], disjoint),

    def jvp(x, out, dx, **attrs):
        return pool_gather(dx, attrs["indices_out"][0])


class PoolScatter(Op):
    """The max-pool backward: each gradient goes to the input element its window picked."""

    name = "MaxPool2DWithIndicesBackwardBackward0"

    def forward(g, indices, input_shape, disjoint=False):
        n, c, h, w = input_shape
        fast = _fast_pool(g, n * c * h * w)
        if fast:  # the same assignments or adds, in the same order (_pool_fast.py)
            out = np.zeros((n * c, h * w), dtype=g.dtype)
            if fast.scatter(np.ascontiguousarray(g).reshape(n * c, -1),
                            np.ascontiguousarray(indices, dtype=np.int64).reshape(n * c, -1), out, disjoint):
                return out.reshape(input_shape)
        planes = np.arange(n * c).reshape(n, c, 1, 1) * (h * w)
        flat = (indices + planes).ravel()
        if g.dtype.kind == "f":
            out = np.zeros(n * c * h * w, dtype=g.dtype)
            if disjoint:  # windows that do not overlap: each input element gets at most one value
                out[flat] = g.ravel() + 0.0  # 0.0 + g, as the sum would: -0.0 becomes 0.0
            else:  # ATen's loop: each output position in turn adds into its input, in g's dtype
                np.add.at(out, flat, g.ravel())
            return out.reshape(input_shape)
        total = np.bincount(flat, weights=g.ravel(), minlength=n * c * h * w)
        return total.reshape(input_shape).astype(g.dtype)

    def save(ctx, g, out, indices, input_shape, disjoint=False):
        ctx._attrs = {"indices": indices}

    def backward(ctx, gg):
        return pool_gather(gg, ctx._attrs["indices"]),

    def jvp(g, out, dg, indices, input_shape, disjoint=False):
        return pool_scatter(dg, indices, input_shape, disjoint)


class PoolGather(Op):
    """Pick, from each plane, the elements at ``indices``: the adjoint of ``PoolScatter``."""

    name = "MaxPool2DWithIndicesBackward0"

    def forward(x, indices):
        n, c = x.shape[:2]
        picked = np.take_along_axis(x.reshape(n, c, -1), indices.reshape(n, c, -1), axis=2)
        return picked.reshape(indices.shape)

    def save(ctx, x, out, indices):
        ctx._attrs = {"indices": indices, "input_shape": tuple(x.shape)}

    def backward(ctx, g):
        return pool_scatter(g, ctx._attrs["indices"], ctx._attrs["input_shape"]),

    def jvp(x, out, dx, indices):
        return pool_gather(dx, indices)


def pool_scatter(g, indices, input_shape, disjoint=False):
    """``disjoint``: the windows do not overlap, so no input element gets two gradients."""
    return apply_op(PoolScatter, (g,), {"indices": indices, "input_shape": tuple(input_shape),
                                        "disjoint": disjoint})


def pool_gather(x, indices):
    return apply_op(PoolGather, (x,), {"indices": indices})


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    from ..tensor import Tensor

    squeeze = input.ndim == 3
    if squeeze:
        input = input.unsqueeze(0)
    kernel_size = _pair(kernel_size)
    stride = kernel_size if stride is None or stride == [] else _pair(stride)
    padding, dilation = _pair(padding), _pair(dilation)
    if any(p > k // 2 for p, k in zip(padding, kernel_size)):
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={padding[0]}, "
            f"kernel_size={kernel_size[0]} and dilation={dilation[0]}")
    indices_out = []
    attrs = {"kernel_size": kernel_size, "stride": stride, "padding": padding, "dilation": dilation,
             "ceil_mode": ceil_mode, "indices_out": indices_out}
    out = apply_op(MaxPool2DWithIndices, (input,), attrs)
    indices = Tensor._make(indices_out[0])
    if squeeze:
        return out.squeeze(0), indices.squeeze(0)
    return out, indices


# ---------------------------------------------------------------- normalization

def _normalized_backward(g, x, weight, axes, eps, weight_view):
    """Gradients of ``(x - mean) * rstd * w + b`` when mean and var are x's own statistics over
    ``axes``; written with gradwalk ops, recomputing the statistics, so it differentiates again."""
    mean = x.mean(axes, keepdim=True)
    centered = x - mean
    rstd = ((centered * centered).mean(axes, keepdim=True) + eps).rsqrt()
    xhat = centered * rstd
    dxhat = g if weight is None else g * weight.reshape(weight_view)
    gx = rstd * (dxhat - dxhat.mean(axes, keepdim=True) - xhat * (dxhat * xhat).mean(axes, keepdim=True))
    return gx, xhat


def _normalized_jvp(args, axes, eps, weight_view, stats=None):
    """Tangent of ``(x - mean) * rstd * w + b`` (FunctionsManual's layer_norm_jvp/batch_norm_jvp).
    ``args``: the inputs (x[, w[, b]]), the output, then one tangent per input. ``stats``:
    constant (mean, rstd) (batch norm in eval), else x's own statistics over ``axes``."""
    n_inputs = (len(args) - 1) // 2
    x, w = args[0], args[1] if n_inputs > 1 else None
    dx, dw, db = (args[n_inputs + 1:] + (None, None))[:3]
    if stats is None:
        mean = x.mean(axes, keepdim=True)
        centered = x - mean
        rstd = ((centered * centered).mean(axes, keepdim=True) + eps).rsqrt()
        xhat = centered * rstd
        dxhat = rstd * (dx - dx.mean(axes, keepdim=True) - xhat * (dx * xhat).mean(axes, keepdim=True))
    else:
        mean, rstd = stats
        xhat = (x - mean) * rstd
        dxhat = dx * rstd
    total = dxhat if w is None else dxhat * w.reshape(weight_view)
    if dw is not None:
        total = total + xhat * dw.reshape(weight_view)
    if db is not None:
        total = total + db.reshape(weight_view)
    return total


class NativeLayerNorm(Op):
    name = "NativeLayerNormBackward0"
    saves_attrs = ("normalized_shape", "eps")

    def forward(x, w=None, b=None, *, normalized_shape, eps):
        axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        rstd = 1.0 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + eps)
        out = centered * rstd
        if w is not None:
            out *= w
        if b is not None:
            out += b
        return out.astype(x.dtype, copy=False)

    def save(ctx, x, w=None, b=None, *, out, normalized_shape, eps):
        ctx.save(input=x, weight=w)

    def backward(ctx, g):
        a = ctx._attrs
        x, w = ctx.input, ctx.weight
        axes = tuple(range(x.ndim - len(a["normalized_shape"]), x.ndim))
        batch_axes = tuple(range(x.ndim - len(a["normalized_shape"])))
        gx, xhat = _normalized_backward(g, x, w, axes, a["eps"], tuple(w.shape) if w is not None else None)
        need = ctx.needs_input_grad
        grads = [gx if need[0] else None]
        if len(need) > 1:
            grads.append((g * xhat).sum(batch_axes) if need[1] else None)
        if len(need) > 2:
            grads.append(g.sum(batch_axes) if need[2] else None)
        return tuple(grads)

    def jvp(*args, normalized_shape, eps):
        x = args[0]
        axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        return _normalized_jvp(args, axes, eps, tuple(normalized_shape))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size{list(input.shape)}")
    return apply_op(NativeLayerNorm, _norm_inputs(input, weight, bias),
                    {"normalized_shape": normalized_shape, "eps": eps})


def _norm_inputs(input, weight, bias):
    """(input[, weight[, bias]]): a bias without a weight gets a constant weight of ones."""
    from ..tensor import Tensor

    if weight is None and bias is not None:
        weight = Tensor._make(np.ones(bias.shape, dtype=bias._data.dtype))
    return tuple(t for t in (input, weight, bias) if t is not None)


class NativeBatchNorm(Op):
    """Batch statistics in training (updating the running ones in place), running ones in eval."""

    name = "NativeBatchNormBackward0"
    saves_attrs = ("training", "eps")

    def forward(x, w=None, b=None, *, running_mean, running_var, training, momentum, eps):
        axes = (0,) + tuple(range(2, x.ndim))
        view = (1, -1) + (1,) * (x.ndim - 2)
        if training:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)
            if running_mean is not None:
                n = x.size // x.shape[1]
                running_mean *= 1 - momentum
                running_mean += momentum * mean
                running_var *= 1 - momentum
                running_var += momentum * var * (n / max(n - 1, 1))
        else:
            mean, var = running_mean, running_var
        out = (x - mean.reshape(view)) * (1.0 / np.sqrt(var + eps)).reshape(view)
        if w is not None:
            out = out * w.reshape(view)
        if b is not None:
            out = out + b.reshape(view)
        return out.astype(x.dtype, copy=False)

    def save(ctx, x, w=None, b=None, *, out, running_mean, running_var, training, momentum, eps):
        ctx.save(input=x, weight=w)
        if not training:
            ctx._attrs["running_mean"] = running_mean.copy()
            ctx._attrs["running_var"] = running_var.copy()

    def backward(ctx, g):
        from ..tensor import Tensor

        a = ctx._attrs
        x, w = ctx.input, ctx.weight
        axes = (0,) + tuple(range(2, x.ndim))
        view = (1, -1) + (1,) * (x.ndim - 2)
        if a["training"]:
            gx, xhat = _normalized_backward(g, x, w, axes, a["eps"], view)
        else:  # the running statistics are constants
            rstd = Tensor._make((1.0 / np.sqrt(a["running_var"] + a["eps"])).astype(x.dtype.np).reshape(view))
            xhat = (x - Tensor._make(a["running_mean"].astype(x.dtype.np).reshape(view))) * rstd
            gx = g * rstd if w is None else g * (w.reshape(view) * rstd)
        need = ctx.needs_input_grad
        grads = [gx if need[0] else None]
        if len(need) > 1:
            grads.append((g * xhat).sum(axes) if need[1] else None)
        if len(need) > 2:
            grads.append(g.sum(axes) if need[2] else None)
        return tuple(grads)

    def jvp(*args, running_mean, running_var, training, momentum, eps):
        from ..tensor import Tensor

        x = args[0]
        axes = (0,) + tuple(range(2, x.ndim))
        view = (1, -1) + (1,) * (x.ndim - 2)
        stats = None
        if not training:  # the running statistics are constants
            dtype = x.dtype.np
            stats = (Tensor._make(running_mean.astype(dtype).reshape(view)),
                     Tensor._make((1.0 / np.sqrt(running_var + eps)).astype(dtype).reshape(view)))
        return _normalized_jvp(args, axes, eps, view, stats)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training:
        per_channel = input.numel() // input.shape[1]
        if per_channel <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {input.shape}")
    elif running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    inputs = _norm_inputs(input, weight, bias)
    attrs = {"running_mean": None if running_mean is None else running_mean._data,
             "running_var": None if running_var is None else running_var._data,
             "training": training, "momentum": 0.0 if momentum is None else momentum, "eps": eps}
    out = apply_op(NativeBatchNorm, inputs, attrs)
    if training and running_mean is not None:
        running_mean._version_counter[0] += 1
        running_var._version_counter[0] += 1
    return out


# ---------------------------------------------------------------- embedding

class Embedding(Op):
    name = "EmbeddingBackward0"
    saves_attrs = ("padding_idx",)

    def forward(w, indices, padding_idx):
        return np.take(w, indices, axis=0)

    def save(ctx, w, out, indices, padding_idx):
        ctx._attrs["indices"] = indices
        ctx._attrs["num_weights"] = w.shape[0]

    def backward(ctx, g):
        a = ctx._attrs
        return embedding_dense_backward(g, a["indices"], a["num_weights"], a["padding_idx"]),

    def jvp(w, out, dw, indices, padding_idx):
        return embedding_rows(dw, indices, padding_idx)


class EmbeddingDenseBackward(Op):
    """Sum each row of ``g`` into the weight row its index picked (padding_idx gets nothing)."""

    name = "EmbeddingDenseBackwardBackward0"

    def forward(g, indices, num_weights, padding_idx):
        dim = g.shape[-1]
        flat = indices.ravel()
        rows = g.reshape(-1, dim)
        if padding_idx is not None:
            keep = flat != padding_idx
            flat, rows = flat[keep], rows[keep]
        # embedding_dense_backward_cpu's order (each row added in turn), without np.add.at's loop
        return index_add_rows(num_weights, flat, rows)

    def save(ctx, g, out, indices, num_weights, padding_idx):
        ctx._attrs = {"indices": indices, "padding_idx": padding_idx}

    def backward(ctx, gg):
        return embedding_rows(gg, ctx._attrs["indices"], ctx._attrs["padding_idx"]),

    def jvp(g, out, dg, indices, num_weights, padding_idx):
        return embedding_dense_backward(dg, indices, num_weights, padding_idx)


def embedding_rows(weight, indices, padding_idx=None):
    return apply_op(Embedding, (weight,), {"indices": indices, "padding_idx": padding_idx})


def embedding_dense_backward(g, indices, num_weights, padding_idx):
    return apply_op(EmbeddingDenseBackward, (g,), {"indices": indices, "num_weights": num_weights,
                                                   "padding_idx": padding_idx})
