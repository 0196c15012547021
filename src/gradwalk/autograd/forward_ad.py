"""Forward-mode AD (``torch.autograd.forward_ad``): dual numbers on tensors.

    >>> import gradwalk as torch
    >>> import gradwalk.autograd.forward_ad as fwAD
    >>> x = torch.tensor(0.5, dtype=torch.float64)
    >>> with fwAD.dual_level():
    ...     out = torch.tanh(fwAD.make_dual(x, torch.tensor(1.0, dtype=torch.float64)) ** 3)
    ...     fwAD.unpack_dual(out).tangent
    tensor(0.7302, dtype=torch.float64)

A dual tensor is a primal plus a *tangent* (how far it moves when the inputs move along the
seed direction). Every op carries the tangent forward with its ``jvp`` formula, which sits beside
its backward formula in ``gradwalk/ops/*.py``: ``op.jvp(*primals, out, *tangents, **attrs)``.
Nothing is stored for a backward pass: this is the seeds' "dual numbers" done on tensors.

Tangents live on the tensor, one per level: ``tensor.__dict__["_fw_grads"] = {level: tangent}``.
PyTorch lets a user open one level at a time; ``gradwalk.func`` nests levels internally (``jvp``
inside ``jacfwd``). While the tangent of level L is being computed, only the levels below L are
live, so a jvp formula's own ops carry the outer tangents (second order) but never recurse into L.
"""
import collections
import threading
import weakref

import numpy as np

from ..grad_mode import _state as _grad_state
from .node import SavedTensor

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


class _LevelState(threading.local):
    levels = ()  # the open levels, innermost last
    live_below = None  # while computing level L's tangent: only levels < L propagate
    members = None  # level -> weak references to the tensors that hold a tangent of it


_state = _LevelState()


def _current_level():
    return _state.levels[-1] if _state.levels else -1


def enter_dual_level():
    """Open a new forward AD level; returns its index (0: PyTorch allows no nesting)."""
    if _state.levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _enter_level()


def exit_dual_level(*, level=None):
    """Close ``level`` (the current one by default); every tangent of that level is dropped."""
    if level is None:
        level = _current_level()
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if not _state.levels or _state.levels[-1] != level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported.")
    _exit_level(level)


