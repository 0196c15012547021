"""PyTorch's process-wide switches that scripts set in their first lines
(``torch.use_deterministic_algorithms(True)``, ``torch.set_float32_matmul_precision("high")``):
kept as PyTorch keeps them, with its checks and messages. gradwalk's CPU ops are deterministic and
its float32 products always full precision, so the switches change no result here, as they
change none on PyTorch's CPU build for these ops."""
import warnings

# torch.get_deterministic_debug_mode(): 0 default, 1 warn, 2 error
_state = {"debug_mode": 0, "matmul_precision": "highest", "warn_always": False}
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode, *, warn_only=False):
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state["debug_mode"] = (1 if warn_only else 2) if mode else 0


def are_deterministic_algorithms_enabled():
    return _state["debug_mode"] != 0


def is_deterministic_algorithms_warn_only_enabled():
    return _state["debug_mode"] == 1


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    _state["debug_mode"] = debug_mode


def get_deterministic_debug_mode():
    return _state["debug_mode"]


def set_float32_matmul_precision(precision):
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision():
    return _state["matmul_precision"]


def set_warn_always(b):
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _state["warn_always"]


def typename(obj):
    """``torch.typename``: a tensor's legacy type name (``torch.FloatTensor``), else the object's
    qualified name (PyTorch's own rules, with gradwalk's modules named as torch's)."""
    from .tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module == "gradwalk" or module.startswith("gradwalk."):
        module = "torch" + module[len("gradwalk"):]
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"
