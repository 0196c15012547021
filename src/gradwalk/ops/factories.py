"""Tensor factories: ``tensor``, ``zeros``, ``randn``, ... and the random generator.

The random ones (``rand``, ``randn``, ``randint``, ...) are in ``random_ops.py``, on PyTorch's
generator (``gradwalk.random``).
"""
import numbers
import warnings

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .. import _dtype
from .._device import META, placement
from .._meta import MetaArray, empty as _meta_empty
from .._dtype import Size, as_dtype, get_default_dtype, int64
from ._util import export


# PyTorch's generator lives in gradwalk.random; the draws in ops/random_ops.py
from ..random import Generator, default_generator, initial_seed, manual_seed, seed  # noqa: E402,F401


def _make(data, dtype=None, requires_grad=False, where=None):
    """A new leaf holding ``data``; on the meta device (``where``), a meta array of its shape."""
    Tensor = _tensor.Tensor
    if where is META and data.__class__ is not MetaArray:
        data = _meta_empty(data.shape, data.dtype)
    t = Tensor._make(data if dtype is None else data.astype(as_dtype(dtype).np, copy=False))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        return tuple(int(s) for s in size[0])
    return tuple(int(s) for s in size)


def _infer_dtype(value):
    """PyTorch's inference: floats -> float32 (the default), ints -> int64, bools -> bool."""
    if isinstance(value, bool) or (isinstance(value, np.ndarray) and value.dtype == np.bool_):
        return _dtype.bool_
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return _dtype.from_numpy_dtype(value.dtype) if value.dtype != np.float64 else get_default_dtype()
        if value.dtype.kind in "iu":
            return int64
        if value.dtype.kind == "b":
            return _dtype.bool_
    if isinstance(value, numbers.Integral):
        return int64
    return get_default_dtype()


def _to_nested(data):
    Tensor = _tensor.Tensor
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_to_nested(d) for d in data]
    return data


@export(method=False)
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``tensor([1., 2.], requires_grad=True)``: a leaf holding a copy of ``data``."""
    where = placement(device)
    Tensor = _tensor.Tensor
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning, stacklevel=2)
        arr = data._data.copy()
        inferred = data.dtype
    else:
        try:
            arr = np.array(_to_nested(data))
        except ValueError as e:
            raise ValueError(f"expected sequence of equal-length lists: {e}") from None
        if arr.dtype == object:
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        if isinstance(data, (np.ndarray, np.generic)):  # np.float64(1.5) keeps its dtype too
            inferred = _dtype.from_numpy_dtype(data.dtype)
        elif arr.dtype.kind == "f":
            inferred = get_default_dtype()
        elif arr.dtype.kind in "iu":
            inferred = int64
        elif arr.dtype.kind == "b":
            inferred = _dtype.bool_
        else:
            raise TypeError(f"Could not infer dtype of {arr.dtype}")
    d = as_dtype(dtype) if dtype is not None else inferred
    if requires_grad and not d.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if arr.base is not None:  # never share memory with the caller's data
        arr = np.ascontiguousarray(arr, dtype=d.np).copy()
    t = Tensor._make(arr.astype(d.np, copy=False) if where is not META else _meta_empty(arr.shape, d.np))
    if requires_grad:
        t._requires_grad = True
    return t


@export(method=False)
def as_tensor(data, dtype=None, device=None):
    Tensor = _tensor.Tensor
    if isinstance(data, Tensor):
        if device is not None and placement(device) is not data.device:
            data = data.to(device)
        return data if dtype is None else data.to(dtype)
    return tensor(data, dtype=dtype, device=device)


@export(method=False)
def from_numpy(array):
    """Shares memory with ``array``, as PyTorch's does."""
    Tensor = _tensor.Tensor
    _dtype.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _filled(fill, size, dtype, requires_grad, default=None, device=None):
    d = as_dtype(dtype) if dtype is not None else (default or get_default_dtype())
    if placement(device) is META:  # a shape and a dtype: nothing to fill (any size)
        return _make(_meta_empty(_size(size), d.np), requires_grad=requires_grad)
    return _make(np.full(_size(size), fill, dtype=d.np), requires_grad=requires_grad)


@export(method=False)
def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(0, size, dtype, requires_grad, device=device)


@export(method=False)
def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(1, size, dtype, requires_grad, device=device)


