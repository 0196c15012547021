"""``nn.Module``: a tree of modules holding parameters and buffers, as PyTorch's.

Assigning a ``Parameter`` or a ``Module`` to an attribute registers it (``__setattr__``), so
``parameters()``, ``state_dict()``, ``train()``/``eval()`` and ``repr`` find it by walking the tree.
"""
from collections import OrderedDict, namedtuple

import numpy as np

from ...grad_mode import no_grad
from ...optim.optimizer import zero_grads
from ...tensor import Tensor
from ..parameter import Buffer, Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class RemovableHandle:
    def __init__(self, hooks, key):
        self._hooks, self.id = hooks, key

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Module:
    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self.__dict__.get("_is_full_backward_hook")
                is not None or self.__dict__.get("_backward_pre_hooks")):
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        d = self.__dict__
        kind, pre_hooks = d.get("_is_full_backward_hook"), d.get("_backward_pre_hooks")
        full = kind is True or bool(pre_hooks)
        if full:
            from ._backward_hooks import BackwardHook

            bw_hook = BackwardHook(self, list(self._backward_hooks.values()) if kind else [], list(pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if full:
            output = bw_hook.setup_output_hook(output)
        elif kind is False and self._backward_hooks:
            from ._backward_hooks import register_legacy_hooks

            register_legacy_hooks(self, args, output, list(self._backward_hooks.values()))
        return output

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` once the gradients with respect to the
        module's inputs are known (PyTorch's ``BackwardHookFunctionBackward`` nodes around the
        module's inputs and outputs record them); it may return new ``grad_input``."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = True
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` when the gradients with respect to the module's outputs
        arrive; it may return new ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """The deprecated hook: on the node that made the module's (first) output, called with
        that node's ``grad_input`` and ``grad_output``, as PyTorch's."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = False
        return self._add_hook(self._backward_hooks, hook)

    def register_forward_hook(self, hook):
        return self._add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        return self._add_hook(self._forward_pre_hooks, hook)

    @staticmethod
    def _add_hook(hooks, hook, prepend=False):
        from ...autograd.node import RemovableHandle as _TensorHookHandle

        key = next(_TensorHookHandle._ids)  # PyTorch numbers module, tensor and node hooks together, from 0
        hooks[key] = hook
        if prepend:
            hooks.move_to_end(key, last=False)
        return RemovableHandle(hooks, key)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        d = self.__dict__
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer):
            self.register_buffer(name, Tensor._make(value._data), persistent=value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        for store in ("_parameters", "_modules", "_buffers"):
            self.__dict__[store].pop(name, None)
        self.__dict__.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            values = d.get(store)
            if values is not None and name in values:
                return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[store]:
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._forget(name) if name in self.__dict__ else None
        self._parameters[name] = param

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        module = self
        for part in target.split(".") if target else ():
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = module._modules[part]
        return module

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return module._parameters[name]

    # ------------------------------------------------------------------ walking the tree
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            module.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    # ------------------------------------------------------------------ dtype
    def _apply_to_tensors(self, convert):
        for module in self.modules():
            for store in (module._parameters, module._buffers):
                for name, t in store.items():
                    if t is None:
                        continue
                    new = convert(t._data)
                    if new is not t._data:
                        t._data = new
                        if t._grad is not None:
                            t._grad._data = convert(t._grad._data)
        return self

    def to(self, *args, dtype=None, device=None, non_blocking=False, **kwargs):
        from ... import _dtype
        from ..._device import META, placement
        from ..._meta import NO_DATA, MetaArray, empty

        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif not isinstance(a, bool):  # a device (a trailing bool is non_blocking)
                device = a
        if device is not None:
            where = placement(device)
            tensors = [t for m in self.modules() for store in (m._parameters, m._buffers)
                       for t in store.values() if t is not None]
            if where is META:  # every parameter, buffer and gradient keeps its shape and loses its data
                self._apply_to_tensors(lambda a: a if a.__class__ is MetaArray else empty(a.shape, a.dtype))
            elif any(t._data.__class__ is MetaArray for t in tensors):
                raise NotImplementedError(
                    NO_DATA + " Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when "
                    "moving module from meta to a different device.")
        if dtype is None:
            return self  # a device: everything lives on the CPU
        target = _dtype.as_dtype(dtype).np
        return self._apply_to_tensors(lambda a: a.astype(target) if a.dtype.kind == "f" else a)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers of the same shapes on ``device``, their values not set (gradwalk:
        zeros), as after ``with torch.device("meta"): model = Net()``; then ``reset_parameters()``."""
        import numpy as np

        from ..._device import META, placement
        from ..._meta import empty

        where = placement(device)
        modules = self.modules() if recurse else [self]
        for module in modules:
            for store in (module._parameters, module._buffers):
                for t in store.values():
                    if t is not None:
                        a = t._data
                        t._data = empty(a.shape, a.dtype) if where is META else np.zeros(a.shape, a.dtype)
                        if t._grad is not None:  # the gradient is moved too (PyTorch: uninitialised; here zeros)
                            g = t._grad._data
                            t._grad._data = empty(g.shape, g.dtype) if where is META else np.zeros(g.shape, g.dtype)
        return self

    def float(self):
        from ... import _dtype

        return self.to(_dtype.float32)

    def double(self):
        from ... import _dtype

        return self.to(_dtype.float64)

    def cpu(self):
        return self

    def cuda(self, device=None):
        from ..._device import on_cpu

        on_cpu("cuda")

    def type(self, dst_type):
        return self.to(dst_type)

    # ------------------------------------------------------------------ state dicts
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if destination is None:
            destination = OrderedDict()
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip(".")):
            head = module_prefix + "." if module_prefix else ""
            for name, p in module._parameters.items():
                if p is not None:
                    destination[head + name] = p if keep_vars else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers_set:
                    destination[head + name] = b if keep_vars else b.detach()
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        expected = {}
        for module_prefix, module in self.named_modules():
            head = module_prefix + "." if module_prefix else ""
            for name, p in module._parameters.items():
                if p is not None:
                    expected[head + name] = (module, "_parameters", name, p)
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers_set:
                    expected[head + name] = (module, "_buffers", name, b)
        errors = []
        for key, (module, store, name, current) in expected.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                              f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(current.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                              f"checkpoint, the shape in current model is {current.shape}.")
                continue
            with no_grad():
                if assign:
                    new = Parameter(value, current.requires_grad) if store == "_parameters" else value
                    getattr(module, store)[name] = new
                else:
                    if current.is_meta and not value.is_meta:  # nothing is copied: PyTorch warns
                        import warnings

                        warnings.warn(
                            f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter "
                            "in the current model, which is a no-op. (Did you mean to pass `assign=True` to "
                            "assign items in the state dictionary to their corresponding key in the module "
                            "instead of copying them in place?)", UserWarning, stacklevel=2)
                    np.copyto(current._data, value._data, casting="unsafe")
                    current._version_counter[0] += 1
        missing = [k for k in expected if k not in state_dict]
        unexpected = [k for k in state_dict.keys() if k not in expected]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ repr
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]
        body = lines + children
        main = self._get_name() + "("
        if body:
            if len(lines) == 1 and not children:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(body) + "\n"
        return main + ")"

    def __dir__(self):
        return sorted(set(list(super().__dir__()) + list(self._parameters) + list(self._modules)
                          + list(self._buffers)))

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, state):
        self.__dict__.update(state)


def _type_name(value):
    if isinstance(value, Tensor):
        return value.type()  # 'torch.FloatTensor', as torch.typename
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__
