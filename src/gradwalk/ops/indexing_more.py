"""Scatter and index ops beyond ``scatter``/``gather``/``index_select``: ``scatter_add``,
``scatter_reduce``, ``index_add``, ``index_copy``, ``index_fill``, ``index_reduce``,
``masked_scatter``, the ``*_scatter`` ops (``select_scatter``, ``slice_scatter``,
``diagonal_scatter``) and ``take_along_dim``, ``argwhere``, ``unravel_index``.

Each class is one ATen op: PyTorch's backward node name, a NumPy ``forward`` and the backward
formula of ``tools/autograd/derivatives.yaml``, written with gradwalk's own tensor ops (so
``create_graph=True`` works). The in-place ``_`` forms run the same op into ``self``.
"""
import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from ._util import export, normalize_dim
from .core import Op, apply_op
from .shape import Gather, Scatter


def _F():
    from . import functions  # (at call time: functions imports this module)

    return functions


def _make(array):
    return _tensor.Tensor._make(np.asarray(array))


def _inplace(op, self, inputs, attrs):
    return apply_op(op, (self,) + tuple(inputs), attrs, out_dtype=self.dtype, inplace=self)


def _check_index(name, index):
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")


def _along(index, dim):
    """The NumPy index tuple that puts ``index`` along ``dim`` (every other dim its own position)."""
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    return tuple(idx)


# ---------------------------------------------------------------- scatter_add / scatter_reduce

class ScatterAddSrc(Op):
    """``x.scatter_add(dim, index, src)``: x plus src's values added in at ``index`` along dim."""

    name = "ScatterAddBackward0"
    saves_attrs = ("dim",)

    def forward(x, src, dim, index):
        out = x.copy()
        np.add.at(out, _along(index, dim), src[tuple(slice(0, n) for n in index.shape)])
        return out

    def save(ctx, x, src, out, dim, index):
        ctx._attrs["index"] = index

    def backward(ctx, g):
        a = ctx._attrs
        gsrc = apply_op(Gather, (g,), {"dim": a["dim"], "index": a["index"]}) if ctx.needs_input_grad[1] else None
        return g, gsrc

    def jvp(x, src, out, dx, dsrc, dim, index):
        return apply_op(ScatterAddSrc, (dx, dsrc), {"dim": dim, "index": index})


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_array(x, src, dim, index, reduce, include_self):
    """PyTorch's ``scatter_reduce`` on arrays: every position ``index`` names along ``dim`` is
    reduced over its ``src`` values (and its own value when ``include_self``)."""
    src = src[tuple(slice(0, n) for n in index.shape)]
    where = _along(index, dim)
    out = x.copy()
    touched = np.zeros(x.shape, dtype=bool)
    touched[where] = True
    if reduce in ("sum", "mean"):
        if not include_self:
            out[touched] = 0
        np.add.at(out, where, src)
        if reduce == "mean":
            count = np.zeros(x.shape, dtype=np.int64) + (1 if include_self else 0)
            np.add.at(count, where, 1)
            count = np.maximum(count, 1)
            out = out // count if out.dtype.kind in "iub" else (out / count).astype(out.dtype)
    elif reduce == "prod":
        if not include_self:
            out[touched] = 1
        np.multiply.at(out, where, src)
    else:
        ufunc = np.maximum if reduce == "amax" else np.minimum
        if not include_self:  # the reduction starts from its identity, -inf for amax
            info = np.finfo(out.dtype) if out.dtype.kind == "f" else np.iinfo(out.dtype)
            out[touched] = (-np.inf if reduce == "amax" else np.inf) if out.dtype.kind == "f" else (
                info.min if reduce == "amax" else info.max)
        ufunc.at(out, where, src)
    return out