@export(method=False)
def empty(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _filled(0, size, dtype, requires_grad, device=device)


@export(method=False)
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    return _filled(fill_value, (size,) if isinstance(size, int) else tuple(size), dtype, requires_grad,
                   device=device)


def _like(fill):
    def fn(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        d = as_dtype(dtype) if dtype is not None else input.dtype
        return _filled(fill, input._data.shape, d, requires_grad, device=device or input.device)

    return fn


zeros_like = export("zeros_like", method=False)(_like(0))
ones_like = export("ones_like", method=False)(_like(1))
empty_like = export("empty_like", method=False)(_like(0))


@export(method=False)
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    d = as_dtype(dtype) if dtype is not None else input.dtype
    return _filled(fill_value, input._data.shape, d, requires_grad, device=device or input.device)


@export(method=False)
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    where = placement(device)
    if end is None:
        start, end = 0, start
    values = (start, end, step)
    is_float = any(isinstance(v, float) for v in values)
    d = as_dtype(dtype) if dtype is not None else (get_default_dtype() if is_float else int64)
    return _make(np.arange(start, end, step).astype(d.np), requires_grad=requires_grad, where=where)


@export(method=False)
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    where = placement(device)
    d = as_dtype(dtype) if dtype is not None else get_default_dtype()
    return _make(_linspace_values(start, end, steps, d.np), requires_grad=requires_grad, where=where)


def _linspace_values(start, end, steps, np_dtype):
    """PyTorch's linspace_kernel: step = (end - start) / (steps - 1) in the result's dtype; the
    first half counts up from start, the second half down from end, each value one fused
    multiply-add (start + step * i) rounded once."""
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    f = np.dtype(np_dtype)
    if f.kind != "f" or f.itemsize not in (4, 8) or steps < 2:
        return np.linspace(start, end, steps).astype(f)
    s, e = f.type(start), f.type(end)
    step = f.type((e - s) / f.type(steps - 1))
    i = np.arange(steps)
    low = i < steps // 2
    k = np.where(low, i, steps - i - 1).astype(f)
    base = np.where(low, s, e)
    sign = np.where(low, 1.0, -1.0).astype(f)
    return _fused_multiply_add(sign * step, k, base).astype(f)


def _fused_multiply_add(a, b, c):
    """a * b + c rounded once (as the C++ compiler's FMA contraction), for float32 or float64."""
    if a.dtype == np.float32:  # the float64 product of two float32 is exact: one rounding left
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
    # float64: Dekker's exact product, then the sum and both errors added back
    split = 134217729.0  # 2**27 + 1
    def halves(v):
        t = split * v
        hi = t - (t - v)
        return hi, v - hi
    p = a * b
    a_hi, a_lo = halves(a)
    b_hi, b_lo = halves(b)
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = c + p
    bv = total - c
    sum_err = (c - (total - bv)) + (p - bv)
    return total + (sum_err + p_err)


@export(method=False)
def logspace(start, end, steps, base=10.0, *, dtype=None, requires_grad=False):
    d = as_dtype(dtype) if dtype is not None else get_default_dtype()
    return _make(np.logspace(start, end, steps, base=base).astype(d.np), requires_grad=requires_grad)


@export(method=False)
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    where = placement(device)
    d = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if where is META:
        return _make(_meta_empty((n, n if m is None else m), d.np), requires_grad=requires_grad)
    return _make(np.eye(n, m, dtype=d.np), requires_grad=requires_grad)


@export(method=False)
def is_tensor(obj):
    Tensor = _tensor.Tensor
    return isinstance(obj, Tensor)


@export(method=False)
def numel(input):
    return input.numel()


@export(method=False)
def is_floating_point(input):
    return input.dtype.is_floating_point


@export(method=False)
def broadcast_shapes(*shapes):
    return Size(np.broadcast_shapes(*shapes))


@export()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@export()
def equal(input, other):
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


@export()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _make(np.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


# ------------------------------------------------------------------------------------------------
# Window functions: ATen's TensorFactories.cpp formulas, op for op (so float32 gives its bits)

_C_TYPE_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                 "uint8": "unsigned char", "bool": "bool"}


def _window(name, window_length, periodic, dtype, requires_grad, formula):
    from ..grad_mode import no_grad

    dtype = get_default_dtype() if dtype is None else as_dtype(dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not dtype.is_floating_point:
        c_name = _C_TYPE_NAMES.get(str(dtype).replace("torch.", ""), str(dtype))
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={c_name}, device=cpu, "
                           "layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    with no_grad():
        if window_length <= 1:
            window = ones(window_length, dtype=dtype)
        else:
            length = window_length + 1 if periodic else window_length
            window = formula(arange(length, dtype=dtype), length)
            if periodic:
                window = window.narrow(0, 0, length - 1)
    return window.requires_grad_() if requires_grad else window


@export(method=False)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None,
                   device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda w, n: w.mul_(np.pi * 2.0 / (n - 1)).cos_().mul_(-beta).add_(alpha))


@export(method=False)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   lambda w, n: w.mul_(np.pi * 2.0 / (n - 1)).cos_().mul_(-0.5).add_(0.5))


def _bartlett(w, n):
    w.mul_(2.0 / (n - 1))
    first_half = ((n - 1) >> 1) + 1
    w.narrow(0, first_half, n - first_half).mul_(-1).add_(2)
    return w


@export(method=False)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, _bartlett)


def _blackman(w, n):
    w.mul_(np.pi / (n - 1))
    return w.mul(4).cos_().mul_(0.08) - w.mul(2).cos_().mul_(0.5) + 0.42


@export(method=False)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, _blackman)
