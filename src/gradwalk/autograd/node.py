"""Backward graph nodes: ``Node``, ``AccumulateGrad``, ``GraphRoot``, and saved tensors.

A node is what ``tensor.grad_fn`` holds. It knows its ``next_functions`` (one edge per forward
input, ``(node, input_nr)`` or ``(None, 0)``), its sequence number (the engine's priority), the
values its formula needs (saved tensors, freed after it runs) and the shape/dtype of each
gradient it will receive (``_input_metadata``), which the engine uses to reduce broadcast
gradients.

The graph holds no reference cycles: a node keeps its inputs, never its own output (a saved
output keeps only the output's array and version counter), so reference counting frees a graph
the moment the last tensor pointing into it goes away.
"""
import itertools
import threading
from sys import getrefcount as _getrefcount

import numpy as np

from ..grad_mode import _state as _grad_state
from .anomaly_mode import _anomaly

UINT64_MAX = 2**64 - 1

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class _SequenceCounter(threading.local):
    value = 0


_sequence = _SequenceCounter()


def _next_sequence_nr():
    n = _sequence.value
    _sequence.value = n + 1
    return n


def peek_sequence_nr():
    return _sequence.value


class RemovableHandle:
    """Returned by every ``register_*hook``; ``.remove()`` takes the hook out again."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self.hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class _SavedTensorHooksState(threading.local):
    stack = ()


saved_tensors_hooks_state = _SavedTensorHooksState()


def new_version_counter():
    """A version counter: one int64 in a NumPy array, shared by views and ``detach()``. A NumPy
    array, not a list, because the cyclic GC does not track arrays: a big graph of saved outputs
    then holds nothing more for the collector to rescan."""
    return _zeros(1, _int64)


_zeros = np.zeros
_int64 = np.int64


class SavedTensor:
    """One value saved for backward (``torch._C._autograd.SavedTensor``).

    An input is kept as the tensor object itself (``_saved_self is x``). An output is kept as its
    array and version counter only: keeping the tensor would make a cycle output -> grad_fn ->
    node -> output. Unpacking checks the version counter, so an in-place edit of a saved value
    fails loudly instead of giving a wrong gradient.
    """

    __slots__ = ("_tensor", "_data", "_version_counter", "_saved_version", "_node", "_freed",
                 "_output_nr", "_packed", "_unpack_hook", "_fw_grads")

    def __init__(self, tensor, node=None, is_output=False):
        self._freed = False
        hooks = saved_tensors_hooks_state.stack
        if hooks and not tensor._is_wrapped_number:
            pack, unpack = hooks[-1]
            self._packed = pack(tensor)
            self._unpack_hook = unpack
            self._tensor = None
            return
        self._unpack_hook = None
        counter = tensor._vc  # Tensor._version_counter, without the property call
        if counter is None:
            counter = tensor._vc = _zeros(1, _int64)
        self._version_counter = counter
        self._saved_version = int(counter[0])
        if is_output:
            self._tensor = None
            self._data = tensor._data
            self._output_nr = tensor._output_nr
            self._node = node
            self._fw_grads = None  # forward AD hands the output's tangents over later
        else:
            self._tensor = tensor

    def register_hooks(self, pack_hook, unpack_hook):
        if self._unpack_hook is not None:  # (default hooks packed it, or a pair was registered)
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been "
                               "set. Hint: only one pair of hooks is allowed at a time.")
        tensor = self.unpack()
        self._packed = pack_hook(tensor)
        self._unpack_hook = unpack_hook
        self._tensor = self._data = None

    def release(self):
        self._freed = True
        self._tensor = self._data = self._packed = self._node = None

    def unpack(self, owner=None):
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._unpack_hook is not None:
            return self._unpack_hook(self._packed)
        if self._tensor is not None:
            tensor = self._tensor
            if tensor._version_counter[0] != self._saved_version:
                _raise_modified(tensor, tensor.grad_fn, tensor._output_nr, self._saved_version,
                                tensor._version_counter[0])
            return tensor
        Tensor = _tensor_class()
        node = owner if owner is not None else self._node
        if self._version_counter[0] != self._saved_version:
            shape_holder = Tensor._make(self._data)
            _raise_modified(shape_holder, node, self._output_nr, self._saved_version,
                            self._version_counter[0])
        # Re-wrap the output; with create_graph the backward formula may differentiate through it.
        out = Tensor._make(self._data, node, self._output_nr, node is not None)
        out._vc = self._version_counter
        if self._fw_grads:
            out.__dict__["_fw_grads"] = self._fw_grads
        return out


def _freed_marker():
    freed = SavedTensor.__new__(SavedTensor)
    freed._freed = True
    freed._unpack_hook = freed._tensor = freed._data = freed._packed = freed._node = None
    freed._fw_grads = None
    return freed


# What a node's saved value becomes once backward has run (unless retain_graph): unpacking it
# raises "Trying to backward through the graph a second time".
FREED = _freed_marker()


def unpack_saved(value, node):
    """Unpack one of an op node's saved values (never None here).

    An op node keeps its saved values in their cheapest form: an input saved at version 0 as the
    tensor itself, at another version as ``(tensor, version)``, an output as ``(array,
    version_counter, version, output_nr)`` (never the output tensor: that would make a cycle
    output -> node -> output), and under saved tensor hooks as a ``SavedTensor``. All of them
    check the version counter.
    """
    cls = value.__class__
    if cls is tuple and len(value) == 2:  # an input saved at a non-zero version
        tensor, version = value
        counter = tensor._vc
        if counter[0] != version:
            _raise_modified(tensor, tensor.grad_fn, tensor._output_nr, version, int(counter[0]))
        return tensor
    if cls is tuple:  # a saved output
        data, counter, version, output_nr = value
        if counter[0] != version:
            _raise_modified(_Tensor._make(data), node, output_nr, version, int(counter[0]))
        out = _Tensor.__new__(_Tensor)
        out._data = data
        out._requires_grad = True
        out.grad_fn = node
        out._grad = None
        out._output_nr = output_nr
        out._vc = counter
        return out
    if cls is SavedTensor:
        return value.unpack(node)
    counter = value._vc  # an input tensor, saved at version 0
    if counter is not None and counter[0]:
        _raise_modified(value, value.grad_fn, value._output_nr, 0, int(counter[0]))
    return value


def as_saved_tensor(value):
    """The ``SavedTensor`` object for a saved value kept in its cheap form (see ``unpack_saved``),
    for PyTorch's ``node._raw_saved_<name>`` API and the stepper."""
    if value is None or value.__class__ is SavedTensor:
        return value
    saved = SavedTensor.__new__(SavedTensor)
    saved._freed = False
    saved._unpack_hook = saved._packed = None
    version = 0
    if value.__class__ is tuple and len(value) == 2:
        value, version = value
    if value.__class__ is tuple:
        saved._tensor = None
        saved._data, saved._version_counter, saved._saved_version, saved._output_nr = value
        saved._node = None
        saved._fw_grads = None
    else:
        saved._tensor = value
        counter = value._vc
        if counter is None:
            counter = value._vc = _zeros(1, _int64)
        saved._version_counter = counter
        saved._saved_version = version
    return saved


