"""How an op runs: the one place where forward values, graph nodes and saved values meet.

Each op is a small class (see ``pointwise.py``, ``reduction.py``, ...), in the spirit of PyTorch's
``derivatives.yaml``: the name of its backward node, a NumPy ``forward``, what it ``save``s, its
``backward`` formula and its forward-mode ``jvp`` formula, side by side. ``apply_op`` runs it:

* without grad (grad mode off, or no input requires grad) it is just the NumPy forward;
* otherwise it creates the backward node, with a sequence number, ``next_functions`` (one edge
  per tensor input) and the saved values, and hands back an output whose ``grad_fn`` is the node.

Backward and jvp formulas are written with gradwalk's own tensor ops, so with
``create_graph=True`` they record a graph of their own and derivatives of any order work.
"""
import inspect

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .._dtype import Size, bool_, from_numpy_dtype, get_default_dtype
from ..autograd.node import (FREED, Node, SavedTensor, _next_sequence_nr, _sequence, as_saved_tensor,
                             new_version_counter as _new_version_counter, saved_tensors_hooks_state,
                             unpack_saved)
from ..autograd import gc_guard
from ..grad_mode import _state as _grad_state
from .._meta import MetaArray as _MetaArray
from ._overlap import INTERNAL_OVERLAP, PARTIAL_OVERLAP, partially_overlaps

_NO_ATTRS = {}
_GC_CHECK_MASK = gc_guard.STRIDE - 1
_NO_EDGE = (None, 0)
# needs_input_grad tuples, shared (a node records one only when some input requires grad)
_NEEDS = tuple(tuple((x, y) for y in (False, True)) for x in (False, True))  # [x][y] -> (x, y)
_NEED_ONE = (True,)
_NEEDS_MANY = {}  # needs_input_grad tuples of ops with more inputs, shared the same way


class _Observers:
    """Optional watchers of every op (profiler, anomaly mode, forward AD). All None or False
    when nobody is watching, so an op pays one attribute read for the whole feature set."""

    any = False
    profiler = None  # callable(op_name, inputs, node) -> context manager
    anomaly = False
    forward_ad = None  # callable(op, inputs, attrs, inplace, run) -> outputs, while a dual level is open
    # callable(op, inputs, attrs, out_dtype, inplace) -> outputs, or None when no input is a meta
    # tensor; installed while any meta tensor is alive (``_meta.py``)
    meta = None
    # callable(op, inputs, attrs, out_dtype, inplace) -> outputs, or None when no input is batched,
    # while a ``func.vmap`` runs (its batching rules: ``func/_batching.py``)
    vmap = None

    @classmethod
    def refresh(cls):
        cls.any = bool(cls.profiler or cls.anomaly or cls.forward_ad or cls.vmap or cls.meta)


observers = _Observers


