"""Custom ops: ``gradwalk.autograd.Function``, as in PyTorch.

    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 2 * x * grad

    y = Sq.apply(x)        # y.grad_fn is a SqBackward node; backward() calls Sq.backward

``ctx`` *is* the backward node (``y.grad_fn``), an instance of the class ``<Name>Backward`` made
for each Function. ``apply`` runs ``forward`` without recording a graph, then wires the node up
like any op's node: one edge per tensor argument, a sequence number, the shape and dtype of each
output (so the engine can reduce and check the gradients ``backward`` returns).
"""
import functools
import warnings

from ..grad_mode import _state as _grad_state, no_grad
from .node import Error, Node, SavedTensor, _next_sequence_nr


class FunctionCtx:
    """What ``forward``/``setup_context`` may call on ``ctx``."""

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward``; read them back with ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors for ``jvp``."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        """These inputs were modified in place by ``forward``."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        """These outputs get no gradient (``backward`` still receives zeros for them)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        """With False, ``backward`` gets None (not zeros) for outputs that received no gradient."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """Base of every ``<Name>Backward`` node; the node is also the ``ctx``."""

    _forward_cls = None
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()
    materialize_grads = True
    _materialize_non_diff_grads = True
    _non_diff_outputs = frozenset()
    _saved = None
    _is_input = ()  # per forward argument: was it a tensor

    @property
    def saved_tensors(self):
        if self._saved is None:  # inside forward/jvp, before apply() packed them
            if hasattr(self, "saved_for_forward"):
                return self.saved_for_forward
            return self.to_save
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def apply(self, grads):
        cls = self._forward_cls
        if self.materialize_grads:
            # zeros for the outputs that got no gradient; with ctx._materialize_non_diff_grads
            # = False, the non-differentiable outputs' stay None (PyTorch's PyNode::apply)
            keep_none = () if self._materialize_non_diff_grads else self._non_diff_outputs
            grads = [_zeros(meta) if g is None and meta[0] is not None and i not in keep_none else g
                     for i, (g, meta) in enumerate(zip(grads, self._input_metadata))]
        results = cls.backward(self, *grads)
        return self._check_backward_results(results)

    def _check_backward_results(self, results):
        """PyTorch's PyNode::apply: one gradient per forward argument (extra Nones are fine),
        then only the tensor arguments' gradients go on to the engine."""
        if not isinstance(results, tuple):
            results = (results,)
        expected = len(self._is_input)
        if len(results) > expected and all(r is None for r in results[expected:]):
            results = results[:expected]
        if len(results) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{expected}, got {len(results)})")
        grads = []
        for i, (is_tensor, r) in enumerate(zip(self._is_input, results)):
            if is_tensor:
                grads.append(r)
            elif r is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable")
        return grads

    def release_variables(self):
        if self._saved:
            for s in self._saved:
                if s is not None:
                    s.release()

    def __repr__(self):
        return f"<{type(self).__module__}.{self.name()} object at {hex(id(self))}>"


def _zeros(meta):
    from ..ops.functions import zeros

    shape, dtype = meta
    return zeros(shape, dtype=dtype)


class FunctionMeta(type):
    """Gives each Function subclass its node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": "torch.autograd.function"})
        super().__init__(name, bases, attrs)


_BARE_NODE_ATTRIBUTES = frozenset({
    "_register_hook_dict", "register_hook", "register_prehook", "next_functions", "_sequence_nr",
    "_set_sequence_nr", "metadata", "_input_metadata"})


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward`` and ``backward``; call ``YourFunction.apply(*args)``."""

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod or "
            "set generate_vmap_rule=True.")

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.", DeprecationWarning,
            stacklevel=2)
        self.__dict__["_bare_node"] = Node(())  # takes the next sequence number, as in PyTorch

    def __getattr__(self, name):
        """An instance (deprecated) is a bare node with no edges, as PyTorch's ``_FunctionBase``
        makes it: ``name()`` is the class's name, ``next_functions`` (),
        ``metadata`` {}, ``_sequence_nr()`` the one it took when made; hooks can be registered on it
        (they never run)."""
        if name == "name":
            return lambda: type(self).__name__
        if name in _BARE_NODE_ATTRIBUTES:
            node = self.__dict__.get("_bare_node")
            if node is None:  # (a subclass's __init__ that skipped Function's)
                node = self.__dict__["_bare_node"] = Node(())
            value = getattr(node, name)
            return tuple(value) if name == "_input_metadata" else value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


