"""In-place ops (``x.add_(1)``, ``x *= 2``, ``x.zero_()``): they write into the tensor, bump its
version counter and, on a tensor in a graph, make a new node its ``grad_fn``."""
import warnings

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from ..autograd.node import new_version_counter
from ..grad_mode import _state as _grad_state
from ._util import as_tensor_arg, deprecated_alpha_overload, export
from ._overlap import check_no_partial_overlap, partially_overlaps
from .core import Op, apply_op, observers
from . import pointwise as P

_ndarray = np.ndarray


def _inplace(op, self, others=(), attrs=None):
    return apply_op(op, (self,) + tuple(as_tensor_arg(o) for o in others), attrs or {},
                    out_dtype=self.dtype, inplace=self)


@export(function=False)
def add_(self, other, *deprecated, alpha=1):
    # _inplace(P.Add, self, (other,), {"alpha": alpha}), spelled out: an optimizer's update runs it
    if deprecated:  # p.data.add_(-lr, p.grad.data): the old (Number alpha, Tensor other) order
        other, alpha = deprecated_alpha_overload("add_", other, deprecated)
    if other.__class__ is not _tensor.Tensor:
        other = as_tensor_arg(other)
    x, y = self._data, other._data
    if (alpha == 1 and x.__class__ is _ndarray and y.__class__ is _ndarray and x.dtype is y.dtype
            and x.shape == y.shape and x.dtype.kind == "f" and x.flags.writeable and x.flags.c_contiguous
            and not observers.any and not self._is_inference and not other._is_wrapped_number
            and not (_grad_state.grad_enabled and (self._requires_grad or other._requires_grad))
            and not partially_overlaps(x, y)):
        # nothing to record or watch, same dtype and shape (``p.data += -lr * p.grad``): what
        # apply_op does below (the sum, written into x, the version counted), without the
        # temporary array (NumPy buffers an ``other`` that overlaps x)
        np.add(x, y, out=x)
        counter = self._vc
        if counter is None:
            counter = self._vc = new_version_counter()
        counter[0] += 1
        return self
    return apply_op(P.Add, (self, other), {"alpha": alpha}, out_dtype=self.dtype, inplace=self)


@export(function=False)
def sub_(self, other, *deprecated, alpha=1):
    if deprecated:
        other, alpha = deprecated_alpha_overload("sub_", other, deprecated)
    return _inplace(P.Sub, self, (other,), {"alpha": alpha})


@export(function=False)
def mul_(self, other):
    return _inplace(P.Mul, self, (other,))


@export(function=False)
def div_(self, other):
    return _inplace(P.Div, self, (other,))


@export(function=False)
def pow_(self, exponent):
    return _inplace(P.PowScalar, self, (), {"exponent": exponent})


def _unary_inplace(name, op):
    def fn(self):
        return _inplace(op, self)

    fn.__name__ = name
    return export(name)(fn)  # torch.sin_(x) as well as x.sin_()


for _name, _op in (("exp_", P.Exp), ("log_", P.Log), ("sin_", P.Sin), ("cos_", P.Cos),
                   ("tanh_", P.Tanh), ("sigmoid_", P.Sigmoid), ("relu_", P.Relu),
                   ("sqrt_", P.Sqrt), ("abs_", P.Abs), ("neg_", P.Neg)):
    _unary_inplace(_name, _op)


@export("relu_", method=False)
def relu_(input):
    return _inplace(P.Relu, input)


@export()  # x.clamp_(0, 1) and torch.clamp_(x, 0, 1)
def clamp_(self, min=None, max=None):
    for bound in (min, max):  # x[1:].clamp_(min=x[:-1]): refused, as PyTorch
        if isinstance(bound, _tensor.Tensor):
            check_no_partial_overlap(self._data, (bound._data,))
    return _inplace(P.Clamp, self, (), {"min": min, "max": max})


clip_ = export("clip_")(clamp_)


class Zero(Op):
    name = "ZeroBackward0"
    fills = True

    def forward(x):
        return np.zeros_like(x)

    def backward(ctx, g):
        return g * 0.0,

    def jvp(x, out, dx):
        return dx * 0.0


class Fill(Op):
    """``x.fill_(2.0)`` (ATen's ``fill_.Scalar``)."""

    name = "FillBackward2"
    fills = True

    def forward(x, value):
        return np.full_like(x, value)

    def backward(ctx, g):
        return g * 0.0,

    def jvp(x, out, dx, value):
        return dx * 0.0


class FillTensor(Op):
    """``x.fill_(t)`` with a 0-dim tensor ``t`` (``fill_.Tensor``): ``t`` gets the summed gradient."""

    name = "FillBackward3"

    def forward(x, value):
        return np.full_like(x, value)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (g * 0.0 if need[0] else None, g.sum() if need[1] else None)

    def jvp(x, value, out, dx, dvalue):
        return dvalue.expand(out.shape)


class Copy(Op):
    """``self.copy_(src)``: self's old value gets no gradient; src gets it, summed to its shape."""

    name = "CopyBackwards"

    def forward(x, src):
        return np.broadcast_to(src, x.shape).astype(x.dtype)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (g * 0.0 if need[0] else None, g if need[1] else None)

    def jvp(x, src, out, dx, dsrc):
        return dsrc.expand(out.shape) if dsrc.shape != out.shape else dsrc


Copy.Node.name = lambda self: "torch::autograd::CopyBackwards"  # a C++ node in PyTorch


@export(function=False)
def zero_(self):
    return _inplace(Zero, self)


@export(function=False)
def fill_(self, value):
    Tensor = _tensor.Tensor
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions.")
        return _inplace(FillTensor, self, (value,))
    return _inplace(Fill, self, (), {"value": value})


@export(function=False)
def copy_(self, src, non_blocking=False):
    return apply_op(Copy, (self, as_tensor_arg(src)), out_dtype=self.dtype, inplace=self)


@export(function=False)
def masked_fill_(self, mask, value):
    from .shape import MaskedFill, masked_fill_mask

    data = self._data
    if data.__class__ is _ndarray and 0 in data.strides and data.size > 1:
        warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
                      "scalar", UserWarning, stacklevel=2)
    return _inplace(MaskedFill, self, (), {"mask": masked_fill_mask(mask, self), "value": value})
