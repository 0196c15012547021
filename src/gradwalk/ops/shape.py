"""Shape and indexing ops: views, transposes, selections, cat/stack/split, copies, dtypes."""
import collections
import numbers

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .._dtype import Size
from ._util import export, formulas_on_arrays, normalize_dim, as_tensor_arg
from ._overlap import check_no_partial_overlap
from ._scatter import index_add_rows
from .cascade_sum import cascade_sum
from .core import Op, apply_op, result_dtype_many


_views = None  # autograd/views.py, imported on first use (it subclasses Tensor, loaded after us)


def make_view(out, input):
    global _views
    if _views is None:
        from ..autograd import views as _views
    return _views.make_view(out, input)


def _view_op(op, input, attrs):
    """Run a view op: the output shares ``input``'s buffer, version counter and root ``_base``
    (in-place writes through it are tracked by ``autograd/views.py``)."""
    return make_view(apply_op(op, (input,), attrs), input)


def _formula_view(op, input, attrs):
    """A view op inside a backward formula (``g.t()``): when nothing can tell the difference
    (``formulas_on_arrays``), the NumPy view marked as a view of ``input``, without the op's
    wrapping; otherwise the op itself."""
    if formulas_on_arrays():
        return make_view(_tensor.Tensor._make(op.forward(input._array(), **attrs)), input)
    return _view_op(op, input, attrs)


def _multi_view_op(op, input, attrs):
    from ..autograd.views import make_views

    return make_views(apply_op(op, (input,), attrs), input)

values_indices = collections.namedtuple("return_types", ["values", "indices"])


def _namedtuple_values_indices(values, indices, name=None):
    """``(values, indices)`` as the op ``name``'s ``torch.return_types`` tuple (``max``, ``sort``...)."""
    if name is None:
        return values_indices(values, indices)
    from .. import return_types

    return getattr(return_types, name)(values, indices)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel, orig):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


class View(Op):
    name = "ViewBackward0"
    is_view = True
    saves_attrs = ("self_sym_sizes",)

    def forward(x, shape, self_sym_sizes):
        return x.reshape(shape)

    def backward(ctx, g):
        sizes = ctx._attrs["self_sym_sizes"]
        data = g._data
        if data.__class__ is np.ndarray and data.flags.c_contiguous and formulas_on_arrays():
            # what g.reshape(sizes) gives (a view of g), without the op's wrapping
            return make_view(_tensor.Tensor._make(data.reshape(sizes)), g),
        return g.reshape(sizes),

    def jvp(x, out, dx, shape, self_sym_sizes):
        return dx.reshape(shape)


class UnsafeView(View):
    name = "UnsafeViewBackward0"


class ReshapeAlias(View):
    """``reshape`` of a non-contiguous tensor that can still be viewed: PyTorch's ``_reshape_alias``."""
    name = "ReshapeAliasBackward0"


class Clone(Op):
    name = "CloneBackward0"

    def forward(x):
        return x.copy()

    def backward(ctx, g):
        return g,

    def jvp(x, out, dx):
        return dx


class CopyBackwards(Clone):
    """``copy_``'s node: the same identity formulas as a clone, under PyTorch's name."""
    name = "CopyBackwards"


CopyBackwards.Node.name = lambda self: "torch::autograd::CopyBackwards"  # a C++ node in PyTorch


class ToCopy(Op):
    name = "ToCopyBackward0"
    internal_attrs = ('self_dtype',)  # kept for backward; PyTorch's node does not show it
    saves_attrs = ("self_dtype",)

    def forward(x, dtype, self_dtype):
        return x.astype(dtype)

    def backward(ctx, g):
        return g.to(ctx._attrs["self_dtype"]),

    def jvp(x, out, dx, dtype, self_dtype):
        return dx.to(out.dtype)


class Unsqueeze(Op):
    name = "UnsqueezeBackward0"
    is_view = True
    saves_attrs = ("dim",)

    def forward(x, dim):
        return np.expand_dims(x, dim)

    def backward(ctx, g):
        return g.squeeze(ctx._attrs["dim"]),

    def jvp(x, out, dx, dim):
        return dx.unsqueeze(dim)


class Squeeze(Op):
    name = "SqueezeBackward0"
    is_view = True
    saves_attrs = ("self_sym_sizes",)

    def forward(x, self_sym_sizes, dim=None):
        if dim is None:
            return np.squeeze(x)
        return np.squeeze(x, axis=dim) if x.shape[dim] == 1 else x

    def backward(ctx, g):
        # PyTorch's unsqueeze_to: one unsqueeze per size-1 dim (so create_graph records those)
        for dim, size in enumerate(ctx._attrs["self_sym_sizes"]):
            if size == 1:
                g = g.unsqueeze(dim)
        return g,

    def jvp(x, out, dx, self_sym_sizes, dim=None):
        return dx.reshape(out.shape)


class SqueezeDim(Squeeze):
    name = "SqueezeBackward1"
    saves_attrs = ("dim", "self_sym_sizes")

    def backward(ctx, g):
        a = ctx._attrs
        return (g.unsqueeze(a["dim"]) if a["self_sym_sizes"][a["dim"]] == 1 else g),


class SqueezeDims(Squeeze):
    """``x.squeeze((0, 2))``: of the listed dims, those of size 1 removed."""

    name = "SqueezeBackward2"
    saves_attrs = ("dim", "self_sym_sizes")

    def forward(x, self_sym_sizes, dim):
        axes = tuple(d for d in dim if d < x.ndim and x.shape[d] == 1)
        return np.squeeze(x, axis=axes) if axes else x

    def backward(ctx, g):
        a = ctx._attrs
        for d in sorted(a["dim"]):  # PyTorch's unsqueeze_to over the dims, in ascending order
            if d < len(a["self_sym_sizes"]) and a["self_sym_sizes"][d] == 1:
                g = g.unsqueeze(d)
        return g,


class SqueezeMatmul(Squeeze):
    """The squeeze that ``1-D @ 2-D`` matmul ends with."""

    name = "SqueezeBackward4"

    def backward(ctx, g):
        return g.reshape(ctx._attrs["self_sym_sizes"]),