def _uses_setup_context(cls):
    return cls.setup_context is not Function.setup_context


def _apply(cls, args, kwargs):
    from ..tensor import Tensor

    ctx = cls._backward_cls.__new__(cls._backward_cls)
    # The node exists from the start, so it takes its sequence number even when no graph is made.
    Node.__init__(ctx, (), _next_sequence_nr())
    is_input = tuple(isinstance(a, Tensor) for a in args)
    ctx._is_input = is_input
    requires_grad = _grad_state.grad_enabled and any(
        a._requires_grad for a, t in zip(args, is_input) if t)
    ctx.needs_input_grad = tuple(t and a._requires_grad for a, t in zip(args, is_input))
    if requires_grad:  # the edges are read before forward runs: it may write into its inputs
        ctx.next_functions = tuple(_edge(a) for a, t in zip(args, is_input) if t)  # tensor args only

    # forward runs without recording, and without carrying tangents: jvp() gives those
    with no_grad(), _no_tangents():
        if _uses_setup_context(cls):
            output = cls.forward(*args, **kwargs)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    if _uses_setup_context(cls):
        cls.setup_context(ctx, args, output)

    outputs = output if isinstance(output, tuple) else (output,)
    if requires_grad:
        outputs = _wire_outputs(ctx, args, is_input, outputs)
    else:
        outputs = _detach_inputs_returned(ctx, args, outputs)
    _forward_mode(cls, ctx, args, is_input, outputs)
    return outputs if isinstance(output, tuple) else outputs[0]


class _no_tangents:
    """Inside ``forward`` no tangent flows (PyTorch asks the Function's ``jvp`` instead)."""

    def __enter__(self):
        from . import forward_ad

        self.previous = forward_ad._state.live_below
        forward_ad._state.live_below = -1

    def __exit__(self, *exc):
        from . import forward_ad

        forward_ad._state.live_below = self.previous
        return False


def _wire_outputs(ctx, args, is_input, outputs):
    """Give the outputs the node as ``grad_fn`` and pack what ``save_for_backward`` asked for.

    A dirty output that is a view (``v = h[1:3]`` written in place by forward) is handled like
    any in-place op on a view: its base's history becomes ``CopySlices(ctx)`` and the view's
    ``grad_fn`` an ``AsStridedBackward0`` over it (PyTorch's ``rebase_history``)."""
    from ..tensor import Tensor

    inputs = {id(a) for a, t in zip(args, is_input) if t}
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    wired = []
    meta = []
    non_diff_outputs = []
    rebased = set()
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            wired.append(out)
            meta.append((None, None))
            continue
        rebase = False
        if id(out) in dirty:
            _check_dirty(out)
            rebase = out._base is not None
            if rebase:
                _check_dirty_view(out, len(outputs))
            out._version_counter[0] += 1  # PyTorch bumps a dirty tensor's version once more
        elif id(out) in inputs:
            out = _alias(out)  # an input returned as is comes back as a new view of it
        differentiable = out.is_floating_point() and id(outputs[i]) not in non_diff
        if differentiable and rebase:
            from . import views

            views.rebase_history(out, ctx)
            rebased.add(id(out))
        elif differentiable:
            out.grad_fn = ctx
            out._output_nr = i
            out._requires_grad = True
        else:
            out.grad_fn = None
            out._requires_grad = False
            non_diff_outputs.append(i)
        wired.append(out)
        meta.append((out.shape, out.dtype))
    ctx._input_metadata = meta
    if non_diff_outputs:
        ctx._non_diff_outputs = frozenset(non_diff_outputs)
    ctx._saved = tuple(_save(ctx, t, outputs, wired, rebased) for t in ctx.to_save)
    ctx.to_save = ()
    return tuple(wired)


def _edge(t):
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (t._grad_accumulator(), 0)
    return (None, 0)


def _check_dirty(t):
    if _raw_grad_fn(t) is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")


def _alias(t):
    from ..tensor import Tensor

    view = Tensor._make(t._data)
    view.__dict__["_base"] = t if t._base is None else t._base
    view._version_counter = t._version_counter
    return view


