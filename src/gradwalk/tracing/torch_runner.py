"""Run a script on real PyTorch and record, for every backward pass, the order in which the
engine runs its nodes: a pre-hook and a post-hook on every node, as in the seeds' table.

    python -m gradwalk.tracing.torch_runner SCRIPT.py OUT.json

``gradwalk trace --torch`` runs this in a subprocess (a fresh process, so sequence numbers start
at 0 as they do for the gradwalk run) and compares the two. OUT.json:
``{"passes": [{"call", "line", "steps": [{"label", "name", "seq", "grad_in", "grads_out"}],
"grads": {leaf: TENSOR}}], "error": null | {"type", "message"}}``.
"""
import json
import linecache
import os
import runpy
import sys

from ..autograd.stepper import _json_data
from .names import names_in_frame

UINT64_MAX = 2**64 - 1


def tensor_json(t):
    """A torch tensor as docs/lab-api.md writes one (non-finite numbers as strings), like the
    stepper's ``tensor_json`` for a gradwalk tensor; the lab's compare uses it too."""
    if t is None:
        return None
    array = t.detach().cpu().numpy()
    return {"shape": list(array.shape), "dtype": str(t.dtype).replace("torch.", ""), "data": _json_data(array)}


def _user_frame():
    import torch

    torch_dir = os.path.dirname(torch.__file__) + os.sep
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith((torch_dir, here)):
        frame = frame.f_back
    return frame


def _graph_nodes(roots):
    seen, stack, nodes = set(), [r for r in roots if r is not None], []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        nodes.append(node)
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return nodes


def record_passes(passes):
    """Wrap torch's one entry to the C++ engine so every backward()/grad() call is recorded."""
    import torch
    import torch.autograd as autograd

    original = autograd._engine_run_backward

    def run_backward(t_outputs, *args, **kwargs):
        frame = _user_frame()
        names = names_in_frame(frame, torch.Tensor)
        leaf_names = {}
        for tensor, name in names.items():
            if tensor.grad_fn is None and tensor.requires_grad:
                leaf_names[id(tensor)] = name
        steps, handles, running = [], [], {}  # running: node -> its step, until the post-hook
        roots = [t.grad_fn if isinstance(t, torch.Tensor) else t.node for t in t_outputs]
        for node in _graph_nodes(roots):
            handles.append(node.register_prehook(
                lambda grads, node=node: _on_pre(steps, running, node, grads, leaf_names)))
            handles.append(node.register_hook(
                lambda grad_inputs, grad_outputs, node=node: _on_post(running, node, grad_inputs)))
        call = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() if frame else None
        record = {"call": call, "line": frame.f_lineno if frame else None, "steps": steps, "grads": {}}
        passes.append(record)
        try:
            return original(t_outputs, *args, **kwargs)
        finally:
            for handle in handles:
                handle.remove()
            for tensor, name in names.items():
                if id(tensor) in leaf_names:
                    record["grads"][name] = tensor_json(tensor.grad)

    autograd._engine_run_backward = run_backward


def _label(node, leaf_names):
    name = node.name()
    if name == "torch::autograd::AccumulateGrad":
        return f"AccumulateGrad({leaf_names.get(id(node.variable), '?')})"
    return name.replace("torch::autograd::", "")


def _on_pre(steps, running, node, grads, leaf_names):
    seq = node._sequence_nr()
    step = {"label": _label(node, leaf_names), "name": node.name(),
            "seq": None if seq == UINT64_MAX else seq,
            "grad_in": [tensor_json(g) for g in grads], "grads_out": []}
    steps.append(step)
    running[node] = step


def _on_post(running, node, grad_inputs):
    # outputs along edges to nodes that exist (an input that needs no grad has no edge)
    running.pop(node)["grads_out"] = [tensor_json(g) for g, (fn, _) in
                                      zip(grad_inputs, node.next_functions) if fn is not None]


def main(argv=None):
    script, out_path = (sys.argv[1:] if argv is None else argv)[:2]
    passes, error = [], None
    record_passes(passes)
    sys.argv = [script]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    except Exception as e:  # the comparison still shows the passes that ran
        error = {"type": type(e).__name__, "message": str(e)}
    with open(out_path, "w") as f:
        json.dump({"passes": passes, "error": error}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
