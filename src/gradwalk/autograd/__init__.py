"""``gradwalk.autograd``: ``backward``, ``grad`` and the graph they run on.

``backward`` and ``grad`` prepare the roots' gradients (``_make_grads``), then hand a
``GraphTask`` to the engine (``engine.py``). ``backward`` accumulates into leaves' ``.grad``;
``grad`` captures the gradients of the requested inputs and returns them.
"""
import warnings

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time (no import per call)
from ..grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,  # noqa: F401
                         set_grad_enabled)
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,  # noqa: F401
                           is_anomaly_enabled, set_detect_anomaly)
from .._dtype import Size
from .._meta import MetaArray, empty as meta_empty
from .engine import GraphTask
from .node import Node, saved_tensors_hooks_state  # noqa: F401

_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when creating "
    "the graph to avoid this. If you have to use this function, make sure to reset the .grad fields "
    "of your parameters to None after use to break the cycle and avoid the leak.")


_create_graph_warned = [False]


def _warn_create_graph_once():
    """PyTorch issues this warning with ``TORCH_WARN_ONCE``: once per process."""
    if not _create_graph_warned[0]:
        _create_graph_warned[0] = True
        warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=4)


def _tensor_or_tensors_to_tuple(tensors, length):
    Tensor = _tensor.Tensor
    if tensors is None:
        return (None,) * length
    if isinstance(tensors, Tensor):
        return (tensors,)
    return tuple(tensors)


def _outputs_and_grads(outputs, grad_outputs):
    """``outputs`` and their gradients as two tuples of one length (None where none was given)."""
    Tensor = _tensor.Tensor
    outputs = (outputs,) if isinstance(outputs, (Tensor, graph.GradientEdge)) else tuple(outputs)
    grads = _tensor_or_tensors_to_tuple(grad_outputs, len(outputs))
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return outputs, grads


def _make_grads(outputs, grads):
    """Seed gradients: ``ones_like(out)`` for a one-element output, else the given ones, checked."""
    Tensor = _tensor.Tensor
    new_grads = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if isinstance(out, graph.GradientEdge):
            new_grads.append(_edge_grad(i, out, grad))
            continue
        if isinstance(grad, Tensor):
            if grad.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {grad.shape} and output[{i}] "
                    f"has a shape of {out.shape}.")
            if grad.dtype is not out.dtype:
                grad = Tensor._make(grad._data.astype(out.dtype.np))
            new_grads.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                data = out._data  # (np.array is a C call; np.ones wraps empty + copyto in Python)
                seed = np.array(1, dtype=data.dtype) if not data.shape else np.ones(data.shape, data.dtype)
                if data.__class__ is MetaArray:  # a meta output's seed is a meta tensor too
                    seed = meta_empty(data.shape, data.dtype)
                new_grads.append(Tensor._make(seed))
            else:
                new_grads.append(None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(grad).__name__}")
    return tuple(new_grads)


def _edge_grad(i, edge, grad):
    """The seed for an output given as a GradientEdge: checked against the shape its node
    expects (the node's input metadata), ones for a one-element one when none is given."""
    Tensor = _tensor.Tensor
    shape, dtype = edge.node._input_metadata[edge.output_nr]
    dtype = getattr(dtype, "np", dtype)  # a custom Function's node records gradwalk's dtype
    if grad is None:
        if int(np.prod(shape, dtype=np.int64)) != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return Tensor._make(np.ones(shape, dtype))
    if not isinstance(grad, Tensor):
        raise TypeError(f"gradients can be either Tensors or None, but got {type(grad).__name__}")
    if tuple(grad.shape) != tuple(shape):
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {grad.shape} and output[{i}] has a "
            f"shape of {Size(shape)}.")
    return grad


def _root_edges(outputs):
    edges = []
    for i, out in enumerate(outputs):
        if isinstance(out, graph.GradientEdge):  # an output named by its node and input slot
            edges.append((out.node, out.output_nr))
            continue
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append((out.grad_fn, out._output_nr) if out.grad_fn is not None
                     else (out._grad_accumulator(), 0))
    return edges


