"""``torch._C``: the few names of PyTorch's C++ extension that Python code reaches for.

``torch._C._functions.AccumulateGrad`` is the class of a leaf's gradient accumulator, which
PyTorch's own tests check with ``isinstance(x.grad_fn.next_functions[0][0], ...)``."""
import types as _types

from .autograd.node import AccumulateGrad as _AccumulateGrad

_functions = _types.SimpleNamespace(AccumulateGrad=_AccumulateGrad)
