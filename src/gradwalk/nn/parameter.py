"""``nn.Parameter``: a leaf tensor that a ``Module`` registers as one of its parameters."""
from ..tensor import Tensor


class Parameter(Tensor):
    """A tensor that requires grad and that ``Module.__setattr__`` records in ``_parameters``.

        >>> Parameter(gradwalk.tensor([1., 2.]))
        Parameter containing:
        tensor([1., 2.], requires_grad=True)
    """

    _is_param = True
    __module__ = "torch.nn.parameter"  # type(p) prints <class 'torch.nn.parameter.Parameter'>, as in PyTorch

    def __new__(cls, data=None, requires_grad=True):
        import numpy as np

        array = np.zeros(0, dtype=np.float32) if data is None else data._data
        param = cls._make(array)  # shares the data's memory, as PyTorch does
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        cls = None if type(self) is Parameter else type(self)  # (Parameter itself by the function's name)
        return (_rebuild_parameter, (cls, Tensor._make(self._data), self._requires_grad))


def _rebuild_parameter(cls, data, requires_grad):
    """How a pickled (or deep-copied) Parameter comes back: by this function's name, not the
    class's (whose ``__module__`` says torch.nn.parameter, as PyTorch prints it)."""
    return (cls or Parameter)(data, requires_grad)


class Buffer(Tensor):
    """``nn.Buffer``: marks a tensor to be registered as a buffer when assigned to a module."""

    def __new__(cls, data=None, *, persistent=True):
        import numpy as np

        buf = cls._make(np.zeros(0, dtype=np.float32) if data is None else data._data)
        buf.__dict__["persistent"] = persistent
        return buf

    def __init__(self, data=None, *, persistent=True):
        pass
