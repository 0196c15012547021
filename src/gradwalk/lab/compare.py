"""Check a snippet against real PyTorch: the same snippet on both engines, side by side.

gradwalk runs it as the lab always does (``run_snippet``: the stepper records every node the
engine pops). PyTorch runs it through the same interpreter, under the same whitelist, with a
pre-hook on every node of its graph recording what the engine ran: the node's name, its
sequence number and the gradients it received. Each row pairs the n-th node of both engines;
every difference (name, sequence number, gradient, a missing step, leaf ``.grad``, errors) is
flagged.

    >>> result = compare("x = torch.tensor(2.0, requires_grad=True)\\ny = x * x\\ny.backward()")
    >>> result["same"], [r["torch"]["name"] for r in result["passes"][0]["rows"]]
    (True, ['MulBackward0', 'torch::autograd::AccumulateGrad'])

Sequence numbers are shown relative to where the snippet began, on both sides: a lab run starts
gradwalk's counter at 0 like a fresh Python process, or at ``sequence_start`` (the page's "New
forward pass"), which is subtracted again here; PyTorch's counter cannot be reset, so its
numbers are taken relative to its value when the snippet started.
Random numbers (``torch.randn``, ``torch.rand``) come from gradwalk's generator on both sides,
so that both engines differentiate the same values. Without ``torch`` installed the answer says
how to install it.
"""
import importlib.util
from itertools import zip_longest

import numpy as np

import gradwalk

from .interpreter import (AUTOGRAD_FUNCTIONS, F_FUNCTIONS, TORCH_DTYPES, TORCH_FUNCTIONS,
                          Interpreter, Namespace, _label, _Raised, error_json, parse, run_snippet)
from ..tracing.torch_runner import tensor_json
from .limits import DEFAULT_LIMITS, LimitError

TORCH_VERSION = "2.13.0"
INSTALL = f"pip install torch=={TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu"
UINT64_MAX = 2**64 - 1
RTOL, ATOL = 1e-5, 1e-6  # float32 kernels may round differently in the last bits
RANDOM = ("randn", "rand")


def torch_available():
    return importlib.util.find_spec("torch") is not None


# ---- the snippet on PyTorch ----------------------------------------------------------------

def _shared_random(torch, name):
    """``torch.randn``/``rand`` drawing from gradwalk's generator, as a torch tensor."""
    def draw(*size, dtype=None, requires_grad=False, **kwargs):
        values = getattr(gradwalk, name)(*size, **kwargs).numpy()
        out = torch.tensor(values, dtype=dtype if dtype is not None else torch.float32)
        return out.requires_grad_(requires_grad)
    return draw


def torch_namespaces():
    import torch
    import torch.nn.functional as functional

    def resolve(name):
        if name in RANDOM:
            return _shared_random(torch, name)
        return getattr(torch, name)

    autograd = Namespace("torch.autograd", AUTOGRAD_FUNCTIONS, lambda n: getattr(torch.autograd, n))
    return {"torch": Namespace("torch", TORCH_FUNCTIONS, resolve, TORCH_DTYPES, {"autograd": autograd}),
            "F": Namespace("torch.nn.functional", F_FUNCTIONS, lambda n: getattr(functional, n))}


def _torch_interpreter_class():
    import torch

    class TorchInterpreter(Interpreter):
        """The lab's interpreter with real PyTorch behind ``torch``; every node the snippet's
        tensors reach gets a pre-hook, and each backward call is one pass of recorded rows."""

        library = torch
        Tensor = torch.Tensor
        Node = torch.autograd.graph.Node
        namespaces = torch_namespaces()

        def __init__(self, source, limits=DEFAULT_LIMITS):
            super().__init__(source, "pytorch", limits)
            self.hooked = set()
            self.hook_handles = []  # removed when the run ends: see run()
            self.rows = None  # the current pass's rows while a backward call runs
            self.torch_passes = []
            self.seq_base = 0

        def run(self, tree):
            gradwalk.manual_seed(0)  # the shared random numbers start where gradwalk's do
            probe = torch.ones((), requires_grad=True) * 1  # this thread's counter, as of now
            self.seq_base = probe.grad_fn._sequence_nr() + 1
            try:
                return super().run(tree)
            finally:
                # A hook closes over this interpreter, which holds the snippet's tensors, which
                # hold their graph, which holds the hook: a cycle through PyTorch's C++ nodes
                # that Python's GC cannot see. Removing the hooks breaks it (issue 14: ~70
                # compares filled a worker's 1 GiB).
                for handle in self.hook_handles:
                    handle.remove()
                self.hook_handles.clear()
                self.hooked.clear()

        def produce(self, node, compute):
            value = super().produce(node, compute)
            for t in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(t, torch.Tensor) and t.device.type != "cpu":
                    # gradwalk has only the CPU; a meta tensor has no numbers to show
                    self.user_error(node, RuntimeError(
                        f"the lab runs PyTorch on the CPU only, not on device "
                        f"'{t.device.type}'"))
                if isinstance(t, torch.Tensor) and t.grad_fn is not None:
                    self.hook_graph(t.grad_fn)
            return value

        def hook_graph(self, root):
            """A pre-hook on every node reachable from ``root`` not hooked yet (iterative)."""
            stack = [root]
            while stack:
                fn = stack.pop()
                if fn is None or fn in self.hooked:
                    continue
                self.hooked.add(fn)
                self.hook_handles.append(
                    fn.register_prehook(lambda grads, fn=fn: self.record(fn, grads)))
                stack.extend(next_fn for next_fn, _ in fn.next_functions)

        def record(self, fn, grads):
            if self.rows is not None:
                seq = fn._sequence_nr()
                self.rows.append({"name": fn.name(),
                                  "seq": None if seq >= UINT64_MAX else seq - self.seq_base,
                                  "grad_in": [tensor_json(g) for g in grads]})

        def run_pass(self, node, call):
            if len(self.torch_passes) >= self.limits.passes:
                raise LimitError.at(node, f"passes are limited to {self.limits.passes}")
            self.rows = rows = []
            try:
                value, failure = call(), None
            except (MemoryError, RecursionError):
                raise  # limits, reported by run()
            except Exception as error:  # noqa: BLE001 - the snippet's error, as in the base class
                value, failure = None, error
            finally:
                self.rows = None
            # an error before the engine ran (a non-scalar output) is the snippet's, as in gradwalk
            started = failure is None or rows
            if started:
                self.torch_passes.append({
                    "call": _label(self.source, node, 200), "line": node.lineno, "rows": rows,
                    "grads": {name: tensor_json(t.grad) for name, t in self.leaves},
                    "error": None if failure is None else error_json(failure, node)})
            if failure is not None:
                raise _Raised(failure, node, in_pass=bool(started))
            return value

        def result(self, raised):
            error = None
            if raised is not None and not raised.in_pass:
                error = error_json(raised.error, raised.node)
            return {"passes": self.torch_passes, "error": error,
                    "leaves": {name: tensor_json(t.grad) for name, t in self.leaves}}

    return TorchInterpreter


