"""Tensor methods everyday scripts reach for that are not ops of their own: ``x.new_zeros(...)``
and friends (a new tensor with ``x``'s dtype), the in-place views ``squeeze_``/``unsqueeze_``,
``apply_``/``map_`` (a Python function per element, CPU only in PyTorch too), and small queries."""
import warnings

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from ..grad_mode import _state as _grad_state
from . import factories, shape as S
from ._util import FUNCTIONS, export, normalize_dim
from .core import Op, apply_op


# ---- new_* : a fresh tensor with self's dtype (and device) unless told otherwise --------------

@export(function=False)
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return factories.zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@export(function=False)
def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return factories.ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@export(function=False)
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return factories.empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


@export(function=False)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    return factories.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad)


@export(function=False)
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    if isinstance(data, _tensor.Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning, stacklevel=2)
        data = data._data.copy()
    return factories.tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


# ---- in-place views: the tensor itself takes the new shape and the view's grad_fn ------------

class UnsqueezeInplace(S.Unsqueeze):
    name = "UnsqueezeBackward1"


class SqueezeInplace(S.Squeeze):
    name = "SqueezeBackward3"


class SqueezeDimInplace(S.SqueezeDim):
    name = "SqueezeBackward4"


def _inplace_view(self, op, attrs):
    if self._requires_grad and self.grad_fn is None and _grad_state.grad_enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    out = apply_op(op, (self,), attrs)
    self._data = np.asarray(out._data)  # a NumPy view: the same buffer, the new shape
    if out.grad_fn is not None:
        self.grad_fn = out.grad_fn
        self._output_nr = 0
    self._version_counter[0] += 1
    return self


@export(function=False)
def unsqueeze_(self, dim):
    return _inplace_view(self, UnsqueezeInplace, {"dim": normalize_dim(dim, self.ndim + 1)})


@export(function=False)
def squeeze_(self, dim=None):
    if dim is None:
        return _inplace_view(self, SqueezeInplace, {"self_sym_sizes": self.shape})
    d = normalize_dim(dim, self.ndim) if self.ndim else 0
    return _inplace_view(self, SqueezeDimInplace, {"dim": d, "self_sym_sizes": self.shape})


# ---- a Python function per element -----------------------------------------------------------

def _refuse_grad(self, name):
    if self._requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


@export(function=False)
def apply_(self, callable):  # noqa: A002 - PyTorch's parameter name
    _refuse_grad(self, "apply_")
    data = self._array()
    data[...] = np.vectorize(callable, otypes=[data.dtype])(data)  # no version bump in PyTorch
    return self


@export(function=False)
def map_(self, tensor, callable):  # noqa: A002
    _refuse_grad(self, "map_")
    data = self._array()
    other = np.broadcast_to(tensor._data, data.shape)
    data[...] = np.vectorize(callable, otypes=[data.dtype])(data, other)
    return self


# ---- small queries ---------------------------------------------------------------------------

@export(function=False)
def storage_offset(self):
    """Elements between the start of the storage and this tensor's first element."""
    data = self._array()
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return start // data.itemsize


@export(function=False)
def is_complex(self):
    return self._data.dtype.kind == "c"


# ---- legacy methods PyTorch's own tests still call ------------------------------------------

@export(function=False)
def new(self, *args):
    """``x.new(2, 3)``, ``x.new([1, 2])``, ``x.new(x.size())``: the legacy constructor at
    ``x``'s dtype (as ``torch.Tensor(...)``, filled with zeros where PyTorch leaves memory as is)."""
    t = _tensor.Tensor.__new__(_tensor.Tensor)
    _tensor.Tensor.__init__(t, *args, dtype=self.dtype)
    return t


class Put(Op):
    """``x.put(index, source, accumulate)``: ``source`` written (or added) at ``index`` into ``x``
    read as 1-D in row-major order. PyTorch's formulas (derivatives.yaml): ``self``'s gradient is
    ``grad`` with the written places zeroed (``grad`` itself when accumulating), ``source``'s is
    ``grad.take(index)``."""

    name = "PutBackward0"
    internal_attrs = ("flat",)

    def forward(x, source, index, flat, accumulate):
        out = x.copy()
        view = out.reshape(-1)
        if accumulate:
            np.add.at(view, flat, source.reshape(-1))  # in order: repeats add up as PyTorch's do
        else:
            view[flat] = source.reshape(-1)
        return out

    def save(ctx, x, source, out, index, flat, accumulate):
        ctx.save(source=source, index=index)
        ctx._attrs = {"index": index, "flat": flat, "accumulate": accumulate}

    def backward(ctx, g):
        a = ctx._attrs
        source = ctx.source
        gx = gs = None
        if ctx.needs_input_grad[0]:
            gx = g if a["accumulate"] else apply_op(
                Put, (g, factories.zeros_like(source)), {**a, "accumulate": False})
        if ctx.needs_input_grad[1]:
            gs = apply_op(Take, (g,), {"index": a["index"], "flat": a["flat"]}).reshape(source.shape)
        return gx, gs

    def jvp(x, source, out, dx, dsource, index, flat, accumulate):  # linear in x and source
        return apply_op(Put, (dx, dsource), {"index": index, "flat": flat, "accumulate": accumulate})