class ScatterReduce(Op):
    name = "ScatterReduceBackward0"
    saves_attrs = ("dim", "reduce", "include_self")

    def forward(x, src, dim, index, reduce, include_self, original=None):
        return _scatter_reduce_array(x, src, dim, index, reduce, include_self)

    def save(ctx, x, src, out, dim, index, reduce, include_self, original=None):
        """(``original``: self before an in-place ``scatter_reduce_`` wrote into it, as PyTorch
        saves it.)"""
        ctx._attrs["index"] = _make(index)
        ctx.save(self=x if original is None else _make(original), src=src)
        ctx.save_result("result", out)

    def backward(ctx, grad):
        """``scatter_reduce_backward`` (FunctionsManual.cpp)."""
        F = _F()
        a = ctx._attrs
        dim, index, reduce, include_self = a["dim"], a["index"], a["reduce"], a["include_self"]
        x, src, result = ctx._unpacked("self"), ctx._unpacked("src"), ctx._unpacked("result")
        if reduce == "sum":
            grad_self, grad_src = grad, grad.gather(dim, index)
        elif reduce == "prod":
            masked_self = x.masked_fill(x == 0, 1)
            masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
            grad_self = grad * masked_self_result / masked_self
            src_zero = src == 0
            src_num_zeros = F.zeros_like(x).scatter_add(dim, index, src_zero.to(x.dtype)).gather(dim, index)
            src_single_zero = src_zero & (src_num_zeros == 1)
            masked_src = src.masked_fill(src_single_zero, 1)
            masked_src_result = x.scatter_reduce(dim, index, masked_src, reduce, include_self=include_self)
            grad_src = F.where(src_single_zero, (grad * masked_src_result).gather(dim, index),
                               (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
        elif reduce == "mean":
            n = F.ones_like(x) if include_self else F.zeros_like(x)
            n = n.scatter_add(dim, index, F.ones_like(src))
            n = n.masked_fill(n == 0, 1)
            grad_self = grad / n
            grad_src = (grad / n).gather(dim, index)
        else:  # amax, amin: the gradient shared evenly between the values equal to the result
            value = result.gather(dim, index)
            self_is_result = (x == result).to(x.dtype)
            src_is_result = (src == value).to(x.dtype)
            n = self_is_result.scatter_add(dim, index, src_is_result)
            grad_distributed = grad / n
            grad_self = self_is_result * grad_distributed
            grad_src = src_is_result * grad_distributed.gather(dim, index)
        if not include_self:
            grad_self = grad_self.scatter(dim, index, 0)
        return grad_self, grad_src


def _scatter_reduce_args(name, input, dim, index, src, reduce):
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _check_index(name, index)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return normalize_dim(dim, input.ndim)


@export()
def scatter_add(input, dim, index, src):
    _check_index("scatter_add", index)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return apply_op(ScatterAddSrc, (input, src), {"dim": normalize_dim(dim, input.ndim), "index": index._data})


@export(function=False)
def scatter_add_(self, dim, index, src):
    _check_index("scatter_add", index)
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return _inplace(ScatterAddSrc, self, (src,), {"dim": normalize_dim(dim, self.ndim), "index": index._data})


@export()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    d = _scatter_reduce_args("scatter_reduce", input, dim, index, src, reduce)
    return apply_op(ScatterReduce, (input, src), {"dim": d, "index": index._data, "reduce": reduce,
                                                  "include_self": bool(include_self)})


@export(function=False)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    d = _scatter_reduce_args("scatter_reduce", self, dim, index, src, reduce)
    return _inplace(ScatterReduce, self, (src,), {"dim": d, "index": index._data, "reduce": reduce,
                                                  "include_self": bool(include_self),
                                                  "original": _original(self, src, reduce)})


def _original(self, src, reduce):
    """A copy of self for a backward formula that reads it, when one will be recorded."""
    from ..grad_mode import _state

    if reduce == "sum" or not _state.grad_enabled or not (self.requires_grad or src.requires_grad):
        return None
    return self._data.copy()


class ScatterOldReduce(Op):
    """``scatter(dim, index, src, reduce='add'|'multiply')``: PyTorch records no formula for it
    (its node is ``NotImplemented``: backward raises)."""

    name = "NotImplemented"

    def forward(x, src, dim, index, reduce):
        return _scatter_reduce_array(x, src, dim, index, {"add": "sum", "multiply": "prod"}[reduce], True)

    def backward(ctx, g):
        raise RuntimeError("derivative for aten::scatter is not implemented")


ScatterOldReduce.Node.name = lambda self: "torch::autograd::NotImplemented"


def scatter_with_reduce(input, dim, index, src, value, reduce, inplace):
    from .shape import scatter

    if src is None:
        src = value
    if reduce is None:
        if not inplace:
            return scatter(input, dim, index, src)
        if not isinstance(src, _tensor.Tensor):
            src = _make(np.full(index.shape, src, dtype=input._data.dtype))
        elif src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _check_index("scatter", index)
        return _inplace(Scatter, input, (src,), {"dim": normalize_dim(dim, input.ndim), "index": index._data})
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if not isinstance(src, _tensor.Tensor):
        src = _make(np.full(index.shape, src, dtype=input._data.dtype))
    _check_index("scatter", index)
    attrs = {"dim": normalize_dim(dim, input.ndim), "index": index._data, "reduce": reduce}
    if inplace:
        return _inplace(ScatterOldReduce, input, (src,), attrs)
    return apply_op(ScatterOldReduce, (input, src), attrs)


@export(function=False)
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    return scatter_with_reduce(self, dim, index, src, value, reduce, inplace=True)


# ---------------------------------------------------------------- index_add / copy / fill / reduce

def _check_index_args(name, input, dim, index, source):
    d = normalize_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"{name}_(): Index is supposed to be a vector")
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{name}_(): Expected dtype int32/int64 for index")
    if source is not None:
        if source.dtype is not input.dtype:
            raise RuntimeError(f"{name}_(): self ({input.dtype.short_name}) and source "
                               f"({source.dtype.short_name}) must have the same scalar type")
        if source.ndim and index.numel() != source.shape[d if source.ndim == input.ndim else 0]:
            raise RuntimeError(f"{name}_(): Number of indices ({index.numel()}) should be equal to "
                               f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    return d


def _index_slot(index, dim, ndim):
    return (slice(None),) * dim + (np.asarray(index).reshape(-1),)


class IndexAdd(Op):
    name = "IndexAddBackward0"
    saves_attrs = ("alpha", "dim")

    def forward(x, source, dim, index, alpha):
        out = x.copy()
        src = source if alpha == 1 else source * np.asarray(alpha, dtype=x.dtype)
        src = np.broadcast_to(src, out[_index_slot(index, dim, x.ndim)].shape) if x.ndim else src
        if x.ndim:
            np.add.at(out, _index_slot(index, dim, x.ndim), src)
        else:
            out = out + src.reshape(())
        return out.astype(x.dtype, copy=False)

    def save(ctx, x, source, out, dim, index, alpha):
        ctx._attrs["index"] = _make(index)
        ctx._attrs["source_shape"] = source.shape

    def backward(ctx, g):
        a = ctx._attrs
        gsrc = None
        if ctx.needs_input_grad[1]:
            picked = g.index_select(a["dim"], a["index"]) if g.ndim else g
            shape = a["source_shape"]
            gsrc = picked.reshape(shape) if len(shape) == 0 else picked.expand(shape)
            if a["alpha"] != 1:
                gsrc = gsrc * a["alpha"]
        return g, gsrc

    def jvp(x, source, out, dx, dsource, dim, index, alpha):
        return apply_op(IndexAdd, (dx, dsource), {"dim": dim, "index": index, "alpha": alpha})


class IndexCopy(Op):
    name = "IndexCopyBackward0"
    saves_attrs = ("dim",)

    def forward(x, source, dim, index):
        out = x.copy()
        if x.ndim:
            out[_index_slot(index, dim, x.ndim)] = source.reshape(out[_index_slot(index, dim, x.ndim)].shape)
        else:
            out = source.reshape(()).copy()
        return out

    def save(ctx, x, source, out, dim, index):
        ctx._attrs["index"] = _make(index)
        ctx._attrs["source_shape"] = source.shape

    def backward(ctx, g):
        a = ctx._attrs
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = g.index_fill(a["dim"], a["index"], 0)
        if ctx.needs_input_grad[1]:
            picked = g.index_select(a["dim"], a["index"]) if g.ndim else g
            gsrc = picked.reshape(a["source_shape"])
        return gx, gsrc

    def jvp(x, source, out, dx, dsource, dim, index):
        return apply_op(IndexCopy, (dx, dsource), {"dim": dim, "index": index})


class IndexFill(Op):
    """``x.index_fill(dim, index, value)`` with a number (``IndexFillBackward0``)."""

    name = "IndexFillBackward0"
    saves_attrs = ("dim",)
    fills = False

    def forward(x, dim, index, value):
        out = x.copy()
        if x.ndim:
            out[_index_slot(index, dim, x.ndim)] = value
        else:
            out[...] = value
        return out

    def save(ctx, x, out, dim, index, value):
        ctx._attrs["index"] = _make(index)

    def backward(ctx, g):
        return g.index_fill(ctx._attrs["dim"], ctx._attrs["index"], 0),

    def jvp(x, out, dx, dim, index, value):
        return apply_op(IndexFill, (dx,), {"dim": dim, "index": index, "value": 0})


class IndexFillTensor(Op):
    """``x.index_fill(dim, index, value)`` with a 0-dim tensor value (``IndexFillBackward1``)."""

    name = "IndexFillBackward1"
    saves_attrs = ("dim",)

    def forward(x, value, dim, index):
        return IndexFill.forward(x, dim, index, value.reshape(()))

    def save(ctx, x, value, out, dim, index):
        ctx._attrs["index"] = _make(index)

    def backward(ctx, g):
        a = ctx._attrs
        gx = g.index_fill(a["dim"], a["index"], 0) if ctx.needs_input_grad[0] else None
        gv = None
        if ctx.needs_input_grad[1]:
            gv = (g.index_select(a["dim"], a["index"]) if g.ndim else g).sum()
        return gx, gv

    def jvp(x, value, out, dx, dvalue, dim, index):
        return apply_op(IndexFillTensor, (dx, dvalue), {"dim": dim, "index": index})


@export()
def index_add(input, dim, index, source, *, alpha=1):
    d = _check_index_args("index_add", input, dim, index, source)
    return apply_op(IndexAdd, (input, source), {"dim": d, "index": index._data, "alpha": alpha})


@export(function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    d = _check_index_args("index_add", self, dim, index, source)
    return _inplace(IndexAdd, self, (source,), {"dim": d, "index": index._data, "alpha": alpha})


@export()
def index_copy(input, dim, index, source):
    d = _check_index_args("index_copy", input, dim, index, source)
    return apply_op(IndexCopy, (input, source), {"dim": d, "index": index._data})


@export(function=False)
def index_copy_(self, dim, index, source):
    d = _check_index_args("index_copy", self, dim, index, source)
    return _inplace(IndexCopy, self, (source,), {"dim": d, "index": index._data})


def _index_fill(input, dim, index, value, inplace):
    d = _check_index_args("index_fill", input, dim, index, None)
    Tensor = _tensor.Tensor
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value.ndim} dimension(s).")
        op, inputs, attrs = IndexFillTensor, (value,), {"dim": d, "index": index._data}
    else:
        op, inputs, attrs = IndexFill, (), {"dim": d, "index": index._data, "value": value}
    if inplace:
        return _inplace(op, input, inputs, attrs)
    return apply_op(op, (input,) + inputs, attrs)


@export()
def index_fill(input, dim, index, value):
    return _index_fill(input, dim, index, value, inplace=False)


@export(function=False)
def index_fill_(self, dim, index, value):
    return _index_fill(self, dim, index, value, inplace=True)


class IndexReduce(ScatterReduce):
    """``index_reduce``: ``scatter_reduce`` with ``index`` spread over ``source``'s other dims
    (the same formula, PyTorch's ``index_reduce_backward``)."""

    name = "IndexReduceBackward0"


_warned_index_reduce = False


def _index_reduce(input, dim, index, source, reduce, include_self, inplace):
    global _warned_index_reduce
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _check_index_args("index_reduce", input, dim, index, source)
    if not _warned_index_reduce:
        import warnings

        _warned_index_reduce = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    shape = [1] * source.ndim
    shape[d] = -1
    spread = np.broadcast_to(np.asarray(index._data, dtype=np.int64).reshape(shape), source.shape).copy()
    attrs = {"dim": d, "index": spread, "reduce": reduce, "include_self": bool(include_self)}
    if inplace:
        attrs["original"] = _original(input, source, reduce)
        return _inplace(IndexReduce, input, (source,), attrs)
    return apply_op(IndexReduce, (input, source), attrs)


@export()
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(input, dim, index, source, reduce, include_self, inplace=False)


@export(function=False)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(self, dim, index, source, reduce, include_self, inplace=True)


# ---------------------------------------------------------------- masked_scatter

class MaskedScatter(Op):
    name = "MaskedScatterBackward0"

    def forward(x, source, mask):
        out = x.copy()
        n = int(mask.sum())
        out[mask] = source.reshape(-1)[:n]
        return out

    def save(ctx, x, source, out, mask):
        ctx._attrs = {"mask": _make(mask), "source_shape": source.shape}

    def backward(ctx, g):
        """``masked_scatter_backward``: the masked values in order, zeros after them."""
        F = _F()
        a = ctx._attrs
        gx = g.masked_fill(a["mask"], 0) if ctx.needs_input_grad[0] else None
        gsrc = None
        if ctx.needs_input_grad[1]:
            picked = g.masked_select(a["mask"])
            size = int(np.prod(a["source_shape"]))
            if size > picked.numel():
                picked = F.cat([picked, F.zeros(size - picked.numel(), dtype=g.dtype)])
            gsrc = picked.reshape(a["source_shape"])
        return gx, gsrc

    def jvp(x, source, out, dx, dsource, mask):
        return apply_op(MaskedScatter, (dx, dsource), {"mask": mask})


def _masked_scatter(input, mask, source, inplace):
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_scatter_: expected BoolTensor for mask")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got "
                           f"{input.dtype.short_name} and {source.dtype.short_name}")
    m = np.broadcast_to(mask._data, input.shape) if inplace else mask._data
    if not inplace:
        shape = np.broadcast_shapes(input.shape, mask.shape)
        input = input.expand(shape) if tuple(input.shape) != shape else input
        m = np.broadcast_to(mask._data, shape)
    if int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if inplace:
        return _inplace(MaskedScatter, input, (source,), {"mask": m})
    return apply_op(MaskedScatter, (input, source), {"mask": m})


@export()
def masked_scatter(input, mask, source):
    return _masked_scatter(input, mask, source, inplace=False)


@export(function=False)
def masked_scatter_(self, mask, source):
    return _masked_scatter(self, mask, source, inplace=True)


# ---------------------------------------------------------------- select/slice/diagonal_scatter

class SelectScatter(Op):
    name = "SelectScatterBackward0"
    saves_attrs = ("dim", "index")

    def forward(x, src, dim, index):
        out = x.copy()
        out[(slice(None),) * dim + (index,)] = src
        return out

    def backward(ctx, g):
        F = _F()
        a = ctx._attrs
        gsrc = g.select(a["dim"], a["index"])
        gx = g.select_scatter(F.zeros_like(gsrc), a["dim"], a["index"]) if ctx.needs_input_grad[0] else None
        return gx, (gsrc if ctx.needs_input_grad[1] else None)

    def jvp(x, src, out, dx, dsrc, dim, index):
        return apply_op(SelectScatter, (dx, dsrc), {"dim": dim, "index": index})


class SliceScatter(Op):
    name = "SliceScatterBackward0"
    saves_attrs = ("dim", "start", "end", "step")

    def forward(x, src, dim, start, end, step):
        out = x.copy()
        out[(slice(None),) * dim + (slice(start, end, step),)] = src
        return out

    def backward(ctx, g):
        F = _F()
        a = ctx._attrs
        gsrc = g[(slice(None),) * a["dim"] + (slice(a["start"], a["end"], a["step"]),)]
        gx = None
        if ctx.needs_input_grad[0]:
            gx = g.slice_scatter(F.zeros_like(gsrc), a["dim"], a["start"], a["end"], a["step"])
        return gx, (gsrc if ctx.needs_input_grad[1] else None)

    def jvp(x, src, out, dx, dsrc, dim, start, end, step):
        return apply_op(SliceScatter, (dx, dsrc), {"dim": dim, "start": start, "end": end, "step": step})


class DiagonalScatter(Op):
    name = "DiagonalScatterBackward0"
    saves_attrs = ("offset", "dim1", "dim2")

    def forward(x, src, offset, dim1, dim2):
        from .extra import _diagonal_array

        out = x.copy()
        _diagonal_array(out, offset, dim1, dim2)[...] = src
        return out

    def backward(ctx, g):
        F = _F()
        a = ctx._attrs
        gsrc = g.diagonal(a["offset"], a["dim1"], a["dim2"])
        gx = None
        if ctx.needs_input_grad[0]:
            gx = g.diagonal_scatter(F.zeros_like(gsrc), a["offset"], a["dim1"], a["dim2"])
        return gx, (gsrc if ctx.needs_input_grad[1] else None)

    def jvp(x, src, out, dx, dsrc, offset, dim1, dim2):
        return apply_op(DiagonalScatter, (dx, dsrc), {"offset": offset, "dim1": dim1, "dim2": dim2})


def _check_scatter_src(name, expected, src):
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(expected)}")


