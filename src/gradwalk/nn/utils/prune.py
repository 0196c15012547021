"""``torch.nn.utils.prune``: zero out part of a parameter through a mask, as PyTorch does it.

Pruning ``conv.weight`` moves the parameter to ``conv.weight_orig``, stores the mask as the buffer
``conv.weight_mask`` and makes ``conv.weight`` a plain attribute, ``weight_orig * weight_mask``,
recomputed by a forward pre-hook (the pruning method itself) before every call. Gradients still
reach ``weight_orig``; the masked entries get zero. Pruning the same tensor again keeps the
history in a ``PruningContainer``: each new method acts on the entries still unpruned.

    >>> layer = gradwalk.nn.Linear(4, 2)
    >>> _ = l1_unstructured(layer, "weight", amount=3)
    >>> int((layer.weight == 0).sum())
    3
    >>> sorted(name for name, _ in layer.named_parameters())
    ['bias', 'weight_orig']

The masks are chosen as PyTorch chooses them (``topk`` of ``rand_like`` scores, of ``|t|``, of
each channel's Ln norm), so with the same seed the same entries are pruned.
"""
import numbers
from abc import ABC, abstractmethod

_MODULE = "torch.nn.utils.prune"  # as PyTorch names these classes (their objects' reprs)


class BasePruningMethod(ABC):
    """A way to choose a mask; subclasses set ``PRUNING_TYPE`` ("unstructured", "structured" or
    "global") and write ``compute_mask(t, default_mask)``."""

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t``, given the mask ``default_mask`` of earlier pruning."""

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, on top of earlier pruning."""
        method = _combined_with_earlier(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                 f"{module}, got {importance_scores.shape} vs {orig.shape}")
        first_time = not isinstance(method, PruningContainer)
        if first_time:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:  # put the parameter back as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with this method's mask applied."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                 f"{importance_scores.shape} vs {t.shape}")
        default_mask = default_mask if default_mask is not None else _ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``module.<name>`` becomes a parameter again, holding the
        masked values; ``_orig`` and ``_mask`` are gone."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _combined_with_earlier(cls, module, name, *args, **kwargs):
    """The new method, or the container of this tensor's earlier methods with it added last (the
    earlier method's hook is taken off the module: the returned one is registered instead)."""
    earlier = [(key, hook) for key, hook in module._forward_pre_hooks.items()
               if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(earlier) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                             f"{module}. Use a PruningContainer.")
    for key, _ in earlier:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not earlier:
        return method
    old = earlier[0][1]
    if not isinstance(old, PruningContainer):
        old = PruningContainer(old)
    old.add_pruning_method(method)
    return old


class PruningContainer(BasePruningMethod):
    """The pruning methods applied, in order, to one tensor (iterable, indexable)."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:  # the method pruned so far: the container takes over its tensor
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask, computed on the part of ``t`` the earlier mask keeps: the
        unpruned entries (unstructured), the unpruned channels along its dim (structured), or
        all of ``t`` (global)."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            kept = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the "
                                     "attribute `dim` defined.")
            dim = method.dim + t.ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor of size {t.shape}")
            kept = [slice(None)] * t.ndim
            kept[dim] = default_mask.sum(dim=[d for d in range(t.ndim) if d != dim]) != 0
            kept = tuple(kept)
        elif kind == "global":
            kept = (slice(None),) * t.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        mask[kept] = method.compute_mask(t[kept], default_mask=default_mask[kept]).to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of them) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n_prune = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if n_prune:
            from ...ops.functions import rand_like, topk

            mask.view(-1)[topk(rand_like(t).view(-1), k=n_prune).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n_prune = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if n_prune:
            from ...ops.functions import topk

            mask.view(-1)[topk(t.abs().view(-1), k=n_prune, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        from ...ops.functions import rand, zeros_like

        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        n_prune = _count_to_prune(self.amount, channels)
        if n_prune == 0:
            return default_mask
        scores = rand(channels)  # PyTorch's draw: the channels scoring above the k-th lowest stay
        keep = scores > scores.sort().values[n_prune - 1]
        mask = zeros_like(t)
        where = [slice(None)] * t.ndim
        where[self.dim] = keep
        mask[tuple(where)] = 1
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest Ln norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        from ...ops.functions import norm, topk, zeros_like

        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        n_prune = _count_to_prune(self.amount, channels)
        if n_prune == 0:
            return default_mask
        dim = self.dim % t.ndim
        norms = norm(t, p=self.n, dim=[d for d in range(t.ndim) if d != dim])
        keep = topk(norms, k=channels - n_prune, largest=True).indices
        mask = zeros_like(t)
        where = [slice(None)] * t.ndim
        where[self.dim] = keep
        mask[tuple(where)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError("mask has to be of the same shape as the tensor being pruned")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


for _cls in (BasePruningMethod, PruningContainer, Identity, RandomUnstructured, L1Unstructured,
             RandomStructured, LnStructured, CustomFromMask):
    _cls.__module__ = _MODULE


# ---------------------------------------------------------------- the functions scripts call

def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune ``amount`` of all the listed ``(module, name)`` tensors together, as one vector: the
    smallest across the model go, so each layer loses a different share."""
    from . import parameters_to_vector

    if not hasattr(parameters, "__iter__"):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", _ones_like(getattr(m, n))) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
                        f'method {pruning_method} of type {method.PRUNING_TYPE}')
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent (see ``BasePruningMethod.remove``)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or one of its submodules has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod) for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())


# ---------------------------------------------------------------- amounts and dims, checked as PyTorch does

def _ones_like(t):
    from ...ops.functions import ones_like

    return ones_like(t)


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count_to_prune(amount, size):
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return amount
    return round(amount * size)


def _check_structured(t, dim):
    if t.ndim <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor "
                         f"of shape {t.shape} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
