"""Small queries and factories PyTorch has beside its ops: ``is_nonzero``, ``is_same_size``,
``is_signed``, ``result_type``, ``can_cast``, ``empty_strided``, ``scalar_tensor``,
``asarray``, the ``nbytes``/``itemsize`` properties, and the function forms of ``fill_``,
``zero_`` and ``detach_``."""
import numbers

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .._dtype import as_dtype, get_default_dtype
from ._util import as_tensor_arg, export
from .core import result_dtype_many


@export(method=False)
def is_inference(input):
    return input.is_inference()


@export()
def is_nonzero(input):
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@export()
def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


@export()
def is_signed(input):
    return input._data.dtype.kind in "ifc"


@export(method=False)
def is_complex(input):
    return input.is_complex()


@export(function=False)
def ndimension(self):
    return self.ndim


@export(method=False)
def fill_(input, value):
    return input.fill_(value)


@export(method=False)
def zero_(input):
    return input.zero_()


@export(method=False)
def detach_(input):
    return input.detach_()


@export(method=False)
def result_type(tensor1, tensor2):
    """The dtype an op on the two would compute in (a Python number never promotes a tensor's
    category beyond its own kind: ``result_type(int_tensor, 2.5)`` is the default float)."""
    return result_dtype_many((as_tensor_arg(tensor1), as_tensor_arg(tensor2)))


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


@export(method=False)
def can_cast(from_, to):
    """PyTorch's rule: no cast to a lower category (complex > float > integer > bool)."""
    return _KIND_ORDER[from_.np.kind] <= _KIND_ORDER[to.np.kind]


def _strided(size, stride, dtype):
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    d = as_dtype(dtype) if dtype is not None else get_default_dtype()
    need = (sum((n - 1) * s for n, s in zip(size, stride)) + 1) if all(size) else 0
    storage = np.zeros(max(need, 1), dtype=d.np)
    array = np.lib.stride_tricks.as_strided(storage, size, [s * storage.itemsize for s in stride])
    return _tensor.Tensor._make(array)


@export(method=False)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    t = _strided(size, stride, dtype)
    t._requires_grad = bool(requires_grad)
    return t


@export(function=False)
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self.dtype, requires_grad=requires_grad)


@export(method=False)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    from .factories import full

    if not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' must be Number, not {type(s).__name__}")
    return full((), s, dtype=dtype or get_default_dtype(), requires_grad=requires_grad)


@export(method=False)
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """The tensor itself (or a NumPy array's memory) where no copy is needed, as PyTorch's."""
    from .factories import as_tensor, from_numpy, tensor

    Tensor = _tensor.Tensor
    if copy:
        out = tensor(obj.detach().numpy() if isinstance(obj, Tensor) else obj, dtype=dtype)
    elif isinstance(obj, np.ndarray) and (dtype is None or as_dtype(dtype).np == obj.dtype):
        out = from_numpy(obj)
    elif isinstance(obj, Tensor) or isinstance(obj, np.ndarray):
        out = as_tensor(obj, dtype=dtype)
    else:
        out = tensor(obj, dtype=dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _install_properties():
    Tensor = _tensor.Tensor
    Tensor.nbytes = property(lambda self: self.numel() * self.element_size(),
                             doc="The bytes of the tensor's elements (numel * itemsize).")
    Tensor.itemsize = property(lambda self: self.element_size(), doc="The bytes of one element.")


_install_properties()