@export()
def select_scatter(input, src, dim, index):
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    _check_scatter_src("select_scatter", input.shape[:d] + input.shape[d + 1:], src)
    return apply_op(SelectScatter, (input, src), {"dim": d, "index": index % n}, out_dtype=input.dtype)


@export()
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = normalize_dim(dim, input.ndim)
    start, end, step = slice(start, end, step).indices(input.shape[d])
    expected = list(input.shape)
    expected[d] = len(range(start, end, step))
    _check_scatter_src("slice_scatter", expected, src)
    return apply_op(SliceScatter, (input, src), {"dim": d, "start": start, "end": end, "step": step},
                    out_dtype=input.dtype)


@export()
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    d1, d2 = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    _check_scatter_src("diagonal_scatter", input.diagonal(offset, d1, d2).shape, src)
    return apply_op(DiagonalScatter, (input, src), {"offset": offset, "dim1": d1, "dim2": d2},
                    out_dtype=input.dtype)


# ---------------------------------------------------------------- composites

@export()
def take_along_dim(input, indices, dim=None):
    """PyTorch's composite: ``gather`` on the flattened input, or along ``dim`` after
    broadcasting the other dims of ``input`` and ``indices`` together."""
    if not (indices.dtype.name == "int64"):
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be int64 but got "
                           f"{indices.dtype.short_name} instead.")
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    d = normalize_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
                           "dimensions for indices")
    in_shape, ix_shape = list(input.shape), list(indices.shape)
    in_shape[d] = ix_shape[d] = 1
    common = list(np.broadcast_shapes(tuple(in_shape), tuple(ix_shape)))
    a, b = list(common), list(common)
    a[d], b[d] = input.shape[d], indices.shape[d]
    if list(input.shape) != a:
        input = input.expand(a)
    if list(indices.shape) != b:
        indices = indices.expand(b)
    return input.gather(d, indices)


@export()
def argwhere(input):
    return input.nonzero()


@export(method=False)
def unravel_index(indices, shape):
    Tensor = _tensor.Tensor
    if not isinstance(indices, Tensor):
        indices = _make(np.asarray(indices))
    if indices.dtype.is_floating_point or indices.dtype.name == "bool":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    numel = int(np.prod(shape))
    flat = np.asarray(indices._data, dtype=np.int64)
    if ((flat < -numel) | (flat >= numel)).any():
        raise ValueError(f"'indices' must be in range [{-numel}, {numel - 1}]")
    coords = np.unravel_index(flat % max(numel, 1), shape) if shape else ()
    return tuple(_make(np.asarray(c, dtype=np.int64)) for c in coords)