def run_on_torch(source, limits=DEFAULT_LIMITS):
    TorchInterpreter = _torch_interpreter_class()
    return TorchInterpreter(source, limits).run(parse(source, limits))


# ---- side by side ---------------------------------------------------------------------------

def same_tensor(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
        return False
    x = np.array(a["data"], dtype=object)
    y = np.array(b["data"], dtype=object)
    finite_x = np.array([v for v in x.ravel() if not isinstance(v, str)], dtype=np.float64)
    finite_y = np.array([v for v in y.ravel() if not isinstance(v, str)], dtype=np.float64)
    strings_x = [(i, v) for i, v in enumerate(x.ravel()) if isinstance(v, str)]
    strings_y = [(i, v) for i, v in enumerate(y.ravel()) if isinstance(v, str)]
    return strings_x == strings_y and finite_x.shape == finite_y.shape and bool(
        np.allclose(finite_x, finite_y, rtol=RTOL, atol=ATOL))


def _differences(ours, theirs):
    if ours is None or theirs is None:
        return ["missing"]
    found = []
    if ours["name"] != theirs["name"]:
        found.append("name")
    if ours["seq"] != theirs["seq"]:
        found.append("seq")
    grads_ours, grads_theirs = ours["grad_in"], theirs["grad_in"]
    if len(grads_ours) != len(grads_theirs) or not all(
            same_tensor(a, b) for a, b in zip(grads_ours, grads_theirs)):
        found.append("grad")
    return found


def _errors(ours, theirs):
    def key(e):
        return None if e is None else (e["type"], e["message"])
    return {"gradwalk": ours, "torch": theirs, "differs": key(ours) != key(theirs)}


def side_by_side(ours, theirs, sequence_start=0):
    """Pair the gradwalk run (docs/lab-api.md) with the PyTorch one, row by row; gradwalk's
    sequence numbers less ``sequence_start`` (where that run's counter started)."""
    passes, count = [], 0
    for index, (a, b) in enumerate(zip_longest(ours["passes"], theirs["passes"])):
        steps = [{"name": s["name"],
                  "seq": None if s["seq"] is None else s["seq"] - sequence_start,
                  "grad_in": s["grad_in"]}
                 for s in (a["steps"] if a else []) if s["name"] != "GraphRoot"]
        rows = []
        for i, (mine, yours) in enumerate(zip_longest(steps, b["rows"] if b else [])):
            differs = _differences(mine, yours)
            count += bool(differs)
            rows.append({"step": i, "gradwalk": mine, "torch": yours, "differs": differs})
        grads_a, grads_b = (a or {}).get("grads") or {}, (b or {}).get("grads") or {}
        grads = []
        for name in dict.fromkeys([*grads_a, *grads_b]):
            differs = not same_tensor(grads_a.get(name), grads_b.get(name))
            count += differs
            grads.append({"name": name, "gradwalk": grads_a.get(name), "torch": grads_b.get(name),
                          "differs": differs})
        errors = _errors((a or {}).get("error"), (b or {}).get("error"))
        count += errors["differs"]
        source = a or b
        passes.append({"index": index, "call": source["call"], "line": source["line"], "rows": rows,
                       "grads": grads, "error": errors})
    error = _errors(ours["error"], theirs["error"])
    count += error["differs"]
    return passes, error, count


def compare(source, limits=DEFAULT_LIMITS, sequence_start=0):
    """Run ``source`` on gradwalk and on PyTorch; the JSON the "Check against PyTorch" panel
    shows. A snippet the lab refuses raises ``SnippetError`` (a 400, as for /api/run).
    ``sequence_start``: where gradwalk's counter starts (as for /api/run); the rows show
    sequence numbers relative to the snippet's start either way."""
    answer = {"available": torch_available(), "install": None, "torch_version": None,
              "gradwalk_version": gradwalk.__version__, "same": False, "differences": 0,
              "passes": [], "error": _errors(None, None)}
    if not answer["available"]:
        answer["install"] = INSTALL
        return answer
    import torch

    answer["torch_version"] = torch.__version__
    # SnippetError: the lab runs it on neither
    ours = run_snippet(source, "pytorch", limits, sequence_start)
    theirs = run_on_torch(source, limits)
    answer["passes"], answer["error"], answer["differences"] = side_by_side(
        ours, theirs, sequence_start)
    answer["same"] = answer["differences"] == 0
    return answer
