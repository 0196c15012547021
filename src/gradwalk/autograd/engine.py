"""The backward engine: PyTorch's ``Engine::execute`` in readable, iterative Python.

    task = GraphTask(roots, grads, keep_graph=False, create_graph=False)
    task.run()            # or task.step() to run one node at a time (the stepper does this)

The algorithm, as in ``torch/csrc/autograd/engine.cpp``:

1. ``compute_dependencies``: walk the graph from the root and count, for every node, how many
   edges point at it. A node may run only when that many gradients have arrived.
2. Put the root, with its input buffer holding the seed gradient, on the ready queue.
3. Pop the task with the highest sequence number (AccumulateGrad has 2**64-1, so a leaf's
   gradient is written as soon as it is complete) and ``evaluate_function`` it: hooks, the node's
   formula, ``validate_outputs`` (sum broadcast gradients down to each input's shape, cast the
   dtype), post-hooks, ``release_variables`` (unless ``retain_graph``), and then, for each output,
   decrement the next node's count and add the gradient into its input buffer; a node whose count
   reaches zero is pushed on the queue with its finished buffer.
4. Stop when the queue is empty.

No recursion anywhere, so a 100,000-node chain is fine.
"""
import gc
from sys import getrefcount as _getrefcount
from heapq import heappop as _heappop, heappush as _heappush
import warnings

import numpy as np

from .._dtype import _BY_NUMPY
from ..grad_mode import _state as _grad_state
from ..ops.core import observers as _observers
from ..ops.cascade_sum import cascade_sum as _cascade_sum, sum_rows as _sum_rows
from .anomaly_mode import _anomaly
from .node import AccumulateGrad, GraphRoot, UINT64_MAX, _tensor_class, accumulate_into_grad

# The node being run (``torch._C._current_autograd_node()``: PyTorch's thread-local current
# evaluating node): set as each node is popped, put back to what it was when a pass ends, so a
# hook, an unpack hook or a custom backward sees its own node, and code outside backward None.
_current_node = None


class _Task(float):
    """A ready-queue entry: a float equal to minus its node's sequence number (heapq is a
    min-heap), carrying the node and its input buffer. The C heap then compares plain floats,
    and equal sequence numbers (every AccumulateGrad has 2**64-1) compare equal, as in C++."""

    __slots__ = ("fn", "buffer")


class StdPriorityQueue:
    """``std::priority_queue`` as libstdc++ implements it (a binary max-heap, not stable), so
    that ties between equal sequence numbers break exactly as in PyTorch. Entries go in and come
    out as ``(sequence_nr, node, buffer)``.

    CPython's ``heapq`` runs the same algorithm as libstdc++'s ``push_heap``/``pop_heap`` (pop:
    the last element replaces the top, the hole walks down to a leaf taking the right child
    unless the left one is strictly greater, then sifts back up; push: sift up while strictly
    greater), mirrored as a min-heap on minus the sequence number; ``tests/test_engine_order.py``
    checks both against each other."""

    __slots__ = ("c",)

    def __init__(self):
        self.c = []

    def __len__(self):
        return len(self.c)

    def push(self, entry):
        seq, fn, buffer = entry
        task = _Task(-seq)
        task.fn = fn
        task.buffer = buffer
        _heappush(self.c, task)

    def pop(self):
        task = _heappop(self.c)
        return (-int(task) if task > -_UINT64_FLOAT else UINT64_MAX, task.fn, task.buffer)

    def top_node(self):
        """The node the next ``pop`` returns."""
        return self.c[0].fn

    def clear(self):
        self.c.clear()

    def in_pop_order(self):
        """The queued entries in the order they would be popped (for display)."""
        copy = StdPriorityQueue()
        copy.c = list(self.c)
        return [copy.pop() for _ in range(len(copy.c))]


_UINT64_FLOAT = float(UINT64_MAX)


def _watched():
    """A profiler or anomaly mode wants every node through ``evaluate_function``."""
    return hooks.evaluate_function is not None or _anomaly.enabled


def _push_task(queue, node_and_buffer):
    fn, buffer = node_and_buffer
    task = _Task(-fn._sequence_nr_value)
    task.fn = fn
    task.buffer = buffer
    _heappush(queue, task)


