"""In-place ops on views: PyTorch's ``CopySlices`` and ``AsStridedBackward0``.

A view (``h[1:]``, ``h.t()``, ``h.view(4)``, ...) shares its base's buffer and version counter.
Writing into a view changes the base too, so the base's history must change with it::

    h = x * 1            # h.grad_fn: MulBackward0
    v = h[1:]            # v.grad_fn: SliceBackward0, v._base is h
    v.mul_(3)            # h.grad_fn: CopySlices       next: (MulBackward0, None)
                         # v.grad_fn: AsStridedBackward0  next: (CopySlices,)

``rebase_history`` (PyTorch's ``rebase_history`` in VariableTypeUtils) does it: the op's node
(``MulBackward0`` here, "fn") is wrapped in a ``CopySlices`` node that becomes the *base's*
``grad_fn``. Its backward receives the gradient of the whole base, runs fn's backward on the
view's region of it, and writes fn's gradient for the old view values back into that region:
the rest of the base passes through unchanged.

The view's own ``grad_fn`` is regenerated lazily, as PyTorch's ``VariableHooks::grad_fn`` does:
whenever the shared version counter has moved since the view's ``grad_fn`` was set (the view,
its base or a sibling view was written in place), reading ``view.grad_fn`` makes a fresh
``AsStridedBackward0`` whose one edge is the base's current history. Views are therefore
instances of ``TensorView``, a ``Tensor`` whose ``grad_fn`` and ``_requires_grad`` are
properties; plain tensors keep their fast slots.

The region a view covers is read from memory: NumPy views share the base's buffer, so the view's
elements are found among the base's by their byte addresses (``_region``). This is what PyTorch's
``as_strided(size, stride, storage_offset)`` describes.

Views made under ``no_grad``, and the outputs of multi-output view ops (``split``, ``chunk``,
``unbind``), may not be modified in place while grad is recorded (``check_inplace_on_view``).
"""
import numpy as np

from ..grad_mode import _state as _grad_state
from ..tensor import Tensor
from .node import ERR_BACKWARD_TWICE, Node, forward_op_name

# CreationMeta: how a view was made (PyTorch's names). DEFAULT views are not recorded.
NO_GRAD_MODE = "NO_GRAD_MODE"
MULTI_OUTPUT_NODE = "MULTI_OUTPUT_NODE"

_grad_fn_slot = Tensor.grad_fn  # the plain slots that TensorView's properties wrap
_requires_grad_slot = Tensor._requires_grad


class TensorView(Tensor):
    """A tensor that is a view of another (``_base``): its ``grad_fn`` follows in-place writes
    to the shared buffer (see the module docstring)."""

    __slots__ = ()

    @property
    def grad_fn(self):
        _refresh(self)
        return _grad_fn_slot.__get__(self)

    @grad_fn.setter
    def grad_fn(self, fn):
        _grad_fn_slot.__set__(self, fn)
        if "_base" in self.__dict__:
            self.__dict__["_attr_version"] = self._version_counter[0]

    @property
    def _requires_grad(self):
        # as PyTorch's requires_grad(): a view of a tensor that requires grad does too, even one
        # made under no_grad (which has no grad_fn and gets no gradient: see _grad_accumulator).
        # It does not regenerate grad_fn: an op reads its inputs' grad_fn only once its own node
        # holds a sequence number.
        if _requires_grad_slot.__get__(self):
            return True
        base = self.__dict__.get("_base")
        return base is not None and base._requires_grad

    @_requires_grad.setter
    def _requires_grad(self, value):
        _requires_grad_slot.__set__(self, value)

    def _grad_accumulator(self):
        if not _requires_grad_slot.__get__(self):
            return None  # a view made under no_grad: its edge is (None, 0), as in PyTorch
        return Tensor._grad_accumulator(self)


def make_view(out, input, multi_output=False):
    """Mark ``out`` as a view of ``input``: same root base, same version counter.

    A view of a view has the root as its base (``x[1:][0]._base is x``), as in PyTorch.
    """
    base = input._base
    if base is None:
        base = input
    d = out.__dict__
    d["_base"] = base
    out._version_counter = input._version_counter
    d["_attr_version"] = input._version_counter[0]
    meta = input.__dict__.get("_creation_meta") if input is not base else None
    if meta is None:  # an inherited non-default meta wins (PyTorch's propagate_creation_meta)
        if not _grad_state.grad_enabled:
            meta = NO_GRAD_MODE
        elif multi_output:
            meta = MULTI_OUTPUT_NODE
    if meta is not None:
        d["_creation_meta"] = meta
    if type(out) is Tensor:
        out.__class__ = TensorView
    return out


def make_views(outputs, input):
    """``split`` / ``chunk`` / ``unbind``: every output is a view, none may be written in place."""
    for out in outputs:
        make_view(out, input, multi_output=True)
    return outputs