def _raw_grad_fn(t):
    """``grad_fn`` as it is set, not regenerated for a view whose buffer was written since
    (PyTorch's C++ ``is_leaf`` reads the field)."""
    if "_base" in t.__dict__:
        from . import views

        return views._grad_fn_slot.__get__(t)
    return t.grad_fn


def _check_dirty_view(t, n_outputs):
    """A view written in place by forward: the checks PyTorch makes before rebasing its base."""
    if n_outputs > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your "
            "Function cannot return more than one Tensor. This is not supported by the current "
            "autograd engine. You should either make sure the input is not a view (using .clone() "
            "for example) or make your Function only return one Tensor (potentially splitting it "
            "into two Functions: one doing the inplace that returns a single Tensor and a second "
            "one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change.")
    from . import views

    views.check_inplace_on_view(t)
    base = t._base
    if base.grad_fn is None and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _save(ctx, t, outputs, wired, rebased=()):
    if t is None:
        return None
    for original, out in zip(outputs, wired):
        if t is original and (out.grad_fn is ctx or id(out) in rebased):
            # an output: keep its data, not the tensor (that would be a cycle through ctx)
            return SavedTensor(out, None, is_output=True)
    return SavedTensor(t)


def _detach_inputs_returned(ctx, args, outputs):
    """Without a graph, an input returned as is still comes back as a new tensor object, unless
    forward marked it dirty: then it comes back itself, its version bumped once more (as with a
    graph)."""
    inputs = {id(a) for a in args}
    dirty = {id(t) for t in ctx.dirty_tensors}
    from ..tensor import Tensor

    bumped = set()
    wired = []
    for o in outputs:
        if isinstance(o, Tensor) and id(o) in dirty:
            if id(o) not in bumped:
                o._version_counter[0] += 1
                bumped.add(id(o))
        elif isinstance(o, Tensor) and id(o) in inputs:
            o = _alias(o)
        wired.append(o)
    return tuple(wired)


def _forward_mode(cls, ctx, args, is_input, outputs):
    """Tangents of the outputs from the Function's ``jvp`` (for every live level)."""
    from . import forward_ad

    if not forward_ad._state.levels:
        return
    inputs = [a for a, t in zip(args, is_input) if t]
    for level in forward_ad._live_levels(inputs):
        tangents = []
        for a, t in zip(args, is_input):
            if not t:
                tangents.append(None)
                continue
            tangent = forward_ad.get_tangent(a, level)
            if tangent is None and ctx.materialize_grads:
                tangent = forward_ad._zeros_like(a)
            tangents.append(tangent)
        new = forward_ad._without_propagation(level, lambda: cls.jvp(ctx, *tangents))
        new = new if isinstance(new, tuple) else (new,)
        if len(new) != len(outputs):
            raise RuntimeError(
                f"function {cls.__name__}_jvp returned an incorrect number of forward gradients "
                f"(expected {len(outputs)}, got {len(new)})")
        for out, tangent in zip(outputs, new):
            if tangent is not None and out is not None and out.is_floating_point():
                forward_ad.set_tangent(out, level, forward_ad._fit(tangent, out))


def once_differentiable(fn):
    """For a ``backward`` that cannot itself be differentiated: run it without recording, and make
    any attempt to differentiate its result raise PyTorch's error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from ..tensor import Tensor

        with no_grad():
            outputs = fn(ctx, *args)
        if not _grad_state.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        fakes = []
        for out in outputs:
            if out is not None:
                out = out.detach()
                out.requires_grad = True
            fakes.append(out)
        err = _DelayedError(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            tuple(_edge(f) if f is not None else (None, 0) for f in fakes))
        wrapped = []
        for i, f in enumerate(fakes):
            if f is None:
                wrapped.append(None)
                continue
            w = Tensor._make(f._data, grad_fn=err, output_nr=i, requires_grad=True)
            err._input_metadata.append((f.shape, f.dtype))
            wrapped.append(w)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class _DelayedError(Error):
    """PyTorch's DelayedError: the ``Error`` node it makes takes a sequence number like any op."""

    __slots__ = ()

    def __init__(self, msg, next_functions):
        Node.__init__(self, next_functions)
        self.msg = msg


_DelayedError.__name__ = _DelayedError.__qualname__ = "Error"  # type(node).__name__, as PyTorch's


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass


__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction"]