class Expand(Op):
    name = "ExpandBackward0"
    is_view = True
    saves_attrs = ("self_sym_sizes",)

    def forward(x, size, self_sym_sizes):
        # a strided view with stride 0 on the broadcast dims, writable as PyTorch's is (writing one
        # element of it, x.expand(3)[0] = 0, writes the shared one; whole-tensor in-place ops are
        # refused by _write_inplace's overlap check)
        flags = x.flags
        if not (flags.c_contiguous and flags.writeable):  # (rare) NumPy's read-only broadcast
            return np.broadcast_to(x, size)
        lead = len(size) - x.ndim
        strides = (0,) * lead + tuple(0 if n == 1 and s != 1 else st
                                      for n, s, st in zip(x.shape, size[lead:], x.strides))
        return np.ndarray(size, x.dtype, x, 0, strides)  # over x's buffer: faster than broadcast_to

    def backward(ctx, g):
        return g.sum_to_size(ctx._attrs["self_sym_sizes"]),

    def jvp(x, out, dx, size, self_sym_sizes):
        return dx.expand(size)


class Transpose(Op):
    name = "TransposeBackward0"
    is_view = True
    saves_attrs = ("dim0", "dim1")

    def forward(x, dim0, dim1):
        return np.swapaxes(x, dim0, dim1)

    def backward(ctx, g):
        return g.transpose(ctx._attrs["dim0"], ctx._attrs["dim1"]),

    def jvp(x, out, dx, dim0, dim1):
        return dx.transpose(dim0, dim1)


class T(Op):
    name = "TBackward0"
    is_view = True

    def forward(x):
        return x.T

    def backward(ctx, g):
        return _formula_view(T, g, {}) if g._data.ndim <= 2 else g.t(),

    def jvp(x, out, dx):
        return dx.t()


class Permute(Op):
    name = "PermuteBackward0"
    is_view = True
    saves_attrs = ("dims",)

    def forward(x, dims):
        return np.transpose(x, dims)

    def backward(ctx, g):
        return g.permute(tuple(np.argsort(ctx._attrs["dims"]))),

    def jvp(x, out, dx, dims):
        return dx.permute(dims)


class Select(Op):
    name = "SelectBackward0"
    is_view = True
    saves_attrs = ("dim", "index", "self_sym_sizes")

    def forward(x, dim, index, self_sym_sizes):
        return x[(slice(None),) * dim + (index, Ellipsis)]  # the Ellipsis keeps a 0-dim result a view

    def backward(ctx, g):
        a = ctx._attrs
        return _embed(g, a["self_sym_sizes"], (slice(None),) * a["dim"] + (a["index"],)),

    def jvp(x, out, dx, dim, index, self_sym_sizes):
        return dx.select(dim, index)


class Slice(Op):
    name = "SliceBackward0"
    is_view = True
    saves_attrs = ("dim", "start", "end", "step", "self_sym_sizes")

    def forward(x, dim, start, end, step, self_sym_sizes):
        return x[(slice(None),) * dim + (slice(start, end, step),)]

    def backward(ctx, g):
        a = ctx._attrs
        return _embed(g, a["self_sym_sizes"], (slice(None),) * a["dim"] + (slice(a["start"], a["end"], a["step"]),)),

    def jvp(x, out, dx, dim, start, end, step, self_sym_sizes):
        return _slice(dx, dim, start, end, step)


class Index(Op):
    """Advanced (integer-array or boolean) indexing; backward scatters with accumulation."""

    name = "IndexBackward0"
    saves_attrs = ("self_sym_sizes",)
    internal_attrs = ("indices",)  # shown as PyTorch's tuple by the ``_saved_indices`` property

    def forward(x, indices, self_sym_sizes):
        if _rows_index(indices) is not None:  # x[idx] with one integer array: the same copy, faster
            return x.take(indices[0], axis=0)  # (out of range: the IndexError of x[idx], same message)
        return np.asarray(x[indices])

    def save(ctx, x, out, indices, self_sym_sizes):
        ctx._attrs["indices"] = indices

    def backward(ctx, g):
        a = ctx._attrs
        return index_put_zeros(g, a["self_sym_sizes"], a["indices"]),

    def jvp(x, out, dx, indices, self_sym_sizes):
        return apply_op(Index, (dx,), {"indices": indices, "self_sym_sizes": dx.shape})


class IndexPutZeros(Op):
    """``zeros(shape).index_put_(indices, g, accumulate=True)``: the backward of indexing."""

    name = "IndexPutBackward0"

    def forward(g, shape, indices):
        rows = _rows_index(indices)
        if rows is not None and rows.size and g.shape == rows.shape + tuple(shape[1:]) and len(shape):
            # x[idx]'s backward: PyTorch's sequential sums, without np.add.at's per-element loop
            flat = rows.ravel()
            if flat.size and flat.min() < 0:
                flat = np.where(flat < 0, flat + shape[0], flat)
            return index_add_rows(shape[0], flat, g.reshape(flat.size, -1)).reshape(shape)
        if (len(indices) == 1 and isinstance(indices[0], np.ndarray) and indices[0].dtype == bool
                and g.dtype.kind in "fc"):
            # a boolean mask picks each element once: no sums, only 0.0 + g (so -0.0 becomes 0.0)
            out = np.zeros(shape, dtype=g.dtype)
            out[indices] = g + 0.0
            return out
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, indices, g)
        return out

    def backward(ctx, gg):
        a = ctx._attrs
        return apply_op(Index, (gg,), {"indices": a["indices"], "self_sym_sizes": gg.shape}),

    def jvp(g, out, dg, shape, indices):
        return apply_op(IndexPutZeros, (dg,), {"shape": shape, "indices": indices})

    def save(ctx, g, out, shape, indices):
        ctx._attrs = {"indices": indices}


def _rows_index(indices):
    """The integer array of ``x[idx]`` (one advanced index, on the first dimension), else None."""
    if type(indices) is tuple and len(indices) == 1:
        idx = indices[0]
        if isinstance(idx, np.ndarray) and idx.dtype.kind in "iu":
            return idx
    return None


def index_put_zeros(g, shape, indices):
    return apply_op(IndexPutZeros, (g,), {"shape": tuple(shape), "indices": indices})


def _embed(g, shape, index):
    """zeros(shape) with g written at ``index`` (basic indexing): the backward of select/slice."""
    return apply_op(IndexPutZeros, (g,), {"shape": tuple(shape), "indices": index})


