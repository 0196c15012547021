"""Step through ``backward()`` one node at a time: the real engine, watched.

    >>> import gradwalk as torch
    >>> w = torch.tensor(0.5, requires_grad=True)
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> b = torch.tensor(-0.3, requires_grad=True)
    >>> y = torch.tanh(w * x + b)
    >>> s = torch.autograd.stepper(y, names={w: "w", x: "x", b: "b", y: "y"})
    >>> [node["name"] for node in s.graph["nodes"]][:2]
    ['TanhBackward0', 'AddBackward0']
    >>> s.step()["text"]
    'popped TanhBackward0 (seq 2) with gradient 1, sent 0.6347 to AddBackward0'
    >>> [step["name"] for step in s][:2]       # iterate over the remaining steps
    ['AddBackward0', 'torch::autograd::AccumulateGrad']
    >>> round(w.grad.item(), 4)
    1.2695

The stepper does not re-implement anything: ``mode="pytorch"`` drives ``engine.GraphTask`` with
``GraphTask.step()`` and watches it through the engine's observer callbacks (``on_pop``,
``on_outputs``, ``on_release``, ``on_accumulate``); ``mode="topo"`` drives ``TopoGraphTask``
(micrograd's order, ``topo_engine.py``) on the same nodes. So stepping to the end gives exactly
what ``backward()`` gives: gradients, hooks, and errors (a second pass without ``retain_graph``
fails at the first node whose saved tensors were freed).

Everything recorded is plain JSON (``docs/lab-api.md``): ``graph`` before the first step, one
``step`` record per node, ``to_dict()`` for a whole pass. ``watch_backward()`` records every
``backward()`` / ``autograd.grad()`` call of a piece of code; ``gradwalk trace`` and the lab use it.
"""
import contextlib
import linecache
import math
import os
import sys

import numpy as np

from .._dtype import from_numpy_dtype
from ..ops.core import OpNode
from .engine import GraphTask, cyclic_gc_paused
from .node import AccumulateGrad, GraphRoot, UINT64_MAX
from .topo_engine import TopoGraphTask

MODES = ("pytorch", "topo")
LIST_LIMIT = 50  # "ready" and "buffers" show at most this many entries; *_total counts all


# ---------------------------------------------------------------- JSON values

def tensor_json(t):
    """``{"shape", "dtype", "data"}`` for a tensor (``None`` stays ``None``); non-finite numbers
    become the strings "inf", "-inf", "nan"."""
    if t is None:
        return None
    data = t._data
    return {"shape": list(data.shape), "dtype": t.dtype.name, "data": _json_data(data)}


def _json_data(array):
    array = np.asarray(array)  # a 0-dim tensor may hold a NumPy scalar, which has no items
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        out = array.astype(object)
        out[np.isnan(array)] = "nan"
        out[array == np.inf] = "inf"
        out[array == -np.inf] = "-inf"
        return out.tolist()
    return array.tolist()


def short_value(value):
    """A tensor record as a few characters for tables and step texts: ``0.6347``,
    ``[1, 2]``, ``3x4 tensor``, ``None``."""
    if value is None:
        return "None"
    data, shape = value["data"], value["shape"]
    if not shape:
        return _short_number(data)
    count = math.prod(shape)
    if count <= 4:
        flat = np.asarray(data, dtype=object).reshape(-1)
        return "[" + ", ".join(_short_number(v) for v in flat) + "]"
    return "x".join(str(s) for s in shape) + " tensor"


def _short_number(v):
    if isinstance(v, str) or isinstance(v, bool):
        return str(v)
    return f"{v:.4g}"


def _seq(fn):
    n = fn._sequence_nr_value
    return None if n == UINT64_MAX else n


def _kind(fn):
    if isinstance(fn, AccumulateGrad):
        return "accumulate"
    if isinstance(fn, GraphRoot):
        return "root"
    return "function"


def _saved_entries(fn):
    """(name, SavedTensor) pairs of a node's saved values (only op nodes save any)."""
    return fn.saved_items() if isinstance(fn, OpNode) else []  # only op nodes keep them by name


def _saved_json(saved):
    """The value a SavedTensor holds, read without unpacking it (unpacking checks versions and
    may run user hooks). ``None`` once freed, or when saved_tensors_hooks packed it."""
    if saved._freed or getattr(saved, "_unpack_hook", None) is not None:
        return None
    tensor = getattr(saved, "_tensor", None)
    if tensor is not None:
        return tensor_json(tensor)
    data = getattr(saved, "_data", None)  # a saved output keeps only its array
    if data is None:
        return None
    return {"shape": list(data.shape), "dtype": from_numpy_dtype(data.dtype).name,
            "data": _json_data(data)}


# ---------------------------------------------------------------- the recorder