class Take(Op):
    """``x.take(index)``: the elements of ``x`` read as 1-D; backward adds ``grad`` back at them."""

    name = "TakeBackward0"
    internal_attrs = ("flat",)

    def forward(x, index, flat):
        return x.reshape(-1)[flat].reshape(index.shape)

    def save(ctx, x, out, index, flat):
        ctx._attrs = {"index": index, "flat": flat, "self_shape": tuple(x.shape)}

    def backward(ctx, g):
        a = ctx._attrs
        zeros = _tensor.Tensor._make(np.zeros(a["self_shape"], dtype=g._data.dtype))
        return apply_op(Put, (zeros, g), {"index": a["index"], "flat": a["flat"], "accumulate": True}),

    def jvp(x, out, dx, index, flat):
        return apply_op(Take, (dx,), {"index": index, "flat": flat})


def _flat_index(self, index):
    """``index`` as positions in ``self`` read as 1-D (negative ones counted from the end),
    checked as PyTorch checks them."""
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype.short_name}")
    n = self.numel()
    idx = index._data.reshape(-1).astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)][0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return np.where(idx < 0, idx + n, idx)


@export(function=False)
def put_(self, index, source, accumulate=False):
    """``x.put_(index, source, accumulate=False)``: PyTorch's PutBackward0 node."""
    flat = _flat_index(self, index)
    if source.numel() != flat.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but "
                           f"got source.numel() = {source.numel()}, index.numel() = {flat.size}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {self.dtype.short_name} and source.dtype = {source.dtype.short_name}")
    return apply_op(Put, (self, source), {"index": index, "flat": flat, "accumulate": bool(accumulate)},
                    inplace=self)


@export()
def put(input, index, source, accumulate=False):
    flat = _flat_index(input, index)
    if source.numel() != flat.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but "
                           f"got source.numel() = {source.numel()}, index.numel() = {flat.size}")
    return apply_op(Put, (input, source), {"index": index, "flat": flat, "accumulate": bool(accumulate)})


@export()
def take(input, index):
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.short_name}")
    n = input.numel()
    idx = index._data.astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)].ravel()[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return apply_op(Take, (input,), {"index": index, "flat": np.where(idx < 0, idx + n, idx).ravel()})


def _index_put_parts(indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put_(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    return tuple(slice(None) if i is None else i for i in indices)  # None: that dim whole


@export(function=False)
def index_put_(self, indices, values, accumulate=False):
    """``x.index_put_(indices, values, accumulate)``: ``x[indices] = values`` (or ``+=`` with every
    repeated index counted, as ``accumulate=True`` does)."""
    S.setitem(self, _index_put_parts(indices), values, accumulate=bool(accumulate))
    return self


@export()
def index_put(input, indices, values, accumulate=False):
    """The out-of-place ``index_put``: one IndexPutBackward0 node on ``input`` and ``values``."""
    index = tuple(S._to_np_index(i) for i in _index_put_parts(indices))
    try:
        return apply_op(S.IndexPut, (input, values), {"index": index, "accumulate": bool(accumulate)})
    except (IndexError, ValueError):
        S._raise_index_error(input.shape, index, values.shape)
        raise


@export(function=False)
def resize_(self, *sizes, memory_format=None):
    """``x.resize_(2, 3)``: ``x`` takes the new shape in place, keeping its first elements in
    row-major order; new elements are zeros (PyTorch leaves that memory uninitialised)."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(n) for n in sizes)
    old = self._data.reshape(-1)
    n = int(np.prod(sizes, dtype=np.int64))
    if n == old.size:
        self._data = old.reshape(sizes).copy() if not self._data.flags.c_contiguous else old.reshape(sizes)
    else:
        data = np.zeros(n, dtype=old.dtype)
        data[:min(n, old.size)] = old[:n]
        self._data = data.reshape(sizes)
    return self


@export(function=False)
def resize(self, *sizes):
    """The deprecated out-of-place ``resize``: the same elements in a new shape (PyTorch's
    ``autograd._functions.Resize``, whose node is ResizeBackward)."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    from ..autograd._functions import Resize

    return Resize.apply(self, tuple(sizes))


def _adjoint(self):
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return S.transpose(self, 0, 1)


def install(Tensor):
    """Properties cannot go through METHODS: ``.H`` and ``.mH`` (real tensors: the transposes)."""
    Tensor.H = property(_adjoint)
    Tensor.mH = property(lambda self: S.transpose(self, -2, -1))


FUNCTIONS["detach"] = lambda input: input.detach()