class Cat(Op):
    name = "CatBackward0"
    internal_attrs = ('sizes',)  # kept for backward; PyTorch's node does not show it
    saves_attrs = ("dim",)

    def forward(*xs, dim, sizes):
        return np.concatenate(xs, axis=dim)

    def backward(ctx, g):
        a = ctx._attrs
        out, start = [], 0
        for n, need in zip(a["sizes"], ctx.needs_input_grad):
            out.append(_slice(g, a["dim"], start, start + n, 1) if need else None)
            start += n
        return tuple(out)

    def save(ctx, *xs, out, dim, sizes):
        ctx._attrs["sizes"] = sizes

    def jvp(*args, dim, sizes):
        n = len(sizes)
        return cat(list(args[n + 1:]), dim)


class Stack(Op):
    name = "StackBackward0"
    saves_attrs = ("dim",)

    def forward(*xs, dim):
        return np.stack(xs, axis=dim)

    def backward(ctx, g):
        d = ctx._attrs["dim"]
        return tuple(g.select(d, i) if need else None for i, need in enumerate(ctx.needs_input_grad))

    def jvp(*args, dim):
        n = (len(args) - 1) // 2
        return stack(list(args[n + 1:]), dim)


class Split(Op):
    name = "SplitBackward0"
    internal_attrs = ('bounds',)  # kept for backward; PyTorch's node does not show it
    is_view = True
    saves_attrs = ("dim", "split_size", "self_sym_sizes")

    def forward(x, dim, split_size, self_sym_sizes, bounds):
        return tuple(x[(slice(None),) * dim + (slice(a, b),)] for a, b in bounds)

    def save(ctx, x, out, dim, split_size, self_sym_sizes, bounds):
        ctx._attrs["bounds"] = bounds

    def backward(ctx, *grads):
        from . import functions as F

        a = ctx._attrs
        parts = []
        for g, (lo, hi) in zip(grads, a["bounds"]):
            if g is None:
                shape = list(a["self_sym_sizes"])
                shape[a["dim"]] = hi - lo
                g = F.zeros(shape, dtype=ctx._input_metadata[0][1])
            parts.append(g)
        return cat(parts, a["dim"]),

    def jvp(x, out, dx, dim, split_size, self_sym_sizes, bounds):
        return tuple(_slice(dx, dim, lo, hi, 1) for lo, hi in bounds)


class SplitWithSizes(Split):
    """``x.split([1, 3])``: the same formula under PyTorch's name for the sizes overload."""

    name = "SplitWithSizesBackward0"


class IndexSelect(Op):
    name = "IndexSelectBackward0"
    saves_attrs = ("dim", "self_sym_sizes")

    def forward(x, dim, index, self_sym_sizes):
        return np.take(x, index, axis=dim)

    def save(ctx, x, out, dim, index, self_sym_sizes):
        ctx._attrs["index"] = index

    def backward(ctx, g):
        a = ctx._attrs
        return index_put_zeros(g, a["self_sym_sizes"], (slice(None),) * a["dim"] + (a["index"],)),

    def jvp(x, out, dx, dim, index, self_sym_sizes):
        return index_select(dx, dim, _tensor.Tensor._make(index))


class Unbind(Op):
    name = "UnbindBackward0"
    is_view = True
    saves_attrs = ("dim",)

    def forward(x, dim):
        return tuple(x[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim]))

    def backward(ctx, *grads):
        from . import functions as F

        d = ctx._attrs["dim"]
        parts = [g if g is not None else F.zeros(m[0], dtype=m[1])
                 for g, m in zip(grads, ctx._input_metadata)]
        return stack(parts, d),

    def jvp(x, out, dx, dim):
        return tuple(dx.select(dim, i) for i in range(dx.shape[dim]))


class Flip(Op):
    name = "FlipBackward0"
    saves_attrs = ("dims",)

    def forward(x, dims):
        return np.flip(x, dims).copy()

    def backward(ctx, g):
        return g.flip(ctx._attrs["dims"]),

    def jvp(x, out, dx, dims):
        return dx.flip(dims)


class Repeat(Op):
    name = "RepeatBackward0"
    saves_attrs = ("repeats", "self_sym_sizes")

    def forward(x, repeats, self_sym_sizes):
        lead = len(repeats) - x.ndim
        return np.tile(x.reshape((1,) * lead + x.shape), repeats)

    def backward(ctx, g):
        a = ctx._attrs
        shape = a["self_sym_sizes"]
        lead = len(a["repeats"]) - len(shape)
        full = (1,) * lead + tuple(shape)
        split = []
        for r, s in zip(a["repeats"], full):
            split += [r, s]
        g = g.reshape(split)
        g = g.sum(tuple(range(0, 2 * len(full), 2)))
        return g.reshape(shape),

    def jvp(x, out, dx, repeats, self_sym_sizes):
        return dx.repeat(*repeats)


class Gather(Op):
    name = "GatherBackward0"
    saves_attrs = ("dim",)

    def forward(x, dim, index):
        if index.shape[:dim] + index.shape[dim + 1:] != x.shape[:dim] + x.shape[dim + 1:]:
            # PyTorch's gather: index may be smaller than x in the other dims
            x = x[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))]
        return np.take_along_axis(x, index, axis=dim)

    def save(ctx, x, out, dim, index):
        ctx._attrs["index"] = index
        ctx._attrs["self_sym_sizes"] = tuple(x.shape)

    def backward(ctx, g):
        a = ctx._attrs
        return apply_op(ScatterAdd, (g,), {"dim": a["dim"], "index": a["index"],
                                           "shape": a["self_sym_sizes"]}),

    def jvp(x, out, dx, dim, index):
        return apply_op(Gather, (dx,), {"dim": dim, "index": index})


