"""dtypes and ``Size``, printed the way PyTorch prints them."""
import numpy as np


class dtype:
    """A tensor element type: a name PyTorch users know, backed by a NumPy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize", "legacy_name", "short_name")

    def __init__(self, name, np_dtype, is_floating_point, legacy_name, short_name):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize
        self.legacy_name = legacy_name  # "torch.FloatTensor", used in version-counter errors
        self.short_name = short_name  # "Float", used in .grad assignment errors

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


float32 = dtype("float32", np.float32, True, "torch.FloatTensor", "Float")
float64 = dtype("float64", np.float64, True, "torch.DoubleTensor", "Double")
float16 = dtype("float16", np.float16, True, "torch.HalfTensor", "Half")
int64 = dtype("int64", np.int64, False, "torch.LongTensor", "Long")
int32 = dtype("int32", np.int32, False, "torch.IntTensor", "Int")
int16 = dtype("int16", np.int16, False, "torch.ShortTensor", "Short")
int8 = dtype("int8", np.int8, False, "torch.CharTensor", "Char")
uint8 = dtype("uint8", np.uint8, False, "torch.ByteTensor", "Byte")
bool_ = dtype("bool", np.bool_, False, "torch.BoolTensor", "Bool")

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

# the dtype Python floats and the float factories get: process-wide, as in PyTorch (not per thread)
_default_float = [float32]


def get_default_dtype():
    return _default_float[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


_BY_NUMPY = {d.np: d for d in (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)}


def from_numpy_dtype(np_dtype):
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"gradwalk has no dtype for NumPy's {np.dtype(np_dtype)}") from None


def to_numpy_dtype(d):
    if isinstance(d, dtype):
        return d.np
    if d is None:
        return None
    return np.dtype(d)


def as_dtype(d):
    """Accept a gradwalk dtype, a NumPy dtype, or Python's float/int/bool."""
    if d is None or isinstance(d, dtype):
        return d
    if d is __builtins__["float"] if isinstance(__builtins__, dict) else d is __import__("builtins").float:
        return float64
    return from_numpy_dtype(d)


# PyTorch's type promotion: a category (bool < integer < floating) decides first; within the
# winning category, dimensioned tensors outrank 0-dim tensors, which outrank Python numbers.
def category(d):
    if d is bool_:
        return 0
    return 2 if d.is_floating_point else 1


_PROMOTE_CACHE = {}


def promote(a, b):
    """The larger of two dtypes (same rules as torch.promote_types for our dtypes)."""
    if a is b:
        return a
    key = (a, b)
    r = _PROMOTE_CACHE.get(key)
    if r is None:
        r = from_numpy_dtype(np.promote_types(a.np, b.np))
        _PROMOTE_CACHE[key] = r
    return r


class Size(tuple):
    """``torch.Size``: a tuple that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