class _Recorder:
    """The engine's observer: turns its callbacks into one STEP record per node."""

    def __init__(self, stepper):
        self.stepper = stepper
        self.current = None

    def on_pop(self, task, fn, inputs):
        ids = self.stepper.ids
        nexts = {next_fn for next_fn, _ in fn.next_functions if next_fn is not None}
        self.current = {
            "index": len(self.stepper.records),
            "node": ids.get(fn), "name": fn.name(), "seq": _seq(fn),
            "grad_in": [tensor_json(g) for g in inputs],
            "grads_out": [],
            "dependencies": [],
            "buffers": [], "ready": [], "released": [], "leaf_grads": [],
            "text": "",
        }
        self._dependencies_before = {n: task.dependencies.get(n, 0) for n in nexts}

    def on_skip(self, task, fn, inputs):
        self.current["skipped"] = True  # autograd.grad: gradient captured, the node doesn't run

    def on_outputs(self, task, fn, inputs, outputs):
        ids = self.stepper.ids
        self.current["grads_out"] = [
            {"to": ids.get(next_fn), "input_nr": input_nr,
             "value": tensor_json(outputs[i] if i < len(outputs) else None)}
            for i, (next_fn, input_nr) in enumerate(fn.next_functions) if next_fn is not None]

    def on_release(self, task, fn):
        self.current["released"] = [name for name, _ in _saved_entries(fn)]

    def on_accumulate(self, task, fn):
        self.current["leaf_grads"].append(
            {"leaf": self.stepper.leaf_names.get(fn), "value": tensor_json(fn.variable._grad)})

    def on_send(self, task, fn, i, next_fn, input_nr, grad, remaining):
        pass  # what was sent is recorded from on_outputs; counts are compared after the step

    def finish(self, task, error=None):
        """Complete the record after the step: counts that changed, buffers, the ready list."""
        record = self.current
        self.current = None
        ids = self.stepper.ids
        record["dependencies"] = [
            {"node": ids.get(n), "before": before, "after": task.dependencies.get(n, 0)}
            for n, before in self._dependencies_before.items()
            if task.dependencies.get(n, 0) != before]
        record["dependencies"].sort(key=lambda d: _id_number(d["node"]))
        buffers = list(task.not_ready.items())
        record["buffers"] = [{"node": ids.get(n), "slots": [tensor_json(g) for g in slots]}
                             for n, slots in buffers[:LIST_LIMIT]]
        record["buffers_total"] = len(buffers)
        if isinstance(task, TopoGraphTask):
            upcoming, total = task.upcoming(LIST_LIMIT), len(task.order) - task.position
        else:
            upcoming = [fn for _, fn, _ in task.queue.in_pop_order()]
            upcoming, total = upcoming[:LIST_LIMIT], len(upcoming)
        record["ready"] = [{"node": ids.get(n), "name": n.name(), "seq": _seq(n)} for n in upcoming]
        record["ready_total"] = total
        if error is not None:
            record["error"] = error_json(error)
        record["text"] = self.stepper.describe(record)
        return record


def _id_number(node_id):
    return int(node_id[1:]) if node_id else -1


def error_json(error):
    return {"type": type(error).__name__, "message": str(error), "line": None, "col": None}


# ---------------------------------------------------------------- the stepper