class Scatter(Op):
    """``x.scatter(dim, index, src)``: x with ``src``'s values written at ``index`` along dim
    (a ``src`` larger than ``index`` gets no gradient of its shape: PyTorch refuses that too)."""

    name = "ScatterBackward0"

    def forward(x, src, dim, index):
        out = x.copy()
        np.put_along_axis(out, index, src[tuple(slice(0, n) for n in index.shape)], axis=dim)
        return out

    def save(ctx, x, src, out, dim, index):
        ctx._attrs = {"dim": dim, "index": index}

    def backward(ctx, g):
        a = ctx._attrs
        need = ctx.needs_input_grad
        gx = gsrc = None
        if need[0]:
            zeros = _tensor.Tensor._make(np.zeros(a["index"].shape, dtype=g._data.dtype))
            gx = apply_op(Scatter, (g, zeros), {"dim": a["dim"], "index": a["index"]})
        if need[1]:
            gsrc = apply_op(Gather, (g,), {"dim": a["dim"], "index": a["index"]})
        return gx, gsrc

    def jvp(x, src, out, dx, dsrc, dim, index):
        return apply_op(Scatter, (dx, dsrc), {"dim": dim, "index": index})


class ScatterAdd(Op):
    name = "ScatterAddBackward0"

    def forward(g, dim, index, shape):
        out = np.zeros(shape, dtype=g.dtype)
        idx = list(np.indices(index.shape, sparse=True))
        idx[dim] = index
        np.add.at(out, tuple(idx), g)
        return out

    def save(ctx, g, out, dim, index, shape):
        ctx._attrs = {"dim": dim, "index": index}

    def backward(ctx, gg):
        return apply_op(Gather, (gg,), {"dim": ctx._attrs["dim"], "index": ctx._attrs["index"]}),

    def jvp(g, out, dg, dim, index, shape):
        return apply_op(ScatterAdd, (dg,), {"dim": dim, "index": index, "shape": shape})


class MaskedFill(Op):
    name = "MaskedFillBackward0"
    fills = True  # masked_fill_ into an expand()ed tensor runs (PyTorch warns it is deprecated)

    def forward(x, mask, value):
        return np.where(mask, np.asarray(value, dtype=x.dtype), x)

    def save(ctx, x, out, mask, value):
        ctx._attrs = {"mask": mask}

    def backward(ctx, g):
        from .pointwise import where
        Tensor = _tensor.Tensor
        return where(Tensor._make(ctx._attrs["mask"]), 0.0, g),

    def jvp(x, out, dx, mask, value):
        from .pointwise import where
        Tensor = _tensor.Tensor
        return where(Tensor._make(mask), 0.0, dx)


class CopySlices(Op):
    """``t[index] = value`` on a tensor that is part of a graph."""

    name = "CopySlices"

    def forward(x, v, index):
        out = x.copy()
        out[index] = v
        return out

    def save(ctx, x, v, out, index):
        ctx._attrs = {"index": index, "value_shape": v_shape(v)}

    def backward(ctx, g):
        a = ctx._attrs
        gx = gv = None
        if ctx.needs_input_grad[0]:
            gx = apply_op(_ZeroAt, (g,), {"index": a["index"]})
        if ctx.needs_input_grad[1]:
            gv = apply_op(Index, (g,), {"indices": a["index"], "self_sym_sizes": g.shape})
        return gx, gv

    def jvp(x, v, out, dx, dv, index):
        return apply_op(CopySlices, (dx, dv), {"index": index})


def v_shape(v):
    return tuple(v.shape)


CopySlices.Node.name = lambda self: "torch::autograd::CopySlices"


class _ZeroAt(Op):
    name = "MaskedFillBackward0"

    def forward(g, index):
        out = g.copy()
        out[index] = 0
        return out

    def save(ctx, g, out, index):
        ctx._attrs = {"index": index}

    def backward(ctx, gg):
        return apply_op(_ZeroAt, (gg,), {"index": ctx._attrs["index"]}),

    def jvp(g, out, dg, index):
        return apply_op(_ZeroAt, (dg,), {"index": index})


# ---------------------------------------------------------------- the functions users call

def _viewable(array, new_shape):
    """Whether ``new_shape`` can view ``array``'s memory without a copy: PyTorch's
    ``computeStride`` (aten/src/ATen/TensorUtils.cpp). The old dims are cut into chunks that are
    contiguous among themselves; each chunk must be covered exactly by consecutive new dims.
    (``q.view(B, T, nh, hs)`` on a ``split()`` output passes: only the last dim was cut.)"""
    old_shape, old_strides = array.shape, array.strides
    if array.flags.c_contiguous or array.size == 0 or not old_shape:
        return True
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


@export()
def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input.numel(), input.shape)
    data = input._data
    if data.flags.c_contiguous or data.size == 0:
        return _view_op(View, input, {"shape": shape, "self_sym_sizes": input.shape})
    if not _viewable(data, shape):
        # PyTorch copies first: UnsafeViewBackward0 <- CloneBackward0
        return apply_op(UnsafeView, (clone(input),), {"shape": shape, "self_sym_sizes": input.shape})
    return _view_op(ReshapeAlias, input, {"shape": shape, "self_sym_sizes": input.shape})