class dual_level:
    """``with dual_level():`` opens a level for the block and closes it after."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with dual_level():
                return func(*args, **kwargs)

        return wrapper


def _enter_level():
    """Open a level, nested or not (``gradwalk.func`` nests them)."""
    from ..ops.core import observers

    level = len(_state.levels)
    _state.levels = _state.levels + (level,)
    if _state.members is None:
        _state.members = {}
    _state.members[level] = []
    observers.forward_ad = _propagate
    observers.refresh()
    return level


def _exit_level(level):
    from ..ops.core import observers

    for ref in _state.members.pop(level, ()):
        t = ref()
        if t is not None and t._fw_grads:
            t._fw_grads.pop(level, None)  # in place: saved copies share this dict
    _state.levels = _state.levels[:-1]
    if not _state.levels:
        observers.forward_ad = None
        observers.refresh()


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` at ``level`` (the current one by default)."""
    if level is None:
        level = _current_level()
        if level < 0:
            raise RuntimeError(
                "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                "enter_dual_level() first.")
    if level not in _state.levels:
        raise RuntimeError("Invalid level given to _make_dual")
    if not tensor.is_floating_point():
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: torch.{tensor.dtype.name}")
    if not tangent.is_floating_point():
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: torch.{tangent.dtype.name}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
            f"forward gradient is of size {list(tangent.shape)}.")
    if tangent.dtype is not tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    dual = _without_propagation(level, lambda: tensor.view(tensor.shape))
    set_tangent(dual, level, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: a view of the value without its tangent, and the tangent (or None)."""
    if level is None:
        level = _current_level()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    primal = _without_propagation(level, lambda: _primal_view(tensor))
    return UnpackedDualTensor(primal, get_tangent(tensor, level))


def get_tangent(tensor, level):
    grads = tensor._fw_grads
    return grads.get(level) if grads else None


def set_tangent(tensor, level, tangent):
    grads = tensor._fw_grads
    if grads is None:
        grads = tensor.__dict__["_fw_grads"] = {}
    if level not in grads:
        _state.members[level].append(weakref.ref(tensor))
    grads[level] = tangent


def _primal_view(tensor):
    from ..ops.core import apply_op
    from ..tensor import Tensor

    if tensor._requires_grad and _grad_state.grad_enabled:
        out = apply_op(_FwPrimal, (tensor,))
    else:
        out = Tensor._make(tensor._data)
    out.__dict__["_base"] = tensor if tensor._base is None else tensor._base
    out._version_counter = tensor._version_counter
    return out


def _without_propagation(level, fn):
    """Run ``fn`` with the tangents of ``level`` and above invisible (a jvp formula's own ops)."""
    previous = _state.live_below
    _state.live_below = level if previous is None else min(previous, level)
    try:
        return fn()
    finally:
        _state.live_below = previous


# ---------------------------------------------------------------- propagation through ops

def _propagate(op, inputs, attrs, inplace, run):
    """Called by ``apply_op`` for every op while a level is open: run the op, then give its
    output the tangent(s) from ``op.jvp``, one per live level where an input has a tangent."""
    live = _live_levels(inputs)
    if not live:
        return run()
    if inplace is not None:  # the formula needs the value before it is overwritten
        old = _snapshot(inplace)
        primals = [old if t is inplace else t for t in inputs]
    else:
        primals = list(inputs)
    result = run()
    outputs = result if type(result) is tuple else (result,)
    if not any(o.is_floating_point() for o in outputs):
        return result
    for level in live:
        tangents = [get_tangent(t, level) for t in primals]
        new = _without_propagation(level, lambda: _jvp(op, primals, result, tangents, attrs))
        new = new if type(new) is tuple else (new,)
        for out, tangent in zip(outputs, new):
            if tangent is None or not out.is_floating_point():
                continue
            tangent = _fit(tangent, out)
            set_tangent(out, level, tangent)
            _share_with_saved_output(out)
    return result


def _live_levels(inputs):
    live = []
    cap = _state.live_below
    for t in inputs:
        grads = t._fw_grads
        if grads:
            for level in grads:
                if (cap is None or level < cap) and level not in live:
                    live.append(level)
    live.sort()
    return live


def _jvp(op, primals, result, tangents, attrs):
    jvp = getattr(op, "jvp", None)
    if jvp is None:
        name = op.name or op.__name__
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet.")
    tangents = [t if t is not None else _zeros_like(p) for t, p in zip(tangents, primals)]
    return jvp(*primals, result, *tangents, **attrs)


def _zeros_like(t):
    """A zero tangent; a wrapped Python number stays wrapped so it never promotes the dtype."""
    from ..tensor import Tensor

    zero = Tensor._make(np.zeros_like(t._data))
    if t._is_wrapped_number:
        zero.__dict__["_is_wrapped_number"] = True
        zero.__dict__["_py"] = type(t._py)(0)
    return zero


def _fit(tangent, out):
    """Tangents have the output's shape and dtype (a formula may return a broadcastable one)."""
    if tangent.shape != out.shape:
        tangent = tangent.expand(out.shape)
    if tangent.dtype is not out.dtype:
        tangent = tangent.to(out.dtype)
    return tangent


def _snapshot(t):
    from ..tensor import Tensor

    old = Tensor._make(t._data.copy())
    if t._fw_grads:
        old.__dict__["_fw_grads"] = dict(t._fw_grads)
    return old


def _share_with_saved_output(out):
    """An op that saved its own output (``tanh`` saves ``result``) keeps only the array; hand the
    saved value the output's tangents too, so backward formulas carry them (forward-over-reverse)."""
    node = out.grad_fn
    saved = getattr(node, "_saved", None) if node is not None else None
    if not isinstance(saved, dict):  # only op nodes keep saved values by name
        return
    for name, value in saved.items():
        if value.__class__ is tuple and value[0] is out._data:  # a saved output, in its cheap form
            value = node.saved_tensor(name)
        if (isinstance(value, SavedTensor) and value._unpack_hook is None
                and value._tensor is None and value._data is out._data):
            value._fw_grads = out._fw_grads


def _make_fw_primal_op():
    from ..ops.core import Op

    class _FwPrimal(Op):
        """The primal that ``unpack_dual`` hands back: an alias, named as PyTorch names it."""

        name = "Identity"

        def forward(x):
            return x.view()

        def backward(ctx, g):
            return g,

        def jvp(x, out, dx):
            return dx

    _FwPrimal.Node.name = lambda self: "torch::autograd::Identity"
    return _FwPrimal


_FwPrimal = _make_fw_primal_op()

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual"]