def _input_edges(inputs):
    edges = []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):  # the gradient flowing into this node's slot
            edges.append((t.node, t.output_nr))
            continue
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append((t.grad_fn, t._output_nr) if t.grad_fn is not None
                     else (t._grad_accumulator(), 0))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Sum the gradients of ``tensors`` w.r.t. graph leaves into their ``.grad``."""
    Tensor = _tensor.Tensor
    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs, grads = _outputs_and_grads(tensors, grad_tensors)
    if isinstance(inputs, (Tensor, graph.GradientEdge)):
        inputs = (inputs,)
    grads = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and inputs is None:
        _warn_create_graph_once()
    for t in inputs or ():
        if isinstance(t, Tensor) and t.grad_fn is not None:
            t.retain_grad()  # as PyTorch's run_backward: the non-leaf keeps retaining afterwards
    run_backward(outputs, grads, retain_graph, create_graph,
                 inputs=tuple(inputs) if inputs is not None else None, accumulate_grad=True)


def run_backward(outputs, grads, keep_graph, create_graph, inputs=None, accumulate_grad=True,
                 observer=None):
    roots = _root_edges(outputs)
    input_edges = _input_edges(inputs) if inputs is not None else None
    task = GraphTask(roots, list(grads), keep_graph=keep_graph, create_graph=create_graph,
                     accumulate_grad=accumulate_grad, inputs=input_edges, observer=observer)
    hooks_before = saved_tensors_hooks_state.stack
    try:
        captured = task.run()
    finally:  # as PyTorch's GraphTask restores the thread-local state it ran nodes under: saved-
        # tensor hooks entered (or left) by a backward formula do not outlive the backward pass
        saved_tensors_hooks_state.stack = hooks_before
    if accumulate_grad and inputs is not None:
        _accumulate_into_inputs(inputs, captured)
    return captured


def _accumulate_into_inputs(inputs, captured):
    """backward(inputs=[h]): a non-leaf listed in inputs= gets its .grad populated, as PyTorch does."""
    for t, g in zip(inputs, captured):
        if isinstance(t, graph.GradientEdge) or t._retains_grad:  # no tensor / its hook did it
            continue
        if t.grad_fn is not None and g is not None:
            t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned as a tuple; ``.grad`` is not touched."""
    Tensor = _tensor.Tensor
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To "
                      "accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    is_dict = isinstance(inputs, dict)
    keys = list(inputs.keys()) if is_dict else None
    single = (Tensor, graph.GradientEdge)
    outputs_t = (outputs,) if isinstance(outputs, single) else tuple(outputs)
    inputs_t = tuple(inputs.values()) if is_dict else (
        (inputs,) if isinstance(inputs, single) else tuple(inputs))
    if len(inputs_t) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    outputs_t, grads = _outputs_and_grads(outputs_t, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs_t, inputs_t, grads, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs_t, grads)
    result = run_backward(outputs_t, grads, retain_graph, create_graph, inputs=inputs_t,
                          accumulate_grad=False)
    result = list(result)
    for i, g in enumerate(result):
        if g is None:
            if materialize_grads and isinstance(inputs_t[i], graph.GradientEdge):
                raise RuntimeError(
                    "materialize_grads cannot be used when the given input is a GradientEdge")
            if materialize_grads:
                from ..ops.functions import zeros_like

                result[i] = zeros_like(inputs_t[i], requires_grad=bool(create_graph))  # as PyTorch
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        elif not isinstance(inputs_t[i], graph.GradientEdge) and g.shape != inputs_t[i].shape:
            result[i] = g.sum_to_size(inputs_t[i].shape)
    if is_dict:
        return dict(zip(keys, result))
    return tuple(result)


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize):
    from ..ops.functions import stack

    for i, (out, g) in enumerate(zip(outputs, grads)):
        # (PyTorch's message names the shape past the first two dims: it drops the batch dim twice)
        if isinstance(g, _tensor.Tensor) and tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                f"shape of {Size(g.shape[2:])} and output[{i}] has a shape of {out.shape}. If you only "
                "want some tensors in `grad_output` to be considered batched, consider using vmap.")
    n = grads[0].shape[0]
    per_input = [[] for _ in inputs]
    for k in range(n):
        gk = tuple(g[k] if g is not None else None for g in grads)
        res = grad(outputs, inputs, gk, retain_graph=True if k < n - 1 else retain_graph,
                   create_graph=create_graph, allow_unused=allow_unused,
                   materialize_grads=materialize)
        for i, r in enumerate(res):
            per_input[i].append(r)
    return tuple(None if r[0] is None else stack(r) for r in per_input)


from . import graph  # noqa: E402,F401
from .stepper import Stepper, stepper, watch_backward  # noqa: E402,F401
from . import forward_ad, functional  # noqa: E402,F401
from .function import Function, once_differentiable  # noqa: E402,F401
from .gradcheck import gradcheck, gradcheck_sweep, gradgradcheck  # noqa: E402,F401
from .variable import Variable  # noqa: E402,F401
from . import _functions  # noqa: E402,F401


def _calculate_shape(output, grad, is_grads_batched):
    """The shapes ``backward``/``grad`` compare: the output's and the gradient's (without its
    batch dim when ``is_grads_batched``)."""
    if isinstance(output, graph.GradientEdge):
        return Size(output.node._input_metadata[output.output_nr][0]), grad.shape
    return output.shape, (grad.shape[1:] if is_grads_batched else grad.shape)


def __getattr__(name):
    # torch.autograd.profiler without an import (gradwalk.profiler loads on first use)
    if name in ("profiler", "profiler_util"):
        import importlib

        return importlib.import_module("." + name, __name__)
    if name in ("kineto_available", "_profiler_enabled"):
        from .. import profiler

        return getattr(profiler, name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
