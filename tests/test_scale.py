"""Scale: long chains backpropagate without recursion, saved tensors are freed node by node, and a
graph is freed by reference counting alone (it holds no reference cycles)."""
import gc
import weakref

import numpy as np

import gradwalk

N = 100_000


def test_a_chain_of_100k_ops_backpropagates():
    x = gradwalk.tensor(1.0, dtype=gradwalk.float64, requires_grad=True)
    y = x
    for _ in range(N):
        y = y * 1.0000001
    y.backward()
    assert abs(x.grad.item() - 1.0000001 ** N) < 1e-9


def test_saved_tensors_are_freed_as_the_pass_goes():
    """Each ``sin`` saves its input; once that sin's node has run, the input is unreachable except
    through our weak reference, so it dies during the pass, not after it. Halfway through the
    pass, exactly the later half is gone."""
    x = gradwalk.tensor([0.5, 0.25], requires_grad=True)
    refs = []
    h = x
    for _ in range(2_000):
        h = h * 1.0
        refs.append(weakref.ref(h))  # saved by the sin below, then unreachable from Python
        h = h.sin()
    alive_halfway = []
    middle = refs[1_000]().grad_fn  # its sin has just run when it runs
    middle.register_prehook(lambda g: alive_halfway.append([r() is not None for r in refs]))
    del middle
    h.sum().backward()
    assert alive_halfway == [[True] * 1_000 + [False] * 1_000]
    assert all(r() is None for r in refs)


def test_saved_arrays_are_released_during_backward_memory_stays_flat():
    """tracemalloc's view: backward never holds a second copy of the graph's values; afterwards
    the saved arrays are gone (the nodes stay while ``y`` is alive), and dropping ``y`` frees
    everything."""
    import tracemalloc

    tracemalloc.start()
    try:
        x = gradwalk.tensor(np.ones(64), requires_grad=True)
        base = tracemalloc.get_traced_memory()[0]
        y = x
        for _ in range(5_000):
            y = (y * 1.0).sin()
        graph = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.reset_peak()
        y.sum().backward()
        after, peak = (m - base for m in tracemalloc.get_traced_memory())
        del y
        freed = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert peak < graph * 1.2
    assert after < graph * 0.8  # the 10,000 saved 64-element arrays were released
    assert freed < graph / 20  # x.grad, and small tuples CPython keeps on its free lists


def test_a_100k_node_graph_is_freed_by_refcounting_alone():
    gc.collect()
    gc.disable()
    try:
        x = gradwalk.tensor([1.0, 2.0], requires_grad=True)
        y = x
        for _ in range(N // 2):
            y = (y * 1.0).tanh()
        last_node = weakref.ref(y.grad_fn)
        first_node = weakref.ref(y.grad_fn.next_functions[0][0])
        del y
        assert last_node() is None and first_node() is None
        z = x.exp() * x
        node = weakref.ref(z.grad_fn)
        z.sum().backward()
        del z
        assert node() is None
    finally:
        gc.enable()


def test_graph_after_backward_holds_no_cycles():
    gc.collect()
    gc.disable()
    try:
        x = gradwalk.tensor([1.0, 2.0], requires_grad=True)
        y = x
        for _ in range(1_000):
            y = y.sigmoid() * 2.0 + y
        y.sum().backward()
        tail = weakref.ref(y.grad_fn)
        del y
        assert tail() is None
        assert x.grad is not None
    finally:
        gc.enable()


def test_deep_create_graph_and_autograd_grad_do_not_recurse():
    x = gradwalk.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0
    (g,) = gradwalk.autograd.grad(y, x, create_graph=True)
    assert g.item() == 1.0


def test_a_recorded_op_leaves_few_objects_for_the_cyclic_gc():
    """Issue 5: Python's cyclic GC rescans every live tracked object, so each recorded op should
    leave as few as it can: the output tensor, its node and the node's edges (plus the saved
    dict when it saves an input). NumPy scalars, version counters (int64 arrays) and saved
    outputs (tuples of untracked values) are not tracked."""
    x = gradwalk.tensor(0.5, requires_grad=True)
    c = gradwalk.tensor(0.999)
    gc.collect()
    before = len(gc.get_objects())
    h = x
    for i in range(3000):
        h = h * c if i % 3 == 0 else (h + c if i % 3 == 1 else h.tanh())
    gc.collect()  # untracks the tuples whose contents are all untracked
    per_op = (len(gc.get_objects()) - before) / 3000
    assert per_op <= 3.4, per_op
    h.backward()
    assert x.grad is not None