def compute_dependencies(root):
    """Count incoming edges per node (edges, not distinct parents: ``x*x`` gives Acc(x) two)."""
    dependencies = {}
    stack = [root]
    get = dependencies.get
    while stack:
        for next_fn in stack.pop()._edges[::2]:
            if next_fn is None:
                continue
            count = get(next_fn)
            if count is None:  # first seen: walk on from it (a DAG, so never back to the root)
                dependencies[next_fn] = 1
                stack.append(next_fn)
            else:
                dependencies[next_fn] = count + 1
    return dependencies


def _should_execute_map(root, targets):
    """exec_info: the nodes that lie on a path from ``root`` to any node in ``targets``.
    Iterative post-order walk; a node is needed when one of its children is."""
    needed = {}
    stack = [(root, 0)]
    visiting = {root}
    while stack:
        fn, i = stack[-1]
        nexts = fn.next_functions
        if i < len(nexts):
            stack[-1] = (fn, i + 1)
            child = nexts[i][0]
            if child is not None and child not in needed and child not in visiting:
                visiting.add(child)
                stack.append((child, 0))
            continue
        stack.pop()
        needed[fn] = fn in targets or any(
            c is not None and needed.get(c, False) for c, _ in nexts)
    return needed


def _call_tensor_hook(hook, grad):
    new = hook(grad)
    if new is None:
        return grad
    from ..tensor import Tensor

    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if grad is not None and new.shape != grad.shape:
        name = getattr(hook, "__name__", repr(hook))
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new


def call_tensor_pre_hooks(fn, inputs):
    """Tensor hooks (``t.register_hook``) and then retain_grad, for every input slot."""
    if isinstance(fn, AccumulateGrad):
        hooks = fn.variable._backward_hooks
        if hooks:
            g = inputs[0]
            for hook in list(hooks.values()):
                g = _call_tensor_hook(hook, g)
            inputs[0] = g
        return inputs
    if fn._tensor_pre_hooks:
        for slot, hooks in fn._tensor_pre_hooks.items():
            g = inputs[slot]
            for hook in list(hooks.values()):
                g = _call_tensor_hook(hook, g)
            inputs[slot] = g
    if fn._retains_grad_hooks:
        for slot, ref in fn._retains_grad_hooks.items():
            t = ref()
            g = inputs[slot]
            if t is None or g is None:
                continue
            if t._grad is None:
                # retain_grad stores a copy, so later in-place accumulation can't touch the buffer
                t._grad = g if _grad_state.grad_enabled else type(g)._make(g._data.copy())
            else:
                t._grad = t._grad + g
    return inputs


def _call_pre_hooks(fn, inputs):
    for hook in list(fn._pre_hooks.values()):
        result = hook(tuple(inputs))
        if result is None:
            continue
        if not isinstance(result, tuple):
            raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
        inputs = list(result)
    return inputs


def _call_post_hooks(fn, outputs, inputs):
    for hook in list(fn._post_hooks.values()):
        result = hook(tuple(outputs), tuple(inputs))
        if result is None:
            continue
        if not isinstance(result, tuple):
            raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
        for old, new in zip(outputs, result):
            if old is None and new is not None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
        outputs = list(result)
    return outputs


_Tensor = None  # set once gradwalk.tensor has been imported (the modules import each other)