# ---------------------------------------------------------------- in-place writes on views

def check_inplace_on_view(view):
    """Before an in-place op records a node on ``view`` (PyTorch's ``handle_view_on_rebase``)."""
    meta = view.__dict__.get("_creation_meta")
    if meta is not None:
        raise RuntimeError(_rebase_error(view, meta, indirect=False))


def rebase_history(view, fn):
    """``fn`` (the in-place op's node) wrote into ``view``: the base gets ``CopySlices(fn)`` as
    its history, and the view an ``AsStridedBackward0`` over it."""
    base = view._base
    if type(view) is Tensor:  # a view made outside make_view (an alias) still follows its base
        view.__class__ = TensorView
    copy_slices = CopySlices(base, view, fn)
    old = base.grad_fn
    move_retains_grad(base, old, copy_slices)
    base.grad_fn = copy_slices
    base._output_nr = 0
    base._requires_grad = True
    view._output_nr = 0
    _refresh(view)  # PyTorch's `self.grad_fn()`: the view's AsStridedBackward0, right away


def move_retains_grad(t, old_fn, new_fn):
    """``retain_grad()`` follows the tensor to its new ``grad_fn``; tensor hooks stay behind."""
    if not t._retains_grad or old_fn is None or old_fn._retains_grad_hooks is None:
        return
    ref = old_fn._retains_grad_hooks.pop(t._output_nr, None)
    if ref is not None:
        if new_fn._retains_grad_hooks is None:
            new_fn._retains_grad_hooks = {}
            new_fn._hooked = True
        new_fn._retains_grad_hooks[0] = ref


def _refresh(view):
    """Regenerate the view's ``grad_fn`` if the shared buffer was written since it was set."""
    d = view.__dict__
    base = d.get("_base")
    if base is None:
        return
    version = view._version_counter[0]
    if d.get("_attr_version") == version:
        return
    old = _grad_fn_slot.__get__(view)
    if old is None and not base._requires_grad:
        return  # nothing to track (and the version is looked at again next time)
    meta = d.get("_creation_meta")
    if meta is not None:
        raise RuntimeError(_rebase_error(view, meta, indirect=True))
    node = AsStridedBackward0(base, view)
    _grad_fn_slot.__set__(view, node)
    _requires_grad_slot.__set__(view, True)
    d["_attr_version"] = version
    move_retains_grad(view, old, node)
    view._output_nr = 0


def _rebase_error(view, meta, indirect):
    fn = _grad_fn_slot.__get__(view)
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta == NO_GRAD_MODE or fn is None:
        prefix = (f"Output {view._output_nr} of {forward_op_name(fn)} is a view of a view which was "
                  "created in" if fn is not None else "A view was created in")
        msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {view._output_nr} of {forward_op_name(fn)} is a view and {modified} modified inplace."
    if meta == MULTI_OUTPUT_NODE:
        return msg + (" This view is the output of a function that returns multiple views. Such "
                      "functions do not allow the output views to be modified inplace. You should "
                      "replace the inplace operation by an out-of-place one.")
    return msg + (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                  "clarify your code by moving both the view and the inplace either both inside the "
                  "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
                  "want the inplace to be tracked).")


# ---------------------------------------------------------------- where a view lies in its base

class _Geometry:
    """Sizes and byte strides of a base and of a view into it, and the view's byte offset: all
    that is needed to find the view's elements in a gradient shaped like the base."""

    __slots__ = ("base_shape", "base_strides", "shape", "strides", "offset", "itemsize")

    def __init__(self, base, view):
        b, v = base._array(), view._array()
        self.base_shape, self.base_strides = b.shape, b.strides
        self.shape, self.strides = v.shape, v.strides
        self.offset = _address(v) - _address(b)
        self.itemsize = b.itemsize
        low, high = np.lib.array_utils.byte_bounds(b)
        if not (v.size == 0 or low <= _address(v) < high):
            raise RuntimeError("internal error: a view that does not share its base's memory")

    def region(self):
        """For each element of the view, its flat (C-order) index in the base."""
        base_addresses = _addresses(self.base_shape, self.base_strides, 0).ravel()
        order = np.argsort(base_addresses, kind="stable")
        view_addresses = _addresses(self.shape, self.strides, self.offset)
        return order[np.searchsorted(base_addresses, view_addresses, sorter=order)]


def _address(a):
    return a.__array_interface__["data"][0]


def _addresses(shape, strides, start):
    """Byte address (relative) of every element of an array with these sizes and strides."""
    addresses = np.full(shape, start, dtype=np.int64)
    for axis, (n, step) in enumerate(zip(shape, strides)):
        addresses += (np.arange(n, dtype=np.int64) * step).reshape((n,) + (1,) * (len(shape) - axis - 1))
    return addresses