@export(function=False)
def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size, np.integer)):
        return input.to(shape[0])  # view(dtype)
    shape = _infer_shape(_shape_arg(shape), input.numel(), input.shape)
    if shape != input._data.shape and not _viewable(input._data, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _view_op(View, input, {"shape": shape, "self_sym_sizes": input.shape})


@export(function=False)
def view_as(input, other):
    return view(input, other.shape)


@export(function=False)
def reshape_as(input, other):
    return reshape(input, other.shape)


@export()
def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s = normalize_dim(start_dim, input.ndim)
    e = normalize_dim(end_dim, input.ndim)
    if s == e:
        return input
    shape = input.shape[:s] + (-1,) + input.shape[e + 1:]
    return reshape(input, shape)


@export()
def clone(input, *, memory_format=None):
    return apply_op(Clone, (input,))


@export(function=False)
def contiguous(input, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return clone(input)


def _to_signature_error(args, kwargs):
    def name(v):
        return {"dtype": "torch.dtype", "device": "torch.device", "Tensor": "Tensor"}.get(
            type(v).__name__, type(v).__name__)

    got = "".join(f"{name(a)}, " for a in args) + "".join(f"{k}={name(v)}, " for k, v in kwargs.items())
    return (f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
            " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, "
            "*, torch.memory_format memory_format = None)\n"
            " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format "
            "memory_format = None)\n"
            " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format "
            "memory_format = None)\n")


@export(function=False)
def to(input, *args, dtype=None, copy=False, device=None, non_blocking=False, memory_format=None, **unexpected):
    """``x.to(torch.float64)``, ``x.to("cpu")``, ``x.to(device, dtype)``, ``x.to(other)``."""
    from .._device import placement
    from .._dtype import as_dtype, dtype as dtype_cls
    from .._meta import to_device
    Tensor = _tensor.Tensor
    if unexpected:  # PyTorch's argument parser: x.to(requires_grad=True), an old tutorial's line
        raise TypeError(_to_signature_error(args, unexpected))
    for a in args:
        if isinstance(a, dtype_cls):
            dtype = a
        elif isinstance(a, Tensor):  # x.to(other): other's dtype and device
            dtype, device = a.dtype, a.device
        else:  # a device: a string, an int or a device object
            device = a
    if device is not None:  # the CPU or the meta device (to or from meta: _meta.to_device)
        moved = to_device(input, placement(device), None if dtype is None else as_dtype(dtype))
        if moved is not None:
            return moved
    if dtype is None:
        return input
    dtype = as_dtype(dtype)
    if dtype is input.dtype and not copy:
        return input
    return apply_op(ToCopy, (input,), {"dtype": dtype.np, "self_dtype": input.dtype}, out_dtype=dtype)


def _dtype_method(name, dt):
    def fn(input):
        return to(input, dt)

    fn.__name__ = name
    return export(name, function=False)(fn)


def _install_dtype_methods():
    from .. import _dtype as D

    for name, dt in (("float", D.float32), ("double", D.float64), ("long", D.int64),
                     ("int", D.int32), ("bool", D.bool_), ("half", D.float16)):
        _dtype_method(name, dt)


_install_dtype_methods()


@export(function=False)
def type_as(input, other):
    return to(input, other.dtype)


@export()
def unsqueeze(input, dim):
    d = normalize_dim(dim, input.ndim + 1)
    return _view_op(Unsqueeze, input, {"dim": d})


@export()
def squeeze(input, dim=None):
    if dim is None:
        return _view_op(Squeeze, input, {"self_sym_sizes": input.shape})
    if isinstance(dim, (tuple, list)):  # squeeze.dims (PyTorch 2.0)
        dims = tuple(normalize_dim(d, input.ndim) for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return _view_op(SqueezeDims, input, {"dim": dims, "self_sym_sizes": input.shape})
    d = normalize_dim(dim, input.ndim) if input.ndim else 0
    return _view_op(SqueezeDim, input, {"dim": d, "self_sym_sizes": input.shape})


@export(function=False)
def expand(input, *size):
    size = list(_shape_arg(size))
    lead = len(size) - input.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={size}): the number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the tensor ({input.ndim})")
    for i, s in enumerate(size):
        if s == -1:
            size[i] = input.shape[i - lead]
        elif i >= lead and input.shape[i - lead] not in (1, s):
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size "
                f"({input.shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: {size}.  "
                f"Tensor sizes: {list(input.shape)}")
    size = tuple(size)
    return _view_op(Expand, input, {"size": size, "self_sym_sizes": input.shape})


@export(function=False)
def expand_as(input, other):
    return expand(input, other.shape)


@export(function=False)
def sum_to_size(input, *size):
    """Sum a broadcast gradient down to ``size`` (PyTorch's ``sum_to``)."""
    size = tuple(_shape_arg(size))
    if input._data.shape == size:
        return input
    if size == ():
        return input.sum()  # at::sum_to to a 0-dim shape: a plain sum (SumBackward0)
    shape = input._data.shape
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    if formulas_on_arrays() and input._data.dtype.kind == "f":  # the engine's reduction, on arrays
        Tensor = _tensor.Tensor
        out = Tensor._make(np.asarray(cascade_sum(input._data, tuple(dims), keepdims=True))) if dims else input
        if lead:
            out = make_view(Tensor._make(out._array().reshape(size)), out)
        return out
    out = input.sum(tuple(dims), keepdim=True) if dims else input
    if lead:
        out = out.view(size)
    return out


@export()
def transpose(input, dim0, dim1):
    d0, d1 = normalize_dim(dim0, input.ndim), normalize_dim(dim1, input.ndim)
    return _view_op(Transpose, input, {"dim0": d0, "dim1": d1})


swapaxes = export("swapaxes")(transpose)


@export()
def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _view_op(T, input, {})


@export()
def permute(input, *dims):
    dims = tuple(normalize_dim(d, input.ndim) for d in _shape_arg(dims))
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match "
                           "the length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{input.ndim} is not equal to len(dims) = {len(dims)}")
    return _view_op(Permute, input, {"dims": dims})


@export()
def select(input, dim, index):
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    return _view_op(Select, input, {"dim": d, "index": index % n, "self_sym_sizes": input.shape})


def _slice(input, dim, start, end, step):
    return _view_op(Slice, input, {"dim": dim, "start": start, "end": end, "step": step,
                                   "self_sym_sizes": input.shape})


@export()
def narrow(input, dim, start, length):
    d = normalize_dim(dim, input.ndim)
    return _slice(input, d, start, start + length, 1)


def _is_advanced(i):
    Tensor = _tensor.Tensor
    return isinstance(i, (list, range, np.ndarray, Tensor)) and not (
        isinstance(i, Tensor) and i.ndim == 0 and i.dtype.np.kind in "iu")


