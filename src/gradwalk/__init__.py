"""gradwalk: PyTorch's autograd, rebuilt in readable Python on NumPy.

    >>> import gradwalk as torch
    >>> w = torch.tensor(0.5, requires_grad=True)
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> b = torch.tensor(-0.3, requires_grad=True)
    >>> y = torch.tanh(w * x + b)
    >>> y
    tensor(0.6044, grad_fn=<TanhBackward0>)
    >>> y.backward()
    >>> w.grad
    tensor(1.2695)

Layout: ``tensor.py`` (the Tensor), ``ops/`` (each op's forward, backward and jvp formulas),
``autograd/`` (nodes, the engine, backward/grad, forward mode, gradcheck, ...), ``nn/``,
``optim/``, ``utils/`` and ``lab/`` (the web page).
"""
import warnings as _warnings

# inf - inf is nan and 1e38 * 10 is inf in PyTorch, silently (IEEE). NumPy warns instead, at the
# line of ours that called the ufunc: ignore its floating-point warnings attributed to gradwalk's
# own modules (a user's NumPy code still warns). Wrapping every op in np.errstate would cost more
# than a third of a small op; a filter costs nothing until a warning is raised.
_warnings.filterwarnings("ignore", message=r"(invalid value|overflow|divide by zero|underflow) encountered",
                         category=RuntimeWarning, module=r"gradwalk(\.|$)")

from . import _dtype
from ._dtype import (Size, bool_ as bool, double, dtype, float, float16, float32,  # noqa: F401
                     float64, get_default_dtype, half, int, int8, int16, int32, int64, long,
                     set_default_dtype, short, uint8)
from ._device import device  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .tensor import Tensor  # noqa: F401
from . import _tensor_methods  # noqa: F401  (installs methods and operators on Tensor)
from .ops._util import FUNCTIONS as _FUNCTIONS
from .ops.factories import Generator, default_generator  # noqa: F401
from . import autograd  # noqa: F401
autograd.torch = __import__("sys").modules[__name__]  # torch.autograd imports torch: its attribute
from . import _C  # noqa: F401  (torch._C._functions.AccumulateGrad)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from ._settings import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,  # noqa: F401
                        get_float32_matmul_precision, is_deterministic_algorithms_warn_only_enabled,
                        is_warn_always_enabled, set_deterministic_debug_mode, set_float32_matmul_precision,
                        set_warn_always, typename, use_deterministic_algorithms)

from .ops.aliases import accepting_numpy_names as _numpy_names
globals().update({_name: _numpy_names(_name, _fn) for _name, _fn in _FUNCTIONS.items()})

__version__ = "0.1.0"

from .tensor import _legacy_tensor_types  # FloatTensor, LongTensor, ... (torch.LongTensor([1, 2]))
globals().update(_legacy_tensor_types())


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    from . import _tensor_str as ts

    if precision is not None:
        ts.PRECISION = precision
    if threshold is not None:
        ts.THRESHOLD = threshold
    if edgeitems is not None:
        ts.EDGEITEMS = edgeitems
    if linewidth is not None:
        ts.LINEWIDTH = linewidth


def set_default_device(device):  # noqa: F811  (PyTorch's parameter name)
    """The CPU (``"cpu"`` or None) or the meta device; any other device fails as a CPU-only
    PyTorch build fails when a tensor is first made there."""
    from ._device import set_default

    set_default(device)  # AssertionError: Torch not compiled with CUDA enabled, ...


def get_default_device():
    from ._device import default_device

    return default_device()


def promote_types(type1, type2):
    # PyTorch's categories first: a float beside any integer is that float (float32 + int64 ->
    # float32, where NumPy says float64); within a category, the larger
    if type1.is_floating_point != type2.is_floating_point:
        return type1 if type1.is_floating_point else type2
    if (type1 is _dtype.bool_) != (type2 is _dtype.bool_):
        return type2 if type1 is _dtype.bool_ else type1
    return _dtype.promote(type1, type2)


def get_num_threads():
    from . import _mkl  # (MKL's matrix products: their bits depend on the thread count)

    return _mkl.get_num_threads()


def set_num_threads(n):
    from . import _mkl

    _mkl.set_num_threads(n)


def _lazy(name):
    import importlib

    return importlib.import_module(f".{name}", __name__)


_LAZY_SUBMODULES = ("nn", "optim", "func", "utils", "profiler", "viz", "lab", "testing", "linalg",
                     "cuda", "xpu", "backends", "return_types", "accelerator", "amp", "functional")


def __getattr__(name):
    # heavier subpackages load on first use: gradwalk.nn, .optim, .func, .utils, .profiler, ...
    if name in _LAZY_SUBMODULES:
        try:
            module = _lazy(name)
        except ModuleNotFoundError as error:  # a name we list but cannot load: no such attribute
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'gradwalk' has no attribute '{name}'") from None
        globals()[name] = module
        return module
    if name in ("save", "load"):  # gradwalk.save / gradwalk.load: serialization.py
        return getattr(_lazy("serialization"), name)
    if name == "autocast":  # torch.autocast is torch.amp.autocast
        return _lazy("amp").autocast
    if name == "vmap":  # torch.vmap is torch.func.vmap
        return _lazy("func").vmap
    raise AttributeError(f"module 'gradwalk' has no attribute '{name}'")