class Stepper:
    """One backward pass, run one node at a time. Build it with ``stepper(...)``.

    ``graph``: the graph before the first step; ``records``: the steps so far; ``step()``: run the
    next node and return its record; iterate to run the rest; ``run()``; ``done``; ``error`` (the
    exception a step raised, re-raised to the caller as ``backward()`` would); ``result``: the
    captured gradients for ``autograd.grad``-style passes; ``to_dict()``; ``table()``.
    """

    def __init__(self, outputs, grads, keep_graph=False, create_graph=False, inputs=None,
                 accumulate_grad=True, mode="pytorch", names=None):
        from . import _input_edges, _root_edges

        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.outputs = tuple(outputs)
        self.inputs = None if inputs is None else tuple(inputs)
        self.accumulate_grad = accumulate_grad
        self.records = []
        self.error = None
        self.result = None
        self._finished = False
        self.call_site = None  # set by watch_backward: the user's line that called backward()
        self._recorder = _Recorder(self)
        engine = TopoGraphTask if mode == "topo" else GraphTask
        self.task = engine(_root_edges(self.outputs), list(grads), keep_graph=keep_graph,
                           create_graph=create_graph, accumulate_grad=accumulate_grad,
                           inputs=None if inputs is None else _input_edges(self.inputs),
                           observer=self._recorder)
        self._name_nodes(names or {})
        self.graph = self._graph_json(grads)

    # --- naming: "n0", "n1", ... by discovery order; leaves by the names given, else leaf0, ...
    def _name_nodes(self, names):
        named = {}
        for tensor, name in names.items():
            named[id(tensor)] = (name, tensor)
        self.ids = {}
        self.leaf_names = {}
        self.forward = {}  # node -> (name, tensor) of the tensor the node produced, when known
        for tensor_id, (name, tensor) in named.items():
            if tensor.grad_fn is not None and tensor.grad_fn not in self.forward:
                self.forward[tensor.grad_fn] = (name, tensor)
        for k, out in enumerate(self.outputs):
            if out.grad_fn is not None and out.grad_fn not in self.forward:
                self.forward[out.grad_fn] = ("output" if len(self.outputs) == 1 else f"output{k}", out)
        unnamed_leaves = 0
        stack = [self.task.graph_root]
        while stack:  # depth-first, edge 0 first: the ids read top-down like the graph
            fn = stack.pop()
            if fn in self.ids:
                continue
            self.ids[fn] = f"n{len(self.ids)}"
            if isinstance(fn, AccumulateGrad):
                entry = named.get(id(fn.variable))
                if entry is None:
                    entry = (f"leaf{unnamed_leaves}", fn.variable)
                    unnamed_leaves += 1
                self.leaf_names[fn] = entry[0]
                self.forward[fn] = entry
            stack.extend(next_fn for next_fn, _ in reversed(fn.next_functions)
                         if next_fn is not None and next_fn not in self.ids)

    def _graph_json(self, grads):
        task = self.task
        nodes, edges = [], []
        for fn, node_id in self.ids.items():
            forward = self.forward.get(fn)
            nodes.append({
                "id": node_id, "name": fn.name(), "seq": _seq(fn), "kind": _kind(fn),
                "variable": self.leaf_names.get(fn),
                "saved": [{"name": name, "value": _saved_json(s), "freed": s._freed}
                          for name, s in _saved_entries(fn)],
                "dependencies": task.dependencies.get(fn, 0),
                "forward": None if forward is None else
                {"name": forward[0], "value": tensor_json(forward[1])},
            })
            for output, (next_fn, input_nr) in enumerate(fn.next_functions):
                if next_fn is not None:
                    edges.append({"from": node_id, "to": self.ids[next_fn], "output": output,
                                  "input_nr": input_nr})
        seeds = [tensor_json(g) for g in grads]
        return {"root": self.ids[task.graph_root], "seed": seeds[0] if seeds else None,
                "seeds": seeds, "nodes": nodes, "edges": edges}

    # --- running
    @property
    def done(self):
        return self._finished

    def step(self):
        """Run the next node; return its record (``None`` when the pass is over)."""
        if self._finished:
            return None
        task = self.task
        try:
            task.step()
        except BaseException as error:
            self.error = error
            self._finished = True
            if self._recorder.current is not None:
                self.records.append(self._recorder.finish(task, error))
            raise
        record = self._recorder.finish(task)
        self.records.append(record)
        if task.done():
            self._finish()
        return record

    def __iter__(self):
        while not self._finished:
            yield self.step()

    def run(self):
        """Run to the end; return the records of the steps it ran."""
        start = len(self.records)
        with cyclic_gc_paused():  # as backward() does: the graph and the records hold no cycles
            for _ in self:
                pass
        return self.records[start:]

    def _finish(self):
        from . import _accumulate_into_inputs

        self._finished = True
        self.result = self.task.captured
        if self.accumulate_grad and self.inputs is not None:
            _accumulate_into_inputs(self.inputs, self.result)

    # --- reading
    def leaf_grads(self):
        """``{leaf name: .grad}`` for every leaf of the graph, as JSON."""
        return {name: tensor_json(fn.variable._grad) for fn, name in self.leaf_names.items()}

    def to_dict(self):
        site = self.call_site or {}
        return {"call": site.get("call"), "line": site.get("line"),
                "mode": self.mode, "graph": self.graph, "steps": self.records,
                "grads": self.leaf_grads(),
                "result": None if self.inputs is None or self.accumulate_grad or self.result is None
                else [tensor_json(g) for g in self.result],
                "error": None if self.error is None else error_json(self.error)}

    def label(self, node_id):
        """``AccumulateGrad(w)``, ``MulBackward0``, ``GraphRoot``: how tables name a node."""
        node = self._nodes_by_id().get(node_id)
        if node is None:
            return "?"
        if node["kind"] == "accumulate":
            return f"AccumulateGrad({node['variable']})"
        return node["name"].replace("torch::autograd::", "")

    def _nodes_by_id(self):
        if not hasattr(self, "_node_index"):
            self._node_index = {node["id"]: node for node in self.graph["nodes"]}
        return self._node_index

    def describe(self, record):
        """One sentence about a step, for the lab's step panel."""
        who = self.label(record["node"])
        seq = "" if record["seq"] is None else f" (seq {record['seq']})"
        grads = [short_value(g) for g in record["grad_in"]]
        received = grads[0] if len(grads) == 1 else "(" + ", ".join(grads) + ")"
        text = f"popped {who}{seq} with gradient {received}"
        if "error" in record:
            return f"{text}: {record['error']['type']}: {record['error']['message']}"
        if record.get("skipped"):
            return f"{text}: captured for autograd.grad, not run"
        for leaf in record["leaf_grads"]:
            text += f", {leaf['leaf']}.grad is now {short_value(leaf['value'])}"
        sent = [f"{short_value(out['value'])} to {self.label(out['to'])}"
                for out in record["grads_out"]]
        if sent:
            text += ", sent " + " and ".join(sent)
        return text

    def table(self):
        """The steps as the seeds' pre-hook table: step, node, seq, gradient in, out, ready queue."""
        return steps_table(self)

    def __repr__(self):
        state = "done" if self._finished else f"{len(self.records)} steps run"
        return f"<Stepper mode={self.mode} nodes={len(self.ids)} {state}>"