def _index_tuple(index):
    """The index as a tuple of parts. A list holding a tensor, a sequence, a slice, ``...`` or
    None is read as a tuple of those parts, with PyTorch's deprecation warning (its
    ``treatSequenceAsTuple``: ``x[[slice(None), [2, 3]]]`` is ``x[:, [2, 3]]``); any other index
    is one part."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, (_tensor.Tensor, list, tuple, range, slice)) or i is Ellipsis or i is None
            for i in index):
        import warnings
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
            "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
            "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
            "error or a different result", UserWarning, stacklevel=3)
        return tuple(index)
    return (index,)


def _check_zero_dim_index(input, index):
    """A 0-d tensor takes only ``None``, ``...`` and booleans. PyTorch words the refusal by what
    was written: a bare integer (``loss.data[0]``, pre-0.4 code for ``loss.item()``), a bare
    slice, or any other index (``s[[0]]``, ``s[0, None]``: NumPy would read those)."""
    if input.ndim:
        return
    if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if isinstance(index, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    for part in _index_tuple(index):
        if part is None or part is Ellipsis or isinstance(part, (bool, np.bool_)):
            continue
        if isinstance(part, _tensor.Tensor) and part.ndim == 0 and part.dtype.np.kind == "b":
            continue
        raise IndexError("too many indices for tensor of dimension 0")


def getitem(input, index):
    """``x[index]``: basic parts become Select/Slice/Unsqueeze nodes, advanced parts one Index node."""
    _check_zero_dim_index(input, index)
    index = _index_tuple(index)
    if any(_is_advanced(i) or i is True or i is False for i in index):  # x[False]: no rows, not x[0]
        return _advanced_getitem(input, index)
    out = _basic_index(input, index)
    if out is input:  # x[...], x[:] still give a new tensor: an alias (a view) of x
        out = make_view(apply_op(Alias, (input,)), input)
    return out


def _basic_index(input, index):
    """Apply integers, slices, None and ``...``: a chain of views of ``input`` (or ``input`` itself
    when the index selects everything)."""
    Tensor = _tensor.Tensor
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis and i is not True)
    if n_real > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
    out = input
    dim = 0
    original_dim = 0  # the dim of ``input`` this part indexes (for PyTorch's error message)
    for i in index:
        if i is Ellipsis:
            dim += input.ndim - n_real  # the dims the ellipsis stands for
            original_dim += input.ndim - n_real
            continue
        if i is None or i is True:
            out = unsqueeze(out, dim)
            dim += 1
            continue
        if isinstance(i, (numbers.Integral, Tensor)):
            n = out.shape[dim]
            if not -n <= int(i) < n:
                raise IndexError(f"index {int(i)} is out of bounds for dimension {original_dim} with size {n}")
            out = select(out, dim, int(i))
        elif isinstance(i, slice):
            start, stop, step = i.indices(out.shape[dim])
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if (start, stop, step) != (0, out.shape[dim], 1):
                out = _slice(out, dim, start, max(stop, start), step)
            dim += 1
        elif isinstance(i, str):
            raise TypeError(f"new(): invalid data type '{type(i).__name__}'")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(i).__name__})")
        original_dim += 1
    return out


class Alias(Op):
    name = "AliasBackward0"
    is_view = True

    def forward(x):
        return x.view()

    def backward(ctx, g):
        return g,

    def jvp(x, out, dx):
        return dx


def _to_np_index(i):
    Tensor = _tensor.Tensor
    if isinstance(i, Tensor):
        return i._data
    if isinstance(i, list):
        array = np.asarray([j._data if isinstance(j, Tensor) else j for j in i])
        if array.dtype.kind == "f" and not any(isinstance(j, Tensor) for j in i):
            array = array.astype(np.int64)  # x[[0., 1.]]: PyTorch reads a list of numbers as longs
        return array
    if isinstance(i, range):  # t[range(n), targets]: a sequence, as PyTorch reads it
        return np.asarray(i, dtype=np.int64)
    return i


def _advanced_getitem(input, index):
    """As PyTorch's ``applySlicing``: the basic parts first (Select, Slice, Unsqueeze views), then
    one Index node with the advanced parts on that view."""
    if len(index) == 1 and index[0] is not True and index[0] is not False:
        sliced, np_index = input, (_to_np_index(index[0]),)
    else:
        basic, np_index = _split_index(index)
        sliced = _basic_index(input, basic)
    try:
        return apply_op(Index, (sliced,), {"indices": np_index, "self_sym_sizes": sliced.shape})
    except (IndexError, ValueError):
        _raise_index_error(sliced.shape, np_index)
        raise


def _raise_index_error(shape, index, value_shape=None):
    """PyTorch's IndexError for an advanced index NumPy refused (its own messages name arrays and
    axes): float indices, too many indices, a mask of the wrong shape, indices that do not
    broadcast, an index out of range; and, given ``value_shape``, a value that does not fit."""
    arrays = [ix for ix in index if isinstance(ix, np.ndarray)]
    if any(ix.dtype.kind not in "iub" for ix in arrays):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    covered = sum(ix.ndim if isinstance(ix, np.ndarray) and ix.dtype == np.bool_ else 1
                  for ix in index if ix is not Ellipsis)
    if covered > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    longs, dims, dim = [], [], 0  # each index tensor (a mask as its nonzero()) and the dim it indexes
    for ix in index:
        if ix is Ellipsis:
            dim += len(shape) - covered
        elif isinstance(ix, np.ndarray) and ix.dtype == np.bool_:
            for k in range(ix.ndim):
                if ix.shape[k] != shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(ix.shape)} at index {k} does not match the shape "
                        f"of the indexed tensor {list(shape)} at index {dim + k}")
            for k, nz in enumerate(np.nonzero(ix)):
                longs.append(nz)
                dims.append(dim + k)
            dim += ix.ndim
        else:
            if isinstance(ix, np.ndarray):
                longs.append(ix)
                dims.append(dim)
            dim += 1
    try:
        broadcast = np.broadcast_arrays(*longs)
    except ValueError:
        shapes = ", ".join(str(list(ix.shape)) for ix in longs)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{shapes}") from None
    if broadcast:  # the first element (in order) with an index out of range, its first such index
        bad = [((b < -shape[d]) | (b >= shape[d])).ravel() for b, d in zip(broadcast, dims)]
        anywhere = np.logical_or.reduce(bad)
        if anywhere.any():
            element = int(np.argmax(anywhere))
            position = next(k for k, b in enumerate(bad) if b[element])
            value = int(broadcast[position].ravel()[element])
            raise IndexError(f"index {value} is out of bounds for dimension {position} with size "
                             f"{shape[dims[position]]}")
    if value_shape is not None:
        result = np.broadcast_to(np.zeros((), np.int8), shape)[index].shape
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast "
                           f"to indexing result of shape {list(result)}")


def _check_setitem_overlap(input, index, np_index, value, accumulate):
    """``y[1:] = y[:-1]``: PyTorch's partial-overlap error. A basic index writes a view of the
    input (``copy_``), an advanced one the whole input (``index_put_``)."""
    data = input._data
    if data.__class__ is not np.ndarray:
        return
    if not accumulate and not any(_is_advanced(i) for i in index):
        try:
            data = data[np_index]
        except (IndexError, ValueError):
            return  # the write itself reports the bad index
    check_no_partial_overlap(data, (value._data,))


def setitem(input, index, value, accumulate=False):
    """``x[index] = value``: an in-place write; on a graph tensor the node is CopySlices.
    ``accumulate``: ``index_put_(..., accumulate=True)``, adding ``value`` (repeats add up)."""
    from ..grad_mode import _state
    Tensor = _tensor.Tensor
    from .core import _check_inplace

    _check_zero_dim_index(input, index)
    index = _index_tuple(index)
    np_index = tuple(_to_np_index(i) for i in index)
    if len(np_index) == 1:
        np_index = np_index[0]
    value = as_tensor_arg(value)
    if not value._is_wrapped_number and value._data.__class__ is np.ndarray and value._data.base is not None:
        _check_setitem_overlap(input, index, np_index, value, accumulate)
    dual = input._fw_grads or value._fw_grads  # forward AD: the write must carry the tangent too
    if not dual and (not _state.grad_enabled or not (input.requires_grad or value.requires_grad)):
        try:
            if accumulate:
                data = input._array()
                np.add.at(data, np_index, np.broadcast_to(value._data, data[np_index].shape))
            else:
                input._array()[np_index] = value._py if value._is_wrapped_number else value._data
        except (IndexError, ValueError):
            _raise_setitem_error(input, index, value)
            raise
        input._version_counter[0] += 1
        return
    if value._is_wrapped_number:
        value = Tensor._make(np.asarray(value._py, dtype=input._data.dtype))
    advanced = any(_is_advanced(i) for i in index)
    if not dual and not advanced and not accumulate:
        # As PyTorch: the indexed part is a view of input (Select, Slice, ...) and the value is
        # copied into it; the in-place write on a view gives input a CopySlices history.
        _copy_to(_basic_index(input, index), value)
        return
    if _state.grad_enabled:
        if input._base is not None:
            _check_inplace(input)  # a view made under no_grad, or a view of a leaf: refused
        elif input.grad_fn is None and input.requires_grad:  # x[[0]] = 5. writes through a view of x
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if dual:
        apply_op(CopySlices, (input, value), {"index": np_index}, inplace=input)
        return
    # As PyTorch: the basic parts of the index (integers, slices, None, ...) make a view of input
    # (Select, Slice, ...), and index_put_ writes into that view with the advanced parts; when the
    # view is not input itself, input gets CopySlices(IndexPutBackward0) as its history.
    basic, advanced_on_view = _split_index(index)
    sliced = _basic_index(input, basic)
    sizes = list(value.shape)
    while sizes and sizes[0] == 1:  # PyTorch's slicePrefix1sSize: the value without leading 1s
        sizes.pop(0)
    if len(sizes) != value.ndim:
        value = view(value, tuple(sizes))
    if _state.grad_enabled and sliced is not input:
        _check_inplace(sliced)
    try:
        apply_op(IndexPut, (sliced, value), {"index": advanced_on_view, "accumulate": accumulate},
                 inplace=sliced)
    except (IndexError, ValueError):
        _raise_index_error(sliced.shape, advanced_on_view, value.shape)
        raise


def _raise_setitem_error(input, index, value):
    """``x[index] = v`` refused by NumPy: PyTorch's message, found on the view the basic parts make."""
    if not any(_is_advanced(i) for i in index):
        return
    basic, rest = _split_index(index)
    sliced = _basic_index(input, basic)  # (input does not require grad on this path)
    _raise_index_error(sliced.shape, rest, value.shape)