class OpNode(Node):
    """A backward node made by an op. Its class is generated per op and named as PyTorch names it."""

    __slots__ = ("needs_input_grad", "_saved", "_attrs")
    op = None

    def apply(self, grads):
        for g in grads:
            if g is not None:
                return self.op.backward(self, *grads)
        return (None,) * (len(self._edges) // 2)  # no gradient defined: none to give (as PyTorch)

    def save(self, /, **values):
        """Save tensors for backward: ``ctx.save(self=x, other=None)``.

        The keyword dict itself becomes the store; an input is kept as the tensor itself while
        its version is 0, else as ``(tensor, version)`` (``unpack_saved`` checks the version)."""
        if saved_tensors_hooks_state.stack:
            for name, value in values.items():
                if value is not None:
                    values[name] = SavedTensor(value)
        else:
            for name, value in values.items():
                if value is not None:
                    counter = value._vc
                    if counter is not None and counter[0]:  # e.g. a parameter an optimizer stepped
                        values[name] = (value, int(counter[0]))
        if self._saved is None:
            self._saved = values
        else:
            self._saved.update(values)

    def save_result(self, name, output):
        """Save the op's own output: its array and version counter, never the tensor (a cycle)."""
        saved = self._saved
        if saved is None:
            saved = self._saved = {}
        if saved_tensors_hooks_state.stack:
            saved[name] = SavedTensor(output, None, True)  # (positional: keywords make the call slower)
            return
        counter = output._vc
        if counter is None:
            counter = output._vc = _new_version_counter()
        saved[name] = (output._data, counter, int(counter[0]), output._output_nr)

    def release_variables(self):
        saved = self._saved
        if saved:
            for name, value in saved.items():
                if value is not None:
                    if value.__class__ is SavedTensor:
                        value.release()
                    else:
                        saved[name] = FREED

    def _unpacked(self, name):
        value = self._saved[name]
        return None if value is None else unpack_saved(value, self)

    def saved_tensor(self, name):
        """The saved value ``name`` as a ``SavedTensor`` object (``_raw_saved_<name>``)."""
        saved = self._saved
        value = saved[name]
        if value is not None and value.__class__ is not SavedTensor:
            value = saved[name] = as_saved_tensor(value)
        return value

    def saved_items(self):
        """``(name, SavedTensor)`` for every value saved (for drawing and stepping)."""
        saved = self._saved
        return [(name, self.saved_tensor(name)) for name, v in saved.items() if v is not None] if saved else []

    def __getattr__(self, name):
        # ctx.self / ctx.result in formulas, and PyTorch's node._saved_self / node._raw_saved_self
        raw = False
        if name.startswith("_raw_saved_"):
            name, raw = name[11:], True
        elif name.startswith("_saved_"):
            name = name[7:]
        saved = object.__getattribute__(self, "_saved")
        if saved is not None and name in saved:
            value = saved[name]
            if value is None:
                return None
            if raw:
                return self.saved_tensor(name)
            return unpack_saved(value, self)
        attrs = object.__getattribute__(self, "_attrs")
        if attrs is not None and name in attrs:
            value = attrs[name]
            return tuple(value) if value.__class__ is Size else value  # PyTorch: a tuple of ints
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        names = set(super().__dir__()) - {"_saved"}
        hidden = getattr(self.op, "internal_attrs", ())  # what backward keeps but PyTorch does not show
        for d in (self._saved, self._attrs):
            if d:
                names.update("_saved_" + k for k in d if k not in hidden)
        if self._saved:
            names.update("_raw_saved_" + k for k in self._saved if k not in hidden)
        return sorted(names)


def _saved_property(name):
    def unpacked(self):  # _unpacked, spelled out: formulas read these once per backward
        value = self._saved[name]
        if value is None:
            return None
        if value.__class__ is _Tensor and value._vc is None:  # an input nobody wrote to since
            return value
        return unpack_saved(value, self)

    return property(unpacked, doc=f"the saved ``{name}`` (unpacked)")


# the saved values formulas read most often get a fast property instead of __getattr__
for _name in ("self", "other", "result", "mat2", "mat1", "exponent", "target", "tensor", "vec",
              "indices", "grad_output", "output"):
    setattr(OpNode, _name, _saved_property(_name))


class Op:
    """Base of every differentiable op. Subclasses set ``name`` and define:

    ``forward(*arrays, **attrs)``   NumPy arrays in, an array (or a tuple of them) out;
    ``save(ctx, *inputs, out, **attrs)``  what backward needs (only what it will use);
    ``backward(ctx, *grads)``        one gradient per tensor input (None where not needed);
    ``jvp(ctx, *tangents)``          the forward-mode derivative (None tangents are zero).
    """

    name = None
    is_view = False  # output shares the input's buffer (view, select, transpose, ...)
    saves_attrs = ()  # non-tensor arguments exposed as ``_saved_<name>`` on the node
    Node = None
    # elementwise ops: a 0-dim array operand is handed to ``forward`` as a NumPy scalar, whose
    # arithmetic is several times faster (a 0-dim result is kept as a scalar anyway)
    scalar_operands = False
    fills = False  # writes one value everywhere (fill_, zero_): allowed into an expand()ed tensor

    has_save = False
    save_out_at = None  # how many inputs ``save`` takes before ``out`` when ``out`` is positional

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.has_save = cls.save is not Op.save
        cls.save_out_at = _positional_index(cls.save, "out") if cls.has_save else None
        if cls.name:
            cls.Node = type(cls.name, (OpNode,), {"__slots__": (), "op": cls,
                                                  "_formula": staticmethod(cls.backward),
                                                  "__module__": "gradwalk.autograd.generated"})

    @staticmethod
    def save(ctx, *inputs, out, **attrs):
        pass

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError


def _positional_index(fn, name):
    """Index of parameter ``name`` after ``ctx`` when it may be passed by position, else None:
    ``apply_op`` then passes ``out`` by position (a keyword argument makes the call slower)."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    for i, param in enumerate(params):
        if param.name == name:
            return i if param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD else None
        if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return None
    return None


_METADATA = {}  # dtype -> {shape: ((shape, dtype),)}: immutable, so nodes share them


# NumPy scalar type -> metadata of a 0-dim result of that dtype
_SCALAR_METADATA = {t: (((), np.dtype(t)),) for t in (np.float16, np.float32, np.float64)}


def _metadata(data):
    """A single-output node's ``_input_metadata``: the shape and (NumPy) dtype of the gradient it
    will receive. Shared between nodes, so a big graph holds no copy per node for the cyclic GC
    to scan."""
    by_shape = _METADATA.get(data.dtype)
    if by_shape is None:
        by_shape = _METADATA[data.dtype] = {}
    shape = data.shape
    meta = by_shape.get(shape)
    if meta is None:
        meta = ((shape, data.dtype),)
        if len(by_shape) < 4096:
            by_shape[shape] = meta
    return meta


def _edge(t):
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (t._grad_accumulator(), 0)
    return _NO_EDGE


def _flat_edges(inputs):
    """A node's ``_edges``: next_functions flattened, one (node, input_nr) pair per input."""
    edges = []
    append = edges.append
    for t in inputs:
        fn = t.grad_fn
        if fn is not None:
            append(fn)
            append(t._output_nr)
        else:
            append(t._grad_accumulator() if t._requires_grad else None)
            append(0)
    return tuple(edges)


def _as_arrays(inputs):
    return [t._data if not t._is_wrapped_number else t._py for t in inputs]


_Tensor = None  # gradwalk.tensor.Tensor, bound by gradwalk.tensor once it is defined
_ndarray = np.ndarray
_asarray = np.asarray
# NumPy returns 0-dim results as scalars; we keep them so (see Tensor._array)
_SCALAR_TYPES = frozenset({np.float32, np.float64, np.float16, np.int64, np.int32, np.int16,
                           np.int8, np.uint8, np.bool_})


def apply_op(op, inputs, attrs=_NO_ATTRS, out_dtype=None, inplace=None, _watched=False):
    """Run ``op`` on tensor ``inputs``; record a backward node when grad is needed.

    ``out_dtype`` casts the forward result (type promotion is decided by the caller).
    ``inplace`` is the tensor to write the result into (``x.mul_(2)``); the node then becomes
    that tensor's new ``grad_fn``. This runs once per op, so its common paths are spelled out.
    """
    requires_grad = False
    if _grad_state.grad_enabled:
        for t in inputs:
            if t._requires_grad:
                requires_grad = True
                break
    if observers.any and not _watched:
        if observers.meta is not None:
            on_meta = observers.meta(op, inputs, attrs, out_dtype, inplace)
            if on_meta is not None:
                return on_meta
        if observers.vmap is not None:
            batched = observers.vmap(op, inputs, attrs, out_dtype, inplace)
            if batched is not None:
                return batched
        run = _apply
        if observers.forward_ad is not None:  # tangents flow whether or not a node is recorded
            run = _apply_with_tangents
        if observers.profiler is not None:
            with observers.profiler(op, inputs, requires_grad):
                return run(op, inputs, attrs, out_dtype, inplace, requires_grad)
        return run(op, inputs, attrs, out_dtype, inplace, requires_grad)
    Tensor = _Tensor
    if not requires_grad and not op.is_view:
        # the plain path (no graph): just the NumPy forward, wrapped (or, for an in-place op such
        # as an optimizer's update, written into the tensor)
        data = op.forward(*[t._data if not t._is_wrapped_number else t._py for t in inputs], **attrs)
        if type(data) is not _ndarray and type(data) not in _SCALAR_TYPES:
            if type(data) is tuple:
                if inplace is None:
                    return tuple(Tensor._make(_as_data(d, inputs)) for d in data)
                return _apply_multi(op, inputs, attrs, data, requires_grad)
            data = _as_data(data, inputs)
        if out_dtype is not None and data.dtype is not out_dtype.np and data.dtype != out_dtype.np:
            data = data.astype(out_dtype.np)
        if inplace is not None:
            return _write_inplace(inplace, data, None, op, inputs)
        out = Tensor.__new__(Tensor)
        out._data = data
        out._requires_grad = False
        out.grad_fn = None
        out._grad = None
        out._output_nr = 0
        out._vc = None
        if _grad_state.inference:
            out.__dict__["_is_inference"] = True
        return out
    if op.is_view:  # a view shares its input's buffer, so that buffer must be a real array
        for t in inputs:
            if type(t._data) is not _ndarray:
                t._array()
    if inplace is not None and requires_grad:
        _check_inplace(inplace)
        # Formulas that need the old value of the overwritten tensor get a snapshot of it.
        inputs = [_snapshot(t) if t is inplace else t for t in inputs]
    # the arguments spelled out for one or two inputs, and no ** for no attributes: this runs
    # once per recorded op
    if len(inputs) == 2:
        a, b = inputs
        x = a._data if not a._is_wrapped_number else a._py
        y = b._data if not b._is_wrapped_number else b._py
        if op.scalar_operands:
            if x.__class__ is _ndarray and not x.ndim:
                x = x[()]
            if y.__class__ is _ndarray and not y.ndim:
                y = y[()]
        data = op.forward(x, y, **attrs) if attrs else op.forward(x, y)
    elif len(inputs) == 1:
        x = inputs[0]._data if not inputs[0]._is_wrapped_number else inputs[0]._py
        if x.__class__ is _ndarray and not x.ndim and op.scalar_operands:
            x = x[()]
        data = op.forward(x, **attrs) if attrs else op.forward(x)
    else:
        data = op.forward(*[t._data if not t._is_wrapped_number else t._py for t in inputs], **attrs)
    meta = _SCALAR_METADATA.get(data.__class__)  # a float NumPy scalar: a 0-dim float result
    if meta is None:
        if data.__class__ is tuple:
            return _apply_multi(op, inputs, attrs, data, requires_grad)
        if data.__class__ is not _ndarray and data.__class__ not in _SCALAR_TYPES:
            data = _as_data(data, inputs)
    if out_dtype is not None and data.dtype is not out_dtype.np and data.dtype != out_dtype.np:
        data = data.astype(out_dtype.np)
        meta = None
    if not requires_grad or op.Node is None or (meta is None and data.dtype.kind != "f"):
        # no graph: integer/bool results never require grad, and neither does anything under no_grad
        if inplace is not None:
            return _write_inplace(inplace, data, None, op, inputs)
        return Tensor._make(data)
    Node = op.Node
    node = Node.__new__(Node)
    # the number is taken before the edges are read, as PyTorch's constructor does: reading a
    # stale view's grad_fn makes a new node (autograd/views.py) that must come after this one
    seq = _sequence.value
    _sequence.value = seq + 1
    node._sequence_nr_value = seq
    if not seq & _GC_CHECK_MASK:  # every 32768th node: large graphs pause full GC collections
        gc_guard.recording(node)
    # one edge per tensor input: its grad_fn, its leaf's AccumulateGrad, or none; spelled out for
    # one and two inputs (most ops) to make no temporary tuples
    if len(inputs) == 2:
        a, b = inputs
        fa = a.grad_fn
        if fa is not None:
            na = a._output_nr
        else:
            na = 0
            if a._requires_grad:
                fa = a._grad_accumulator()
        fb = b.grad_fn
        if fb is not None:
            nb = b._output_nr
        else:
            nb = 0
            if b._requires_grad:
                fb = b._grad_accumulator()
        node._edges = (fa, na, fb, nb)
        node.needs_input_grad = _NEEDS[a._requires_grad][b._requires_grad]
    elif len(inputs) == 1:
        a = inputs[0]
        fa = a.grad_fn
        if fa is not None:
            node._edges = (fa, a._output_nr)
        else:
            node._edges = (a._grad_accumulator(), 0)  # one input, so it requires grad
        node.needs_input_grad = _NEED_ONE
    else:
        node._edges = _flat_edges(inputs)
        needs = tuple([t._requires_grad for t in inputs])
        node.needs_input_grad = _NEEDS_MANY.setdefault(needs, needs) if len(_NEEDS_MANY) < 1024 else needs
    node._saved = None
    saves_attrs = op.saves_attrs
    if not saves_attrs:
        node._attrs = None
    elif len(saves_attrs) == len(attrs):
        # shared when no save() could add to it (``add``'s {"alpha": 1} is one dict for all)
        node._attrs = attrs.copy() if op.has_save else attrs
    else:
        node._attrs = {k: attrs[k] for k in saves_attrs}
    if inplace is not None:
        result = _write_inplace(inplace, data, node, op, inputs)
    else:
        result = Tensor.__new__(Tensor)
        result._data = data
        result._requires_grad = True
        result.grad_fn = node
        result._grad = None
        result._output_nr = 0
        result._vc = None
    node._input_metadata = meta if meta is not None else _metadata(data)
    if op.has_save:
        if op.save_out_at == len(inputs):
            if len(inputs) == 2:
                op.save(node, a, b, result, **attrs) if attrs else op.save(node, a, b, result)
            elif len(inputs) == 1:
                op.save(node, a, result, **attrs) if attrs else op.save(node, a, result)
            else:
                op.save(node, *inputs, result, **attrs)
        else:
            op.save(node, *inputs, out=result, **attrs)
    if inplace is not None:
        _finish_inplace(inplace, node)
    if observers.any:
        _observe(op, node, inputs, result, attrs)
    return result


def _as_data(data, inputs):
    """A forward's result that is not an ndarray or NumPy scalar, as the data of a tensor: a meta
    array stays one (``_meta.run_op`` checked its inputs' devices), anything else is converted."""
    if data.__class__ is _MetaArray:
        return data
    return _asarray(data)


def _apply(op, inputs, attrs, out_dtype, inplace, requires_grad):
    """``apply_op`` once an observer has been told (it does not tell it again)."""
    return apply_op(op, inputs, attrs, out_dtype, inplace, True)


def _apply_with_tangents(op, inputs, attrs, out_dtype, inplace, requires_grad):
    """A dual level is open: forward AD runs the op and gives its outputs their tangents."""
    return observers.forward_ad(
        op, inputs, attrs, inplace, lambda: apply_op(op, inputs, attrs, out_dtype, inplace, True))


def _apply_multi(op, inputs, attrs, data, requires_grad):
    Tensor = _Tensor
    if not requires_grad or op.Node is None:
        return tuple(Tensor._make(_as_data(d, inputs)) for d in data)
    node = op.Node.__new__(op.Node)
    node._sequence_nr_value = _next_sequence_nr()
    node._edges = _flat_edges(inputs)
    node._saved = None
    node._attrs = {k: attrs[k] for k in op.saves_attrs} if op.saves_attrs else None
    node.needs_input_grad = tuple([t._requires_grad for t in inputs])
    outputs = []
    meta = []
    for i, d in enumerate(data):
        d = _as_data(d, inputs)
        differentiable = d.dtype.kind == "f"
        o = Tensor._make(d, grad_fn=node if differentiable else None, output_nr=i,
                         requires_grad=differentiable)
        outputs.append(o)
        meta.append((d.shape, o.dtype))
    node._input_metadata = meta
    if op.has_save:
        op.save(node, *inputs, out=outputs, **attrs)
    result = tuple(outputs)
    if observers.any:
        _observe(op, node, inputs, result, attrs)
    return result


def _observe(op, node, inputs, result, attrs):
    if observers.anomaly:
        from ..autograd.anomaly_mode import _anomaly

        _anomaly.record(node, skip=5)  # leave out record, _observe, _apply, apply_op and the op


def forward_only(op, inputs, attrs=_NO_ATTRS):
    """Run an op's forward without touching the graph (for tangents and helpers)."""
    Tensor = _tensor.Tensor
    return Tensor._make(np.asarray(op.forward(*_as_arrays(inputs), **attrs)))


def _check_inplace(t):
    base = t._base
    if base is not None:
        from ..autograd import views  # (imported here: it subclasses Tensor, loaded after us)

        views.check_inplace_on_view(t)  # views made under no_grad or by split/unbind: refused
        if base.grad_fn is None and base._requires_grad:  # x[0].mul_(2)
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if t.grad_fn is None and t._requires_grad:
        if t._base is not None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _snapshot(t):
    """The value an in-place op overwrites, for formulas that need it (PyTorch's original_self)."""
    Tensor = _tensor.Tensor
    copy = Tensor._make(t._data.copy(), grad_fn=t.grad_fn, output_nr=t._output_nr,
                        requires_grad=t._requires_grad)
    if t.grad_fn is None and t._requires_grad:
        copy._requires_grad = False
    copy.__dict__["_original_self"] = True
    return copy


def _finish_inplace(t, node):
    """After an in-place op's node saved what its formula needs.

    PyTorch saves the overwritten value as a clone (``original_self = self.clone()``), a recorded
    op that takes the sequence number after the node's; and a view's base gets its CopySlices
    history only now, after that clone, as in PyTorch.
    """
    saved = node._saved
    if saved:
        for value in saved.values():
            if value.__class__ is SavedTensor:
                value = value._tensor
            elif value.__class__ is tuple:
                if len(value) != 2:  # a saved output
                    continue
                value = value[0]  # an input saved at a non-zero version
            if value is not None and "_original_self" in value.__dict__:
                _next_sequence_nr()
                break
    if t._base is not None:
        from ..autograd import views

        views.rebase_history(t, node)


def _write_inplace(t, data, node, op=None, inputs=()):
    target = t._data
    if target.__class__ is not _ndarray:
        target = t._array()
        if target.__class__ is _MetaArray:  # nothing to write: check the shape, count the version
            return _write_meta(t, target, data, node)
    if t._is_inference and not _grad_state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
            "clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")
    if data.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape {list(data.shape)}")
    writeable = target.flags.writeable
    expanded = 0 in target.strides and target.size > 1 and target.base is not None
    if expanded and not (op is not None and op.fills):  # (fill_ and zero_ may write an expand()ed tensor)
        raise RuntimeError(INTERNAL_OVERLAP)
    for source in inputs:  # y[1:].add_(y[:-1]): refused, as PyTorch (its value would depend on order)
        if source is not t and source._data.__class__ is _ndarray and partially_overlaps(target, source._data):
            raise RuntimeError(PARTIAL_OVERLAP)
    if not writeable or target.ndim == 0:
        if data.__class__ is _MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        target[...] = data
    else:
        np.copyto(target, data, casting="unsafe")
    counter = t._vc  # (t._version_counter, spelled out)
    if counter is None:
        counter = t._vc = _new_version_counter()
    counter[0] += 1
    if node is not None:
        _adopt_node(t, node)
    return t


