"""Small helpers shared by the op modules: wrapping Python numbers, broadcasting errors,
dims, and exposing an op as both ``gradwalk.f(x)`` and ``x.f()``."""
import numbers

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .._dtype import float32, float64, int64, bool_
from ..grad_mode import _state as _grad_state
from .core import observers as _observers

FUNCTIONS = {}  # name -> function, exported as gradwalk.<name>
METHODS = {}  # name -> function, installed as Tensor.<name>


def export(*names, method=True, function=True):
    """Expose an op as ``gradwalk.<name>`` and/or ``Tensor.<name>``."""

    def register(fn):
        for name in names or (fn.__name__,):
            if function:
                FUNCTIONS[name] = fn
            if method:
                METHODS[name] = fn
        return fn

    return register


_warned_deprecated_overload = False  # PyTorch's argument parser warns about these once per process


def deprecated_alpha_overload(name, alpha, rest):
    """``x.add(2, y)`` (pre-1.5 code: ``p.data.add_(-lr, p.grad.data)``): PyTorch's deprecated
    ``add(Number alpha, Tensor other)``, accepted with its warning. Returns ``(other, alpha)``."""
    global _warned_deprecated_overload
    if len(rest) != 1 or not isinstance(alpha, numbers.Number) or not isinstance(rest[0], _tensor.Tensor):
        raise TypeError(f"{name}() takes 2 positional arguments but {2 + len(rest)} were given")
    if not _warned_deprecated_overload:
        import warnings

        _warned_deprecated_overload = True
        warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor other)\n"
                      f"Consider using one of the following signatures instead:\n\t{name}(Tensor other, *, "
                      "Number alpha = 1)", UserWarning, stacklevel=3)
    return rest[0], alpha


def max_keepdims(x, dim):
    """``x.max(axis=dim, keepdims=True)``, the shift of softmax-like ops. NumPy reduces a short
    last axis one row at a time (a 1024x10 batch of logits: 77 us); for a 2-D array with at most
    32 columns and at least 16 rows, the maximum over the first axis of the transposed copy is the
    same values at a fraction of the cost (6 us)."""
    if x.ndim == 2 and dim in (1, -1) and x.shape[1] <= 32 and x.shape[0] >= 16:
        return x.T.copy().max(axis=0)[:, None]
    return x.max(axis=dim, keepdims=True)


def formulas_on_arrays():
    """True when a backward formula may compute straight on NumPy arrays.

    That is when nothing could tell the difference: grad mode is off (a plain ``backward()``, not
    ``create_graph=True``, so the formula's ops record no graph) and nobody watches ops (no
    profiler, anomaly mode or forward AD: ``observers.any``). The hot formulas (``addmm``,
    ``log_softmax``, ``nll_loss``, relu's ``threshold_backward``, ``mul``, ...) then skip the
    per-op wrapping of their inner ops and give the same arrays those ops would give.
    """
    return not _grad_state.grad_enabled and not _observers.any


_PYTHON_NUMBER_DTYPES = {float: np.float64, int: np.int64, bool: np.bool_}


def wrap_number(value):
    """A Python number as PyTorch wraps it: a 0-dim float64/int64/bool tensor, flagged so that it
    never promotes the dtype of the tensors it meets."""
    np_dtype = _PYTHON_NUMBER_DTYPES.get(type(value))  # the common case, without ABC checks
    if np_dtype is not None:
        data = np_dtype(value)  # a NumPy scalar, as 0-dim op results are held
    elif isinstance(value, bool):
        data = np.asarray(value, dtype=np.bool_)
    elif isinstance(value, numbers.Integral):
        data = np.asarray(value, dtype=np.int64)
    elif isinstance(value, numbers.Real):
        data = np.asarray(value, dtype=np.float64)
    else:
        raise TypeError(f"unsupported operand type: {type(value).__name__}; expected a Tensor or a number")
    t = _tensor.WrappedNumber._make(data)
    t._py = value.item() if isinstance(value, np.generic) else value
    return t


def as_tensor_arg(value):
    Tensor = _tensor.Tensor
    if isinstance(value, Tensor):
        return value
    if type(value) in _PYTHON_NUMBER_DTYPES or isinstance(value, (numbers.Number, np.generic)):
        return wrap_number(value)
    if isinstance(value, np.ndarray):
        return Tensor._make(value)
    raise TypeError(f"expected a Tensor or a number, got {type(value).__name__}")


def broadcast_shapes_or_raise(a_shape, b_shape):
    """PyTorch's message for shapes that do not broadcast."""
    a, b = list(a_shape), list(b_shape)
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                f"non-singleton dimension {i}")
    return tuple(max(x, y) for x, y in zip(a, b))


def normalize_dim(dim, ndim):
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % max(ndim, 1)


def normalize_dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    return tuple(sorted(normalize_dim(d, ndim) for d in dim)) if ndim else ()


def dtype_arg(dtype):
    from .. import _dtype

    return _dtype.as_dtype(dtype)


DEFAULT_FLOAT = float32
__all__ = ["export", "wrap_number", "as_tensor_arg", "float32", "float64", "int64", "bool_"]