def _split_index(index):
    """An index mixing basic and advanced parts, as PyTorch's ``applySlicing`` splits it: the
    basic index (each advanced part replaced by full slices over the dims it covers), and the
    index that the view it makes still needs (integers gone, each slice or new dim a full slice)."""
    basic, rest = [], []
    for i in index:
        if _is_advanced(i):
            ix = _to_np_index(i)
            covered = np.ndim(ix) if np.asarray(ix).dtype == np.bool_ else 1
            basic.extend([slice(None)] * covered)
            rest.append(ix)
        elif i is Ellipsis:
            basic.append(i)
            rest.append(i)
        elif i is True or i is False:  # PyTorch: a new dim (unsqueeze), indexed by [0] or by []
            basic.append(None)
            rest.append(np.array([0] if i else [], dtype=np.int64))
        elif i is None or isinstance(i, slice):
            basic.append(i)
            rest.append(slice(None))
        else:  # an integer: selected away
            basic.append(i)
    return tuple(basic), tuple(rest)


class IndexPut(CopySlices):
    """``x[[0, 2]] = v``, ``x[mask] = v``: ``index_put_`` (its own node, not CopySlices)."""

    name = "IndexPutBackward0"
    internal_attrs = ("index", "value_shape", "self_sym_sizes", "indices")

    def forward(x, v, index, accumulate=False):
        out = x.copy()
        if accumulate:  # index_put_(..., accumulate=True): repeated indices add up, in order
            np.add.at(out, index, np.broadcast_to(v, out[index].shape))
        else:
            out[index] = v
        return out

    def save(ctx, x, v, out, index, accumulate=False):
        ctx._attrs = {"index": index, "value_shape": v_shape(v), "accumulate": accumulate,
                      "self_sym_sizes": tuple(x.shape)}
        # PyTorch's node saves the index tensors, so a second backward() is refused once they are
        # freed (this node saves the first of them: what the engine frees and checks).
        first = next((i for i in (index if isinstance(index, tuple) else (index,))
                      if isinstance(i, np.ndarray)), None)
        if first is not None:
            ctx.save(indices=_tensor.Tensor._make(first))

    def backward(ctx, g):
        if ctx._saved is not None:
            ctx.indices  # noqa: B018  (raises "backward through the graph a second time" once freed)
        if not ctx._attrs["accumulate"]:
            return CopySlices.backward(ctx, g)
        # accumulate: self's gradient passes through whole; values' is the indexed part
        a = ctx._attrs
        gv = None
        if ctx.needs_input_grad[1]:
            gv = apply_op(Index, (g,), {"indices": a["index"], "self_sym_sizes": g.shape})
        return (g if ctx.needs_input_grad[0] else None), gv

    def jvp(x, v, out, dx, dv, index, accumulate=False):
        return apply_op(IndexPut, (dx, dv), {"index": index, "accumulate": accumulate})