def _adopt_node(t, node):
    """An in-place op's node becomes ``t``'s grad_fn (a view's base gets CopySlices(node) in
    _finish_inplace instead)."""
    if t._base is not None:
        return
    from ..autograd import views

    old = t.grad_fn
    t.grad_fn = node
    if t._retains_grad:
        views.move_retains_grad(t, old, node)
    t._output_nr = 0
    t._requires_grad = True


def _write_meta(t, target, data, node):
    if data.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape {list(data.shape)}")
    if 0 in target._logical_strides and target.size > 1:  # expand()ed
        raise RuntimeError(INTERNAL_OVERLAP)
    t._version_counter[0] += 1
    if node is not None:
        _adopt_node(t, node)
    return t


# ---- type promotion (PyTorch's rules) --------------------------------------------------------

def result_dtype(a, b):
    """dtype of a binary op's result. Categories (bool < int < float) decide first; within the
    winning category, dimensioned tensors outrank 0-dim tensors, which outrank Python numbers."""
    da, db = a.dtype, b.dtype
    if da is db:
        if a._is_wrapped_number and b._is_wrapped_number:
            return get_default_dtype() if da.is_floating_point else da
        return da
    # the common mixed case: a float tensor and a Python number (which never promotes it)
    if b._is_wrapped_number and not a._is_wrapped_number and da.is_floating_point:
        return da
    if a._is_wrapped_number and not b._is_wrapped_number and db.is_floating_point:
        return db
    return _promote_slow((a, b))


def _rank(t):
    if t._is_wrapped_number:
        return 0
    return 1 if t._data.ndim == 0 else 2


def _category(d):
    return 0 if d is bool_ else (2 if d.is_floating_point else 1)


def _promote_slow(tensors):
    top = max(_category(t.dtype) for t in tensors)
    contenders = [t for t in tensors if _category(t.dtype) == top]
    best_rank = max(_rank(t) for t in contenders)
    chosen = [t for t in contenders if _rank(t) == best_rank]
    if best_rank == 0:  # only Python numbers of this category: the default dtype
        return get_default_dtype() if top == 2 else chosen[0].dtype
    result = chosen[0].dtype
    for t in chosen[1:]:
        result = from_numpy_dtype(np.promote_types(result.np, t.dtype.np))
    return result


def result_dtype_many(tensors):
    return _promote_slow(tensors)