def validate_outputs(fn, outputs):
    """Check the count, then sum broadcast gradients to each input's shape and cast dtypes."""
    edges = fn._edges
    if 2 * len(outputs) != len(edges):
        raise RuntimeError(
            f"function {fn.name()} returned an incorrect number of gradients (expected "
            f"{len(edges) // 2}, got {len(outputs)})")
    Tensor = _Tensor or _tensor_class()
    for i, grad in enumerate(outputs):
        if grad is None:
            continue
        next_fn, input_nr = edges[2 * i], edges[2 * i + 1]
        if next_fn is None:
            outputs[i] = None  # a gradient for an input that doesn't require grad is dropped
            continue
        if not isinstance(grad, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
        shape, dtype = next_fn._input_metadata[input_nr]
        data = grad._data
        if data.dtype is not dtype or data.shape != shape:
            outputs[i] = _validate_one(fn, i, grad, shape, dtype)
    return outputs


def _validate_one(fn, i, grad, shape, dtype):
    """One gradient that is not already its input's shape and (NumPy) dtype: sum a broadcast
    gradient down to the shape, cast the dtype."""
    data = grad._data
    if data.shape != shape:
        if (data.ndim == 2 and len(shape) == 1 and data.shape[1] == shape[0] and shape[0] != 1
                and data.dtype is dtype and data.dtype.char in "fd" and data.flags.c_contiguous
                and not _grad_state.grad_enabled and not _observers.any):
            # a bias's gradient (batch, n) -> (n), the common case of the lines below: its rows
            # summed in PyTorch's order
            return _Tensor._make(_sum_rows(data))
        if not _is_expandable_to(shape, data.shape):
            raise RuntimeError(
                f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}")
        if not _grad_state.grad_enabled and not _observers.any and data.dtype.kind == "f" and shape:
            grad = _Tensor._make(_sum_to(data, shape))  # nothing records or watches: on the arrays
        else:
            grad = grad.sum_to_size(shape)
    if dtype is None:  # a leaf whose grad_dtype is None takes any dtype
        return grad
    np_dtype = dtype if isinstance(dtype, np.dtype) else dtype.np  # NumPy's or ours
    if grad._data.dtype is not np_dtype and grad._data.dtype != np_dtype:
        grad = grad.to(_BY_NUMPY[np_dtype])
    return grad




def _sum_to(data, shape):
    """``at::sum_to`` on an array: sum the leading dims and the dims ``shape`` has as 1, adding
    in PyTorch's order (ops/cascade_sum.py), so a bias's gradient has PyTorch's bits."""
    lead = data.ndim - len(shape)
    if data.shape[lead:] == shape:  # only leading dims (a bias's gradient): nothing to reshape
        return _cascade_sum(data, 0) if lead == 1 else _cascade_sum(data, tuple(range(lead)))
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and data.shape[lead + i] != 1)
    summed = _cascade_sum(data, dims, keepdims=True) if dims else data
    return summed.reshape(shape) if lead else summed


def _is_expandable_to(shape, desired):
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def _add_to_buffer(buffer, slot, grad):
    """InputBuffer::accumulate: the first gradient is moved in; later ones are summed, left fold."""
    if grad is None:
        return
    old = buffer[slot]
    if old is None:
        buffer[slot] = grad
    elif _grad_state.grad_enabled or _observers.any:
        buffer[slot] = old + grad  # create_graph (or a profiler watching): a recorded add
    else:
        # both already have the input's shape and dtype (validate_outputs); a new tensor, so a
        # hook that kept ``old`` never sees it change
        buffer[slot] = _Tensor._make(old._data + grad._data)


class EngineHooks:
    """Watchers of every GraphTask, None when nobody watches: ``evaluate_function`` is a
    callable(node) returning a context manager around the node's evaluation (the profiler)."""

    evaluate_function = None


hooks = EngineHooks


class cyclic_gc_paused:
    """Pause Python's cyclic garbage collector for a backward pass: ``with cyclic_gc_paused():``.

    The graph holds no reference cycles, so reference counting frees every node and buffer the
    moment it is done; the cyclic collector would only rescan the (large) live graph again and
    again while the pass allocates. A C++ engine never pays that; we pause it for the pass, and it
    resumes (collecting anything a user hook left behind) right after. (A class, not a
    ``contextlib`` generator: it runs once per ``backward()``, and this is several times cheaper.)
    """

    __slots__ = ("was_enabled",)

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        if self.was_enabled:
            gc.disable()

    def __exit__(self, *exc_info):
        if self.was_enabled:
            gc.enable()


