"""``torch.device``: where a tensor lives. gradwalk has one place, the CPU, but scripts name
devices all the time (``x.to(device)``, ``torch.zeros(3, device="cpu")``), so the object is here
and an accelerator is refused with the message a CPU-only PyTorch build gives.

    >>> device("cpu"), device("cuda", 1)
    (device(type='cpu'), device(type='cuda', index=1))
"""
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


CPU = device("cpu")


def on_cpu(where):
    """Check a ``device=`` argument (None, a string, an int or a device): the CPU passes; CUDA
    fails as on a PyTorch built without it, and so does any other accelerator."""
    if where is None or where is CPU or where == "cpu":
        return CPU
    where = device(where)
    if where.type == "cpu":
        return CPU
    if where.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if where.type == "meta":  # PyTorch has it on every build; gradwalk tensors always hold their values
        raise NotImplementedError("gradwalk does not support the meta device (tensors with a shape and no data); "
                                  "make the tensor or module on the CPU instead")
    raise RuntimeError(f"PyTorch is not linked with support for {where.type} devices")


def is_device_arg(value):
    return isinstance(value, device) or (isinstance(value, str) and value.partition(":")[0] in _TYPES)