def _pytorch_indices(index, ndim):
    """The advanced parts of an index as PyTorch's index nodes save them: one tensor (or None)
    per dim of the tensor indexed, up to the last one indexed (``x[:, idx]``: ``(None, idx)``)."""
    Tensor = _tensor.Tensor
    index = index if isinstance(index, tuple) else (index,)
    covered = sum(ix.ndim if isinstance(ix, np.ndarray) and ix.dtype == np.bool_ else 1
                  for ix in index if ix is not Ellipsis)
    out = []
    for ix in index:
        if ix is Ellipsis:
            out.extend([None] * (ndim - covered))
        elif isinstance(ix, np.ndarray):
            out.append(Tensor._make(ix))
        else:
            out.append(None)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _saved_indices(node):
    attrs = node._attrs
    if node._saved is not None and "indices" in node._saved:
        node._unpacked("indices")  # freed after backward: PyTorch's "a second time" error
    key = "indices" if "indices" in attrs else "index"
    return _pytorch_indices(attrs[key], len(attrs["self_sym_sizes"]))


def _raw_saved_indices(node):
    from ..autograd.node import as_saved_tensor

    return tuple(None if t is None else as_saved_tensor(t) for t in _saved_indices(node))


for _op in (Index, IndexPut):
    _op.Node._saved_indices = property(_saved_indices, doc="PyTorch's saved index tensors")
    _op.Node._raw_saved_indices = property(_raw_saved_indices)


def _copy_to(dst, src):
    """PyTorch's ``copy_to`` for ``x[index] = value``: ``copy_`` when the shapes agree, ``fill_``
    for a 0-dim value, else the value without its leading 1s, expanded to ``dst``, then ``copy_``."""
    from .inplace import copy_, fill_

    if dst.shape == src.shape:
        return copy_(dst, src)
    if src.ndim == 0:
        return fill_(dst, src)
    sizes = list(src.shape)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    src = view(src, tuple(sizes))
    if src.shape != dst.shape:
        src = expand(src, *dst.shape)
    return copy_(dst, src)


@export()
def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:  # torch.cat([a, b]) of scalars: PyTorch wants stack (or 1-element tensors)
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    d = normalize_dim(dim, tensors[0].ndim)
    dtype = result_dtype_many(tensors)
    ref = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.ndim != len(ref):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(ref)} and {t.ndim}")
        for j in range(len(ref)):
            if j != d and t.shape[j] != ref[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {ref[j]} but "
                    f"got size {t.shape[j]} for tensor number {i} in the list.")
    return apply_op(Cat, tuple(tensors), {"dim": d, "sizes": tuple(t.shape[d] for t in tensors)},
                    out_dtype=dtype)


concat = export("concat", "concatenate")(cat)


@export()
def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}")
    d = normalize_dim(dim, tensors[0].ndim + 1)
    return apply_op(Stack, tuple(tensors), {"dim": d}, out_dtype=result_dtype_many(tensors))


@export()
def split(input, split_size_or_sections, dim=0):
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        bounds = [(i, min(i + size, n)) for i in range(0, n, size)] or [(0, 0)]
    else:
        bounds, start = [], 0
        for s in split_size_or_sections:
            bounds.append((start, start + s))
            start += s
        size = tuple(split_size_or_sections)
        if start != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                f"dimension {d}), but got split_sizes={list(size)}")
        return _multi_view_op(SplitWithSizes, input, {"dim": d, "split_size": size,
                                                      "self_sym_sizes": input.shape, "bounds": tuple(bounds)})
    return _multi_view_op(Split, input, {"dim": d, "split_size": size, "self_sym_sizes": input.shape,
                                         "bounds": tuple(bounds)})


@export()
def chunk(input, chunks, dim=0):
    d = normalize_dim(dim, input.ndim)
    size = -(-input.shape[d] // chunks)
    return split(input, size, d)


@export()
def unbind(input, dim=0):
    d = normalize_dim(dim, input.ndim)
    return _multi_view_op(Unbind, input, {"dim": d})


@export()
def flip(input, dims):
    if isinstance(dims, int):
        dims = (dims,)
    return apply_op(Flip, (input,), {"dims": tuple(normalize_dim(x, input.ndim) for x in dims)})


@export(function=False)
def repeat(input, *repeats):
    return apply_op(Repeat, (input,), {"repeats": _shape_arg(repeats), "self_sym_sizes": input.shape})


@export()
def gather(input, dim, index):
    return apply_op(Gather, (input,), {"dim": normalize_dim(dim, input.ndim), "index": index._data})


@export()
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        from .indexing_more import scatter_with_reduce  # x.scatter(0, i, src, reduce="add")

        return scatter_with_reduce(input, dim, index, src, value, reduce, inplace=False)
    if src is None:
        src = value
    if not isinstance(src, _tensor.Tensor):  # scatter(dim, index, value): ScatterBackward0's value
        src = _tensor.Tensor._make(np.full(index.shape, src, dtype=input._data.dtype))
    elif src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.dtype.name != "int64":
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    return apply_op(Scatter, (input, src), {"dim": normalize_dim(dim, input.ndim), "index": index._data})


@export()
def masked_fill(input, mask, value):
    Tensor = _tensor.Tensor
    if isinstance(value, Tensor):
        value = value.item()
    return apply_op(MaskedFill, (input,), {"mask": masked_fill_mask(mask, input), "value": value})


def masked_fill_mask(mask, input):
    """The mask as ``input``'s shape; under vmap a batched mask is passed on as it is (a
    ``LogicalArray`` that knows every sample's mask: the vmap rule broadcasts it per sample)."""
    if getattr(mask._data, "physical", None) is not None:
        return mask._data
    return np.broadcast_to(mask._data, input.shape)


@export()
def index_select(input, dim, index):
    d = normalize_dim(dim, input.ndim)
    return apply_op(IndexSelect, (input,), {"dim": d, "index": np.asarray(index._data).reshape(-1),
                                            "self_sym_sizes": input.shape})


def scatter_along(g, indices, dim, keepdim, shape):
    """Put ``g`` at ``indices`` along ``dim`` of zeros(shape): the backward of max(dim)."""
    if not keepdim:
        g = g.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return apply_op(ScatterAdd, (g,), {"dim": dim, "index": indices._data, "shape": tuple(shape)})
