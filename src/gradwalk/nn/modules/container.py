"""``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList`` and ``ParameterDict``."""
from collections import OrderedDict

from .module import Module, _addindent


class Sequential(Module):
    """Runs its modules one after another: ``Sequential(Linear(2, 4), Tanh(), Linear(4, 1))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self))]
        self.add_module(key, module)

    def __delitem__(self, idx):
        _delete_and_renumber(self._modules, idx)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self


def _delete_and_renumber(modules, idx):
    """Delete ``modules[idx]`` (an int or a slice) and renumber the rest "0", "1", ... as PyTorch does."""
    keys = list(modules)
    for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
        del modules[key]
    renamed = OrderedDict((str(i), m) for i, m in enumerate(modules.values()))
    modules.clear()
    modules.update(renamed)


def _index(idx, size):
    idx = int(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx):
        _delete_and_renumber(self._modules, idx)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __repr__(self):
        # runs of identical children print once, as PyTorch does: "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self._modules.values()]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for end in range(1, len(reprs) + 1):
            if end == len(reprs) or reprs[end] != reprs[start]:
                body = _addindent(reprs[start], 2)
                if end - start == 1:
                    lines.append(f"({start}): {body}")
                else:
                    lines.append(f"({start}-{end - 1}): {end - start} x {body}")
                start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        return self._modules.pop(key)

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


def _parameter(value):
    """A tensor put in a ParameterList / ParameterDict becomes a Parameter, as in PyTorch."""
    from ..parameter import Parameter
    from ...tensor import Tensor

    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _parameter_line(key, p, dtype_name):
    from ..parameter import Parameter
    from ...tensor import Tensor

    if isinstance(p, Tensor):
        size = "x".join(str(n) for n in p.size())
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{dtype_name(p)} of size {size}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters, each registered under its index (``"0"``, ``"1"``, ...)."""

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self += values

    def _index(self, idx):
        return _index(idx, self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, str(self._index(idx)))

    def __setitem__(self, idx, param):
        setattr(self, str(self._index(idx)), _parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        new_idx = self._size
        self.__dict__["_size"] += 1
        setattr(self, str(new_idx), _parameter(value))
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_parameter_line(i, p, lambda t: str(t.dtype)) for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of parameters, each registered under its key, in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def copy(self):
        return ParameterDict(dict(self.items()))

    def update(self, parameters):
        if isinstance(parameters, (dict, ParameterDict)):
            items = parameters.items()
        else:
            items = []
            for j, p in enumerate(parameters):
                if not isinstance(p, (list, tuple)) or len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p) if hasattr(p, '__len__') else '?'}; 2 is required")
                items.append(p)
        for key, value in items:
            self[key] = value

    def extra_repr(self):
        return "\n".join(_parameter_line(k, p, lambda t: t.type()) for k, p in self.items())