class GraphTask:
    """One call of ``backward()`` / ``autograd.grad()``: the state the engine works through."""

    def __init__(self, roots, grads, keep_graph=False, create_graph=False,
                 accumulate_grad=True, inputs=None, observer=None):
        """``roots``: edges ``(node, input_nr)`` of the outputs; ``grads``: their seed gradients;
        ``inputs``: edges to capture (``autograd.grad``) or to restrict accumulation to
        (``backward(inputs=...)``)."""
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.accumulate_grad = accumulate_grad
        self.observer = observer
        self.user_grads = {id(g) for g in grads if g is not None}
        if len(roots) == 1:
            self.graph_root = roots[0][0]
            buffer = [None] * len(self.graph_root._input_metadata or [None])
            slot = roots[0][1]
            if slot >= len(buffer):
                buffer.extend([None] * (slot + 1 - len(buffer)))
            buffer[slot] = grads[0]
        else:
            self.graph_root = GraphRoot(roots, grads)
            buffer = []
        self.dependencies = compute_dependencies(self.graph_root)
        self.not_ready = {}  # node -> input buffer still waiting for gradients
        self.captures = None  # node -> [(slot, index into captured)]
        self.captured = []
        self.exec_info = None  # node -> bool (should run); None: run everything
        if inputs is not None:
            self._init_exec_info(inputs)
        # no observer and no inputs= (so no exec_info or captures): _step's fast path may run
        self.plain = observer is None and inputs is None
        self.queue = StdPriorityQueue()
        self.queue.push((_priority(self.graph_root), self.graph_root, buffer))
        self.steps_done = 0

    def _init_exec_info(self, inputs):
        self.captured = [None] * len(inputs)
        targets = set()
        self.captures = {}
        for index, (node, slot) in enumerate(inputs):
            if node is None:
                continue
            if self.accumulate_grad and isinstance(node, AccumulateGrad):
                targets.add(node)  # backward(inputs=[leaf]): run only that leaf's accumulation
            else:
                self.captures.setdefault(node, []).append((slot, index))
                targets.add(node)
        needed = _should_execute_map(self.graph_root, targets)
        self.exec_info = {}
        for node, is_needed in needed.items():
            # backward(inputs=[h]) with h a non-leaf runs h's node itself, hooks and all, as
            # PyTorch's engine marks it needed (h.retain_grad() collects the gradient); grad()
            # only captures what flows into it
            runs_itself = is_needed and (node not in self.captures or self.accumulate_grad or any(
                c is not None and needed.get(c, False) for c, _ in node.next_functions))
            if isinstance(node, AccumulateGrad):
                runs_itself = node in targets and self.accumulate_grad
            self.exec_info[node] = (is_needed, runs_itself)

    # ------------------------------------------------------------------ running
    def run(self):
        global _current_node
        prev = _grad_state.grad_enabled
        prev_node = _current_node  # (a reentrant backward runs inside a node of an outer pass)
        _grad_state.grad_enabled = self.create_graph  # formulas record only with create_graph
        try:
            with cyclic_gc_paused():
                if self.plain:
                    self._run_plain()
                else:
                    while self.queue.c:
                        self._step()
        finally:
            _grad_state.grad_enabled = prev
            _current_node = prev_node
        return self.captured

    def _run_plain(self):
        """``run`` for a plain task (no observer, no ``inputs=``): ``_step``'s common paths in one
        loop. An op node or an AccumulateGrad without hooks runs here; any other node, and every
        node while a profiler or anomaly mode watches, goes through ``_step``."""
        global _current_node
        queue = self.queue.c
        release = not self.keep_graph
        send = self._send_plain
        steps = 0
        held = None  # (node, buffer): the one task a send made ready while the heap was empty
        watched = _watched()
        try:
            while held is not None or queue:
                if held is not None:  # what the heap would pop next, without the heap
                    fn, buffer = held
                    held = None
                else:
                    task = _heappop(queue)
                    fn, buffer = task.fn, task.buffer
                _current_node = fn
                formula = fn._formula  # an op node's (None for AccumulateGrad and the others)
                if fn._hooked or watched:
                    self._run_task(fn, buffer)
                    watched = _watched()  # (user code ran: it may have started a profiler)
                elif formula is not None and buffer[0] is not None:
                    outputs = formula(fn, *buffer)
                    if fn._post_hooks:  # registered while it ran (by an unpack hook, say)
                        outputs = _call_post_hooks(fn, list(outputs), [None] * len(buffer))
                    if release and fn._saved:  # (an op node that saved nothing has nothing to free)
                        fn.release_variables()
                    held = send(fn, outputs, True)
                    outputs = None  # (an AccumulateGrad counts the references to its gradient)
                elif type(fn) is AccumulateGrad and not fn.variable._backward_hooks and self.accumulate_grad:
                    grad = buffer[0]
                    if grad is not None and id(grad) in self.user_grads:
                        grad = type(grad)._make(grad._data.copy())  # never alias the user's tensor
                    # its buffer may become .grad when only the task's buffer, this name and
                    # getrefcount's argument refer to it
                    steal = _getrefcount(grad) <= 3
                    accumulate_into_grad(fn.variable, grad, steal)
                    grad = None
                    watched = _watched()  # (a post-accumulate-grad hook may have run)
                else:
                    self._run_task(fn, buffer)
                    watched = _watched()
                steps += 1
        except BaseException:
            steps += 1  # the node that failed counts, as in _step
            queue.clear()  # on error the remaining tasks are dropped, not run
            self.not_ready.clear()
            raise
        finally:
            self.steps_done += steps

    def step(self):
        """Run exactly one node (the one the ready queue pops); the stepper calls this."""
        global _current_node
        prev = _grad_state.grad_enabled
        prev_node = _current_node
        _grad_state.grad_enabled = self.create_graph
        try:
            self._step()
        finally:
            _grad_state.grad_enabled = prev
            _current_node = prev_node

    def done(self):
        return not self.queue.c

    def _step(self):
        global _current_node
        task = _heappop(self.queue.c)
        _current_node = task.fn
        try:
            self._run_task(task.fn, task.buffer)
        finally:
            self.steps_done += 1

    def _run_task(self, fn, buffer):
        """Evaluate one popped node with its input buffer."""
        try:
            if hooks.evaluate_function is None:
                if self.plain and not fn._hooked and type(fn) is not AccumulateGrad and not _anomaly.enabled:
                    # the common node (no hooks, nobody watching, nothing to capture):
                    # evaluate_function and call_function reduced to what they would do
                    if fn._formula is not None:  # our own formulas give tensors or None
                        outputs = fn._formula(fn, *buffer) if _any_defined(buffer) else _undefined(fn)
                    else:
                        outputs = validate_outputs(fn, list(fn.apply(buffer)))
                    if fn._post_hooks:  # registered while it ran (by an unpack hook, say)
                        outputs = _call_post_hooks(fn, list(outputs), [None] * len(buffer))
                    if not self.keep_graph:
                        fn.release_variables()
                    self._send_plain(fn, outputs)
                    return
                self.evaluate_function(fn, buffer)
            else:  # the profiler: "autograd::engine::evaluate_function: <name>" around the node
                with hooks.evaluate_function(fn):
                    self.evaluate_function(fn, buffer)
        except BaseException:
            self.queue.c.clear()  # on error the remaining tasks are dropped, not run
            self.not_ready.clear()
            raise

    def evaluate_function(self, fn, inputs, watched=False):
        if _anomaly.enabled and not watched:
            # anomaly mode runs this again, watched: fn is noted as the running node (the parent
            # of any node made meanwhile), outputs are checked for NaN, an error warns
            return _anomaly.evaluate(self, fn, inputs)
        observer = self.observer
        if observer is not None:
            observer.on_pop(self, fn, inputs)
        if self.exec_info is not None:
            is_needed, runs_itself = self.exec_info.get(fn, (False, False))
            if not runs_itself:
                inputs = call_tensor_pre_hooks(fn, list(inputs))
                self._capture(fn, inputs)
                if observer is not None:
                    observer.on_skip(self, fn, inputs)
                return
        outputs = self.call_function(fn, inputs)
        if not self.keep_graph:
            fn.release_variables()
            if observer is not None:
                observer.on_release(self, fn)
        if watched and _anomaly.check_nan:
            for i, out in enumerate(outputs):
                if out is not None and np.isnan(out._data).any():
                    raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")
        self._send(fn, outputs)

    def call_function(self, fn, inputs):
        if type(fn) is AccumulateGrad:
            if fn.variable._backward_hooks:
                inputs = call_tensor_pre_hooks(fn, inputs)
        elif fn._tensor_pre_hooks or fn._retains_grad_hooks:
            inputs = call_tensor_pre_hooks(fn, inputs)
        if self.captures is not None and fn in self.captures:
            self._capture(fn, inputs)
        if fn._pre_hooks:
            inputs = _call_pre_hooks(fn, inputs)
        had_post_hooks = bool(fn._post_hooks)
        if type(fn) is AccumulateGrad:
            if not self.accumulate_grad:
                return []
            if inputs and inputs[0] is not None and id(inputs[0]) in self.user_grads:
                inputs[0] = type(inputs[0])._make(inputs[0]._data.copy())  # never alias the user's tensor
            outputs = fn.apply(inputs)
            if self.observer is not None:
                self.observer.on_accumulate(self, fn)
        else:
            outputs = fn.apply(inputs)
            outputs = validate_outputs(fn, list(outputs))
        if fn._post_hooks:  # one registered while fn ran sees no inputs (PyTorch moved them)
            outputs = _call_post_hooks(fn, outputs, inputs if had_post_hooks else [None] * len(inputs))
        if self.observer is not None:
            self.observer.on_outputs(self, fn, inputs, outputs)
        return outputs

    def _capture(self, fn, inputs):
        if self.captures is None:
            return
        for slot, index in self.captures.get(fn, ()):
            self.captured[index] = inputs[slot] if slot < len(inputs) else None

    def _send_plain(self, fn, outputs, may_hold=False):
        """``_send`` for a plain task (no observer, no ``inputs=``), with ``validate_outputs``'s
        checks done on the way: most gradients already have their input's shape and dtype.

        ``may_hold``: when the heap is empty and this send makes just one node ready, hand that
        task back instead of pushing it (the heap would pop it next anyway: a chain then never
        touches the heap). A second ready node pushes the held one first, so the heap's layout,
        and with it the order of ties, is what pushing each would have made."""
        held = None
        edges = fn._edges
        if 2 * len(outputs) != len(edges):
            outputs = validate_outputs(fn, list(outputs))  # raises the count error
        dependencies = self.dependencies
        not_ready = self.not_ready
        for j in range(0, len(edges), 2):
            next_fn = edges[j]
            if next_fn is None:
                continue
            input_nr = edges[j + 1]
            grad = outputs[j >> 1]
            if grad is not None:
                shape, dtype = next_fn._input_metadata[input_nr]
                data = grad._data
                if data.dtype is not dtype or data.shape != shape:
                    grad = _validate_one(fn, j >> 1, grad, shape, dtype)
            remaining = dependencies[next_fn] - 1
            if remaining:
                dependencies[next_fn] = remaining
                buffer = not_ready.get(next_fn)
                if buffer is None:
                    buffer = not_ready[next_fn] = [None] * len(next_fn._input_metadata)
                    buffer[input_nr] = grad  # the first gradient is moved in as it is
                elif grad is not None:  # _add_to_buffer, spelled out: it runs once per extra edge
                    old = buffer[input_nr]
                    if old is None:
                        buffer[input_nr] = grad
                    elif not _grad_state.grad_enabled and not _observers.any:  # on the arrays (see _add_to_buffer)
                        if _getrefcount(old) <= 3:  # the buffer's own sum (buffer, old, argument):
                            old._data = old._data + grad._data  # accumulate into it, as PyTorch does
                        else:
                            buffer[input_nr] = _Tensor._make(old._data + grad._data)
                    else:
                        buffer[input_nr] = old + grad
                    old = None
                continue
            del dependencies[next_fn]
            buffer = not_ready.pop(next_fn, None) if not_ready else None
            if buffer is None:  # this was the next node's only gradient: queue it at once
                if len(next_fn._input_metadata) == 1:
                    buffer = [grad]
                else:
                    buffer = [None] * len(next_fn._input_metadata)
                    buffer[input_nr] = grad
            else:
                _add_to_buffer(buffer, input_nr, grad)
            queue = self.queue.c
            if may_hold and not queue and held is None:
                held = (next_fn, buffer)
                continue
            if held is not None:
                _push_task(queue, held)
                held = None
                may_hold = False
            task = _Task(-next_fn._sequence_nr_value)
            task.fn = next_fn
            task.buffer = buffer
            _heappush(queue, task)
        return held

    def _send(self, fn, outputs):
        dependencies = self.dependencies
        not_ready = self.not_ready
        exec_info = self.exec_info
        observer = self.observer
        edges = fn._edges
        for i in range(len(edges) // 2):
            next_fn = edges[2 * i]
            if next_fn is None:
                continue
            input_nr = edges[2 * i + 1]
            grad = outputs[i] if i < len(outputs) else None
            remaining = dependencies[next_fn] - 1
            if remaining == 0:
                del dependencies[next_fn]
            else:
                dependencies[next_fn] = remaining
            buffer = not_ready.get(next_fn)
            if buffer is None:
                if exec_info is not None and not exec_info.get(next_fn, (False, False))[0]:
                    continue  # not on a path to a requested input
                buffer = [None] * len(next_fn._input_metadata)
                buffer[input_nr] = grad  # the first gradient is moved in as it is
                if remaining == 0:
                    self.queue.push((next_fn._sequence_nr_value, next_fn, buffer))
                else:
                    not_ready[next_fn] = buffer
            else:
                _add_to_buffer(buffer, input_nr, grad)
                if remaining == 0:
                    del not_ready[next_fn]
                    self.queue.push((next_fn._sequence_nr_value, next_fn, buffer))
            if observer is not None:
                observer.on_send(self, fn, i, next_fn, input_nr, grad, remaining)


def _any_defined(grads):
    for g in grads:
        if g is not None:
            return True
    return False


def _undefined(fn):
    """What a built-in node gives when none of its gradients is defined (a custom backward
    returned None into it): no gradient on any edge, as PyTorch's generated nodes
    (``any_grad_defined``) give, without running the formula."""
    return (None,) * (len(fn._edges) // 2)


def _priority(fn):
    return fn._sequence_nr_value


__all__ = ["GraphTask", "StdPriorityQueue", "compute_dependencies", "UINT64_MAX", "warnings"]
