"""Gradient checkpointing (``torch.utils.checkpoint``): keep fewer activations, recompute them in
the backward pass. Memory for compute, as the seeds put it.

    y = checkpoint(block, x, use_reentrant=False)   # same y, same gradients, fewer saved tensors

Two variants, as in PyTorch:

* ``use_reentrant=False``: the block runs normally, recording its usual graph, but every tensor
  a node saves is replaced by a small handle (``saved_tensors_hooks``). The first time backward
  unpacks one, the block is run again (grad on) and the recomputed saved tensors, which come in
  the same order, stand in for the originals.
* ``use_reentrant=True`` (the default when ``use_reentrant`` is omitted, with PyTorch's warning):
  the block runs under ``no_grad`` inside a custom Function, ``CheckpointFunctionBackward``, which
  saves only the block's inputs; its backward re-runs the block with grad on and calls
  ``backward`` on it, a nested (re-entrant) run of the engine.

Either way the block runs twice in total.
"""
import contextlib
import warnings

from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..autograd.node import SavedTensor
from ..grad_mode import enable_grad, no_grad

_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
    "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants.")

_SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
    "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
    "variants.")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _is_tensor(x):
    from ..tensor import Tensor

    return isinstance(x, Tensor)


def _rng_state():
    from ..ops.factories import default_generator

    return default_generator.get_state()


@contextlib.contextmanager
def _replayed_rng(state, enabled):
    """Run the recomputation with the random state the forward saw (dropout gives the same mask)."""
    if not enabled:
        yield
        return
    from ..ops.factories import default_generator

    current = default_generator.get_state()
    default_generator.set_state(state)
    try:
        yield
    finally:
        default_generator.set_state(current)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its intermediate values for backward."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args, kwargs)


# ---------------------------------------------------------------- use_reentrant=True

class CheckpointFunction(Function):
    """Saves the block's inputs only; backward recomputes the block and backpropagates through it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(_is_tensor(a) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=2)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = _rng_state()
        ctx.inputs = [None if _is_tensor(a) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.save_for_backward(*[a for a in args if _is_tensor(a)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        from ..autograd import backward

        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = [_detach_keeping_requires_grad(a) for a in inputs]
        with _replayed_rng(getattr(ctx, "fwd_rng_state", None), ctx.preserve_rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        if _is_tensor(outputs):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grad_outputs) if _is_tensor(o) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward([o for o, _ in with_grad], [g for _, g in with_grad])
        grads = tuple(a.grad if _is_tensor(a) else None for a in detached)
        return (None, None) + grads


def _detach_keeping_requires_grad(a):
    if not _is_tensor(a):
        return a
    d = a.detach()
    d.requires_grad = a.requires_grad
    return d


# ---------------------------------------------------------------- use_reentrant=False

class _Recomputation:
    """The saved tensors of one checkpointed call, recomputed on the first unpack."""

    def __init__(self, function, args, kwargs, rng_state, preserve, context_fn):
        # The inputs are saved like any saved tensor, outside the checkpoint's own hooks (an outer
        # saved_tensors_hooks sees them), and version-checked when the recomputation reads them.
        self.saved_args = [SavedTensor(a) if _is_tensor(a) else a for a in args]
        self.function, self.kwargs = function, kwargs
        self.rng_state, self.preserve = rng_state, preserve
        self.context_fn = context_fn
        self.count = 0  # how many tensors the original forward saved
        self.recomputed = None

    def pack(self, tensor):
        index = self.count
        self.count += 1
        return index

    def unpack(self, index):
        if self.recomputed is None:
            self._recompute()
        if index >= len(self.recomputed):
            raise RuntimeError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different "
                "metadata than during the forward pass.")
        return self.recomputed[index]

    def _recompute(self):
        recomputed = []

        def keep(tensor):
            recomputed.append(tensor.detach() if tensor.grad_fn is not None else tensor)
            return len(recomputed) - 1

        args = [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]
        _, recompute_context = self.context_fn()
        with _replayed_rng(self.rng_state, self.preserve), enable_grad(), recompute_context, \
                saved_tensors_hooks(keep, lambda i: recomputed[i]):
            self.function(*args, **self.kwargs)
        self.recomputed = recomputed


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args, kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    frame = _Recomputation(function, args, kwargs, _rng_state() if preserve else None, preserve, context_fn)
    forward_context, _ = context_fn()
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


# ---------------------------------------------------------------- checkpoint_sequential

def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` in order, checkpointing all but the last of ``segments`` chunks."""
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction", "noop_context_fn"]
