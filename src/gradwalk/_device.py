"""``torch.device``: where a tensor lives. gradwalk has the CPU and the ``meta`` device (shapes
without data: ``_meta.py``); scripts name devices all the time (``x.to(device)``,
``torch.zeros(3, device="cpu")``), so the object is here and an accelerator is refused with the
message a CPU-only PyTorch build gives. A device is also a context manager that makes it the
default for factories, as in PyTorch (``with torch.device("meta"): model = Net()``).

    >>> device("cpu"), device("cuda", 1)
    (device(type='cpu'), device(type='cuda', index=1))
"""
import threading

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
          "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's parameter name
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):  # device(0): the current accelerator
            raise RuntimeError("Cannot access accelerator device when none is available.")
        elif ":" in type:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}")
            type, _, text = type.partition(":")
            if not text.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{text}'")
            index = int(text)
        if type not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device "
                               f"string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # device("cpu") == "cpu" is False in PyTorch too
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        # the CPU or META itself (factories compare by identity); "cuda" fails here, as on a CPU-only PyTorch
        _defaults.stack = _default_stack() + [placement(self)]
        return self

    def __exit__(self, *exc):
        _defaults.stack = _default_stack()[:-1]


CPU = device("cpu")
META = device("meta")

class _Defaults(threading.local):
    """The default device of this thread (torch.set_default_device, ``with torch.device(...)``):
    PyTorch keeps it in a thread-local mode stack too. (A class attribute as the default: a
    missing attribute of a thread-local is a slow lookup, and factories read this every call.)"""

    stack = ()


_defaults = _Defaults()


def _default_stack():
    return list(_defaults.stack)


def default_device():
    stack = _defaults.stack
    return stack[-1] if stack else CPU


def set_default(where):
    """``torch.set_default_device``: the bottom of this thread's default-device stack."""
    where = CPU if where is None else placement(where)
    stack = _default_stack()
    _defaults.stack = [where] + (stack[1:] if stack else [])


def placement(where):
    """Where a factory's ``device=`` argument puts the tensor: ``CPU`` or ``META`` (None: the
    default device); CUDA fails as on a PyTorch built without it, any other accelerator too."""
    if where is None:
        stack = _defaults.stack
        return stack[-1] if stack else CPU
    if where is CPU or where == "cpu":
        return CPU
    if where is META or where == "meta":
        return META
    where = device(where)
    if where.type == "cpu":
        return CPU
    if where.type == "meta":
        return META
    if where.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(f"PyTorch is not linked with support for {where.type} devices")


def on_cpu(where, what=None):
    """Check a ``device=`` argument (None, a string, an int or a device) where only the CPU is
    supported: the CPU passes; ``meta`` is refused by name (``what`` says what cannot be made
    there); CUDA fails as on a PyTorch built without it, and so does any other accelerator."""
    if where is None and not _defaults.stack or where is CPU or where == "cpu":
        return CPU
    if placement(where) is META:
        raise NotImplementedError(f"gradwalk does not support {what or 'this'} on the meta device (tensors "
                                  "with a shape and no data); make it on the CPU instead")
    return CPU


def is_device_arg(value):
    return isinstance(value, device) or (isinstance(value, str) and value.partition(":")[0] in _TYPES)