def _take_region(grad, ids):
    """``grad.flatten()[ids]``, recorded (IndexBackward0) when create_graph is on."""
    from ..ops.core import apply_op
    from ..ops.shape import Index

    flat = grad.reshape(-1)
    return flat, apply_op(Index, (flat,), {"indices": (ids,), "self_sym_sizes": flat.shape})


def _edge(t):
    from ..ops.core import _edge as edge

    return edge(t)


# ---------------------------------------------------------------- the two nodes

class CopySlices(Node):
    """The base's ``grad_fn`` after an in-place op on one of its views.

    Edges: the base's previous history, then the wrapped op's other inputs. Backward: the op's
    formula runs on the view's region of the base's gradient; the result for the view's old
    values replaces that region, the rest of the gradient flows through unchanged.
    """

    __slots__ = ("fn", "geometry")

    def __init__(self, base, view, fn):
        super().__init__((_edge(base),) + tuple(fn.next_functions[1:]))
        self.fn = fn
        self.geometry = _Geometry(base, view)
        self._input_metadata = [(base.shape, base.dtype)]

    def name(self):
        return "torch::autograd::CopySlices"

    def __repr__(self):  # PyTorch's repr shows the class name, name() the C++ one
        return f"<CopySlices object at {hex(id(self))}>"

    def apply(self, grads):
        from ..ops.core import apply_op
        from ..ops.shape import CopySlices as WriteAt

        grad = grads[0]
        n = len(self.next_functions)
        if grad is None:
            return [None] * n
        if self.fn is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if _grad_state.grad_enabled and grad.requires_grad and self._contiguous_base(grad):
            return self._apply_recorded(grad, n)
        ids = self.geometry.region()
        flat, grad_slice = _take_region(grad, ids)
        result = list(self.fn.apply([grad_slice]))
        grads_in = [None] * n
        for i, g in enumerate(result[:n]):
            if g is None:
                continue
            if i == 0:
                if self.next_functions[0][0] is not None:
                    written = apply_op(WriteAt, (flat, g), {"index": (ids,)})
                    grads_in[0] = written.reshape(self.geometry.base_shape)
            else:
                grads_in[i] = g
        return grads_in

    def _contiguous_base(self, grad):
        g = self.geometry
        c_strides = np.empty(g.base_shape, dtype=grad.dtype.np).strides
        return g.base_strides == c_strides and grad.dtype.np.itemsize == g.itemsize

    def _apply_recorded(self, grad, n):
        """With create_graph, PyTorch's own steps, so the graph they record is PyTorch's::

            result = grad.new_empty_strided(base sizes, strides); result.copy_(grad)
            grad_slice = result.as_strided(view sizes, strides, offset)
            res = fn(grad_slice.clone()); grad_slice.copy_(res[0])    # result: CopySlices
        """
        g = self.geometry
        result = Tensor._make(np.empty(g.base_shape, dtype=grad.dtype.np))
        result.copy_(grad)  # CopyBackwards
        flat = result._data.reshape(-1)
        region = np.lib.stride_tricks.as_strided(flat[g.offset // g.itemsize:], g.shape, g.strides)
        grad_slice = make_view(Tensor._make(region), result)
        grad_slice.grad_fn = AsStridedBackward0(result, grad_slice)
        grad_slice._requires_grad = True
        res = list(self.fn.apply([grad_slice.clone()]))
        grads_in = [None] * n
        for i, r in enumerate(res[:n]):
            if i == 0:
                if r is not None and self.next_functions[0][0] is not None:
                    grad_slice.copy_(r)
                    grads_in[0] = result
            else:
                grads_in[i] = r
        return grads_in

    def release_variables(self):
        self.fn = None  # frees the wrapped node and what it saved


class AsStridedBackward0(Node):
    """A view's ``grad_fn`` once its buffer was written in place: its gradient lands in the
    view's region of a zero gradient for the whole base."""

    __slots__ = ("geometry",)

    def __init__(self, base, view):
        super().__init__((_edge(base),))
        self.geometry = _Geometry(base, view)
        self._input_metadata = [(view.shape, view.dtype)]

    def apply(self, grads):
        from ..ops.shape import index_put_zeros

        grad = grads[0]
        if grad is None:
            return [None]
        geometry = self.geometry
        size = int(np.prod(geometry.base_shape))
        flat = index_put_zeros(grad, (size,), (geometry.region(),))
        return [flat.reshape(geometry.base_shape)]

    @property
    def _saved_size(self):
        return tuple(self.geometry.shape)

    @property
    def _saved_stride(self):
        return tuple(s // self.geometry.itemsize for s in self.geometry.strides)

    @property
    def _saved_storage_offset(self):
        return self.geometry.offset // self.geometry.itemsize
