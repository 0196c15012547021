"""micrograd's engine, run on gradwalk's graph: sort the nodes topologically, walk the list backwards.

The seeds' 40-line engine is

    def backward(self):
        topo, seen = [], set()
        def build(v):                  # depth-first: children first, then v
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):       # every consumer of v comes before v
            v._backward()

``TopoGraphTask`` is that loop on the *same* nodes as PyTorch's engine: it reuses
``GraphTask.evaluate_function`` (hooks, the node's formula, ``validate_outputs``, release of saved
tensors, anomaly checks) and the same input buffers, so the gradients are the same. Only the
order differs: there is no ready queue and no sequence number decides anything; a node runs when
its turn in the list comes, and the topological order guarantees that every gradient for it has
arrived by then. ``build`` is written with an explicit stack, so a 100,000-node chain does not hit
Python's recursion limit. The dependency counts are still decremented, only so a learner can see
that each one has reached 0 when its node's turn comes.
"""
from .engine import GraphTask, cyclic_gc_paused, _add_to_buffer, hooks


def topological_order(root):
    """micrograd's ``build(root)``, iterative: a node is appended after all of its children
    (``next_functions``, in edge order), each node once."""
    order = []
    seen = {root}
    stack = [(root, 0)]  # (node, index of the next child to visit)
    while stack:
        fn, i = stack[-1]
        nexts = fn.next_functions
        if i < len(nexts):
            stack[-1] = (fn, i + 1)
            child = nexts[i][0]
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, 0))
            continue
        stack.pop()
        order.append(fn)
    return order


class TopoGraphTask(GraphTask):
    """One backward pass in micrograd's order: ``for node in reversed(topological_order(root))``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _, root, seed_buffer = self.queue.pop()  # GraphTask queued the root with its seed
        self.not_ready[root] = seed_buffer
        order = topological_order(root)
        order.reverse()
        if self.exec_info is not None:  # autograd.grad: leave out what leads to no requested input
            order = [fn for fn in order if self.exec_info.get(fn, (False, False))[0]]
        self.order = order
        self.position = 0  # order[position] runs next

    def done(self):
        return self.position >= len(self.order)

    def upcoming(self, limit=None):
        """The nodes still to run, in order (what the stepper shows as the 'ready' list)."""
        end = len(self.order) if limit is None else min(len(self.order), self.position + limit)
        return self.order[self.position:end]

    def run(self):
        with cyclic_gc_paused():
            while not self.done():
                self.step()
        return self.captured

    def _step(self):
        fn = self.order[self.position]
        self.position += 1
        buffer = self.not_ready.pop(fn, None)
        if buffer is None:  # no gradient reached it (every edge into it carried None)
            buffer = [None] * len(fn._input_metadata)
        try:
            if hooks.evaluate_function is None:
                self.evaluate_function(fn, buffer)
            else:  # the profiler, as in GraphTask._step
                with hooks.evaluate_function(fn):
                    self.evaluate_function(fn, buffer)
        except BaseException:
            self.position = len(self.order)  # as in PyTorch: after an error nothing else runs
            self.not_ready.clear()
            raise
        finally:
            self.steps_done += 1

    def _send(self, fn, outputs):
        """``child.grad += grad``: add each output into the next node's buffer; nothing is queued."""
        dependencies = self.dependencies
        observer = self.observer
        for i, (next_fn, input_nr) in enumerate(fn.next_functions):
            if next_fn is None:
                continue
            grad = outputs[i] if i < len(outputs) else None
            remaining = dependencies[next_fn] - 1
            if remaining == 0:
                del dependencies[next_fn]
            else:
                dependencies[next_fn] = remaining
            if self.exec_info is not None and not self.exec_info.get(next_fn, (False, False))[0]:
                continue
            buffer = self.not_ready.get(next_fn)
            if buffer is None:
                buffer = self.not_ready[next_fn] = [None] * len(next_fn._input_metadata)
            _add_to_buffer(buffer, input_nr, grad)
            if observer is not None:
                observer.on_send(self, fn, i, next_fn, input_nr, grad, remaining)
