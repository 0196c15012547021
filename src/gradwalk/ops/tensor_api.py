"""Tensor methods everyday scripts reach for that are not ops of their own: ``x.new_zeros(...)``
and friends (a new tensor with ``x``'s dtype), the in-place views ``squeeze_``/``unsqueeze_``,
``apply_``/``map_`` (a Python function per element, CPU only in PyTorch too), and small queries."""
import warnings

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from ..grad_mode import _state as _grad_state
from . import factories, shape as S
from ._util import FUNCTIONS, export, normalize_dim
from .core import apply_op


# ---- new_* : a fresh tensor with self's dtype (and device) unless told otherwise --------------

@export(function=False)
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return factories.zeros(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@export(function=False)
def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return factories.ones(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@export(function=False)
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return factories.empty(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@export(function=False)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    return factories.full(size, fill_value, dtype=dtype or self.dtype, device=device,
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
    return factories.tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


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


@export(function=False)
def put_(self, index, source, accumulate=False):
    """``x.put_(index, source)``: writes ``source`` at ``index`` into ``x`` read as 1-D in row-major
    order (negative indices count from the end). Built from indexing on the flattened tensor, so
    the graph holds IndexPutBackward0 / CopySlices rather than PyTorch's PutBackward0."""
    if accumulate:
        raise NotImplementedError("gradwalk: put_(..., accumulate=True) is not supported")
    n = self.numel()
    idx = index._data.reshape(-1).astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)][0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    where = _tensor.Tensor._make(np.where(idx < 0, idx + n, idx))
    if self.is_contiguous():
        S.setitem(self.view(-1), where, source.reshape(-1))
    else:
        flat = self.reshape(-1).clone()
        S.setitem(flat, where, source.reshape(-1))
        self.copy_(flat.view(self.shape))
    return self


@export(function=False)
def put(self, index, source, accumulate=False):
    return put_(self.clone(), index, source, accumulate)


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