def steps_table(stepper):
    rows = [("step", "node", "seq", "gradient in", "gradients out", "ready queue")]
    for record in stepper.records:
        grads_in = ", ".join(short_value(g) for g in record["grad_in"])
        if "error" in record:
            out = f"{record['error']['type']}"
        elif record.get("skipped"):
            out = "(captured)"
        elif record["leaf_grads"]:
            out = "; ".join(f"{leaf['leaf']}.grad = {short_value(leaf['value'])}"
                            for leaf in record["leaf_grads"])
        else:
            out = "; ".join(f"{short_value(o['value'])} -> {stepper.label(o['to'])}"
                            for o in record["grads_out"])
        ready = ", ".join(stepper.label(r["node"]) for r in record["ready"])
        if record["ready_total"] > len(record["ready"]):
            ready += f", ... ({record['ready_total']} in all)"
        seq = "MAX" if record["seq"] is None else str(record["seq"])
        rows.append((str(record["index"] + 1), stepper.label(record["node"]), seq, grads_in,
                     out, ready or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def stepper(outputs, grad_outputs=None, retain_graph=None, create_graph=False, inputs=None,
            mode="pytorch", names=None):
    """A ``Stepper`` for ``backward(outputs, grad_outputs, retain_graph, create_graph, inputs)``.

    ``mode``: "pytorch" (the engine's ready queue) or "topo" (micrograd's reversed topological
    order). ``names``: ``{tensor: "w"}`` for the leaves (and any other tensors) to show by name.
    """
    from . import _make_grads, _outputs_and_grads
    from ..tensor import Tensor

    outputs, grads = _outputs_and_grads(outputs, grad_outputs)
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    grads = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    return Stepper(outputs, grads, keep_graph=retain_graph, create_graph=create_graph,
                   inputs=inputs, mode=mode, names=names)


@contextlib.contextmanager
def watch_backward(mode="pytorch", names=None, before_run=None):
    """Record every ``backward()`` / ``autograd.grad()`` call made inside the block.

    Yields a list that receives one finished ``Stepper`` per call, in order; each has a
    ``call_site`` (``{"file", "line", "call"}`` of the user's line that called backward, or None).
    ``names``: a dict ``{tensor: name}``, or a callable ``names(frame) -> dict`` called at each
    pass with the user's frame (the CLI names tensors after the caller's variables). Errors are
    recorded on the stepper and raised as usual. ``before_run(stepper)``, if given, sees each pass
    before its first step (``gradwalk dot`` draws the graph there, saved tensors not yet freed).

        with watch_backward() as passes:
            y.backward()
        print(passes[0].table())
    """
    from .. import autograd

    passes = []
    original = autograd.run_backward

    def run_backward(outputs, grads, keep_graph, create_graph, inputs=None, accumulate_grad=True,
                     observer=None):
        if observer is not None:  # someone else watches this pass: let them
            return original(outputs, grads, keep_graph, create_graph, inputs, accumulate_grad,
                            observer)
        frame = user_frame()
        pass_names = names(frame) if callable(names) else names
        s = Stepper(outputs, grads, keep_graph=keep_graph, create_graph=create_graph,
                    inputs=inputs, accumulate_grad=accumulate_grad, mode=mode, names=pass_names)
        s.call_site = call_site(frame)
        passes.append(s)
        if before_run is not None:
            before_run(s)
        s.run()
        return s.result

    autograd.run_backward = run_backward
    try:
        yield passes
    finally:
        autograd.run_backward = original


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame():
    """The innermost frame outside gradwalk's own code: where the user called backward()."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
    return frame


def call_site(frame):
    if frame is None:
        return None
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return {"file": frame.f_code.co_filename, "line": frame.f_lineno, "call": code or None}