_TENSOR = []
_Tensor = None  # gradwalk.tensor.Tensor, bound by gradwalk.tensor once it is defined


def _tensor_class():
    # gradwalk.tensor imports this module, so the class is looked up once, lazily
    if not _TENSOR:
        from ..tensor import Tensor

        _TENSOR.append(Tensor)
    return _TENSOR[0]


def _raise_modified(tensor, grad_fn, output_nr, expected, actual):
    from .anomaly_mode import is_anomaly_enabled

    where = ""
    if grad_fn is not None:
        where = f", which is output {output_nr} of {forward_op_name(grad_fn)},"
    hint = (
        "Hint: the backtrace further above shows the operation that failed to compute its "
        "gradient. The variable in question was changed in there or anywhere later. Good luck!"
        if is_anomaly_enabled()
        else "Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )
    shape = ", ".join(str(s) for s in tensor.shape)
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor.dtype.legacy_name} [{shape}]]{where} is at version {actual}; "
        f"expected version {expected} instead. {hint}"
    )


def forward_op_name(node):
    """``MulBackward0`` -> ``Mul``; ``PowBackward1`` -> ``Pow1``; PyTorch's ``forward_op_name``."""
    name = node.name()
    i = name.rfind("Backward")
    if i < 0:
        return name
    tail = name[i + len("Backward"):]
    if not tail.isdigit() and tail != "":
        return name
    return name[:i] + ("" if tail in ("", "0") else tail)


