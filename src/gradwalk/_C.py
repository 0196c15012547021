"""``torch._C``: the few names of PyTorch's C++ extension that Python code reaches for.

``torch._C._functions.AccumulateGrad`` is the class of a leaf's gradient accumulator, which
PyTorch's own tests check with ``isinstance(x.grad_fn.next_functions[0][0], ...)``;
``DelayedError(msg, n)(*tensors)`` puts a node whose backward raises ``msg`` in front of
tensors, and ``UndefinedGrad()(*tensors)`` one that sends undefined (None) gradients back."""
import types as _types

from .autograd.function import _DelayedError
from .autograd.node import AccumulateGrad as _AccumulateGrad, Node as _Node


def _through(node, tensors):
    """Each tensor again (same data and version counter), its history now ``node``."""
    from .tensor import Tensor

    outputs = []
    for i, t in enumerate(tensors):
        out = Tensor._make(t._data, grad_fn=node, output_nr=i, requires_grad=True)
        out._version_counter = t._version_counter
        node._input_metadata.append((t._data.shape, t._data.dtype))
        outputs.append(out)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _edges(tensors):
    from .autograd.function import _edge

    return tuple(_edge(t) for t in tensors)


class DelayedError:
    def __init__(self, msg, num_inputs):
        self.msg, self.num_inputs = msg, num_inputs

    def __call__(self, *tensors):
        if not any(t.requires_grad for t in tensors):
            return tensors[0] if len(tensors) == 1 else tensors
        return _through(_DelayedError(self.msg, _edges(tensors)), tensors)


class _UndefinedGradBackward(_Node):
    __slots__ = ()

    def name(self):
        return "torch::autograd::UndefinedGradBackward"

    def apply(self, grads):
        return [None] * len(grads)


class UndefinedGrad:
    def __call__(self, *tensors):
        return _through(_UndefinedGradBackward(_edges(tensors)), tensors)


_functions = _types.SimpleNamespace(AccumulateGrad=_AccumulateGrad, DelayedError=DelayedError,
                                    UndefinedGrad=UndefinedGrad)


def _current_autograd_node():
    """The node the backward engine is running now (seen from a hook, a saved tensor's unpack
    hook or a custom Function's backward), else None: PyTorch's ``torch._C._current_autograd_node``."""
    from .autograd import engine

    return engine._current_node
