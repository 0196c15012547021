"""``torch.nn.utils.parametrize``: a module attribute computed from a hidden original.

``register_parametrization(layer, "weight", Symmetric())`` moves the parameter to
``layer.parametrizations.weight.original`` and makes ``layer.weight`` a property that runs the
parametrization on it at every access, as PyTorch does (by swapping in a subclass of the
module's class that holds the property).

    >>> layer = gradwalk.nn.Linear(3, 3)
    >>> class Symmetric(gradwalk.nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).transpose(0, 1)
    >>> _ = register_parametrization(layer, "weight", Symmetric())
    >>> bool((layer.weight == layer.weight.T).all())
    True
"""
import contextlib

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Compute each parametrized tensor once inside the block."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, run in order on ``original``."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with _no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        if new is not original:
            original.data = new.data if not isinstance(new, Parameter) else new.data
        self.original = original if isinstance(original, Parameter) else Parameter(original)
        if not unsafe:  # PyTorch's consistency check: forward(right_inverse(original)) once, now
            _check_same_kind(self(), original, None, None)

    def right_inverse(self, value):
        with _no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            self.original.copy_(value)

    def forward(self):
        x = self[0](self.original)
        for module in list(self)[1:]:
            x = module(x)
        return x


def _check_same_kind(result, tensor, name, result_name):
    from ...tensor import Tensor

    if not isinstance(result, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(result).__name__}.")
    for what in ("dtype", "shape"):
        before, after = getattr(tensor, what), getattr(result, what)
        if before != after:
            if name is None:  # the first parametrization of the tensor (PyTorch's two wordings)
                raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized {what}: {before}\n"
                                 f"parametrized {what}: {after}")
            raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless the "
                             f"`unsafe` flag is enabled.\n{name}.{what}: {before}\n{result_name}.{what}: {after}")


def _no_grad():
    from ...grad_mode import no_grad

    return no_grad()


def _parametrized_class(module):
    cls = module.__class__
    if getattr(cls, "_is_parametrized_class", False):
        return cls
    return type(f"Parametrized{cls.__name__}", (cls,), {"_is_parametrized_class": True})


def _add_property(cls, name):
    def getter(self):
        key = (id(self), name)
        if _cache_enabled and key in _cache:
            return _cache[key]
        value = self.parametrizations[name]()
        if _cache_enabled:
            _cache[key] = value
        return value

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(cls, name, property(getter, setter))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    if is_parametrized(module, tensor_name):
        if not unsafe:  # PyTorch checks the new one on the current value (which runs the others)
            y = getattr(module, tensor_name)
            _check_same_kind(parametrization(y), y, f"module.{tensor_name}", f"parametrization(module.{tensor_name})")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
        return module
    if tensor_name in module._parameters:
        original = module._parameters.pop(tensor_name)
    elif tensor_name in module._buffers:
        original = module._buffers.pop(tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
                         f"element with name '{tensor_name}'")
    if "parametrizations" not in module._modules:
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = ParametrizationList([parametrization], original, unsafe)
    cls = _parametrized_class(module)
    module.__class__ = cls
    _add_property(cls, tensor_name)
    return module


def is_parametrized(module, tensor_name=None):
    parametrizations = module._modules.get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return tensor_name is None or tensor_name in parametrizations._modules


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    original = plist.original
    if leave_parametrized:
        with _no_grad():
            value = getattr(module, tensor_name)
        original = Parameter(value.detach(), original.requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations._modules[tensor_name]
    module._parameters[tensor_name] = original
    if not module.parametrizations._modules:
        del module._modules["parametrizations"]
        module.__class__ = module.__class__.__bases__[0]
    return module


__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList"]
_ = Module