class Node:
    """Base of every backward node (``torch.autograd.graph.Node``)."""

    # Every node sets these three; the rarely used fields (hooks, metadata, anomaly traceback)
    # default to the class attributes below and live in the instance __dict__ only once set.
    # ``_edges`` is next_functions flattened, ``(node0, input_nr0, node1, input_nr1, ...)``: one
    # tuple per node instead of one per edge, fewer objects for the cyclic GC to rescan.
    __slots__ = ("_edges", "_sequence_nr_value", "_input_metadata", "__dict__", "__weakref__")
    _pre_hooks = None
    _post_hooks = None
    _tensor_pre_hooks = None
    _retains_grad_hooks = None
    _hooked = False  # set once any of the four above is: the engine's one check for "plain node"
    _formula = None  # an op node's backward formula, ``formula(node, *grads)``, for the engine
    _metadata = None
    _anomaly = None

    def __init__(self, next_functions=(), sequence_nr=None):
        self.next_functions = next_functions
        self._sequence_nr_value = _next_sequence_nr() if sequence_nr is None else sequence_nr
        self._input_metadata = []
        if _anomaly.enabled:  # (op nodes skip __init__: ops/core.py records theirs)
            _anomaly.record(self, skip=2)

    @property
    def next_functions(self):
        """One ``(node, input_nr)`` edge per forward input; ``(None, 0)`` where it needs no grad."""
        edges = self._edges
        return tuple([(edges[i], edges[i + 1]) for i in range(0, len(edges), 2)])

    @next_functions.setter
    def next_functions(self, pairs):
        self._edges = tuple([x for pair in pairs for x in pair])

    # --- PyTorch's Python API on nodes ---
    def name(self):
        return type(self).__name__

    def _sequence_nr(self):
        return self._sequence_nr_value

    def _set_sequence_nr(self, n):
        self._sequence_nr_value = n

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def requires_grad(self):
        return True

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
            self._hooked = True
        return _add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_pre_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
            self._hooked = True
        hooks = self._tensor_pre_hooks.setdefault(output_nr, {})
        return _add_hook(hooks, fn)

    def _register_hook_dict(self, tensor):
        pass

    def __call__(self, *grads):
        """Run the backward formula alone, without the engine's reduction (as PyTorch does).
        Like PyTorch's binding: one gradient comes back as a tensor, several as a tuple, and a
        call with another number of gradients than the node receives is a TypeError."""
        expected = len(self._input_metadata)
        if expected and len(grads) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
        out = tuple(self.apply(list(grads)))
        return out[0] if len(out) == 1 else out

    def apply(self, grads):
        raise NotImplementedError

    def release_variables(self):
        pass

    def num_outputs(self):
        return len(self._edges) // 2

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"  # class name, as PyTorch


class AccumulateGrad(Node):
    """The node at a leaf: adds the gradient it receives into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        # Node.__init__((), UINT64_MAX), spelled out: a leaf's node is made again in every
        # iteration of a training loop (it is held weakly, as in PyTorch)
        self._edges = ()
        self._sequence_nr_value = UINT64_MAX
        if _anomaly.enabled:
            _anomaly.record(self, skip=1)
        self.variable = variable
        data = variable._data
        grad_dtype = variable.__dict__.get("_grad_dtype", data.dtype)  # None: any dtype
        self._input_metadata = [(data.shape, grad_dtype if grad_dtype.__class__ is np.dtype
                                 else getattr(grad_dtype, "np", grad_dtype))]  # NumPy's

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads):
        grad = grads[0]
        steal = _getrefcount(grad) <= 3  # grads, this name and getrefcount's argument: no one else
        accumulate_into_grad(self.variable, grad, steal)
        return []


def accumulate_into_grad(variable, new_grad, steal=True):
    """``variable.grad += new_grad`` the way PyTorch's AccumulateGrad does it.

    ``steal``: the caller saw no reference to ``new_grad`` but its own (PyTorch's
    ``use_count() <= num_expected_refs``), so its buffer may become ``.grad`` without a copy. A
    gradient sent to two leaves (``x + y``) or kept by a hook is copied instead."""
    if new_grad is None:
        return
    grad = variable._grad
    if _grad_state.grad_enabled:  # create_graph: out-of-place, so the sum stays differentiable
        if grad is None:
            variable._grad = _copy_backwards(new_grad)
        else:
            variable._grad = grad + new_grad
    elif grad is None:
        data, param = new_grad._data, variable._data
        if (steal and data.__class__ is np.ndarray and data.flags.writeable and data.strides == param.strides
                and data.dtype == param.dtype):
            variable._grad = _Tensor._make(data)
        else:  # clone obeying the layout contract (the parameter's strides and dtype); a
            # broadcast (read-only, stride 0) gradient is never stolen
            copy = np.empty_like(param, dtype=data.dtype)  # the grad's dtype (grad_dtype: cast to it)
            copy[...] = data
            variable._grad = _Tensor._make(copy)
    elif grad.grad_fn is None and not grad.requires_grad:
        grad._data += new_grad._data  # in place: x.grad keeps its identity
        grad._version_counter[0] += 1
    else:
        variable._grad = grad + new_grad
    hooks = variable.__dict__.get("_post_accumulate_grad_hooks")
    if hooks:
        for hook in list(hooks.values()):
            if hook(variable) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _copy_backwards(grad):
    from ..ops.core import apply_op
    from ..ops.shape import CopyBackwards

    if not grad.requires_grad:
        return grad.detach()
    return apply_op(CopyBackwards, (grad,))


class GraphRoot(Node):
    """Root of a multi-output backward: hands each output its seed gradient."""

    __slots__ = ("outputs",)

    def __init__(self, edges, grads):
        super().__init__(tuple(edges))
        self.outputs = list(grads)

    def name(self):
        return "torch::autograd::GraphRoot"

    def apply(self, grads):
        return list(self.outputs)


class Error(Node):
    __slots__ = ("msg",)

    def __init__(self, msg, next_functions=()):
        super().__init__(next_functions, UINT64_MAX)
        self.msg = msg

    def name(self):
        return "torch::autograd::Error"

    def apply(self, grads):
        raise RuntimeError(self.msg)
