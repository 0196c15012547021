"""The engine's order and bookkeeping, side by side with PyTorch (facts §2-§4, §6): sequence
numbers, the ready queue's tie-breaking, multi-root backward through a GraphRoot, input buffers,
``inputs=`` pruning, releasing saved tensors node by node."""
import math
import textwrap
import threading

import numpy as np
import pytest
import torch

import gradwalk
from parity import assert_same, assert_same_order, message, record_order, run_both


def both_orders(snippet, roots, leaves=(), backward="out.backward()"):
    """Hook every node under ``roots`` in both libraries, run ``backward``; return both orders."""
    orders = []
    for ns in run_both(snippet):
        order = record_order([ns[r] for r in roots], {n: ns[n] for n in leaves})
        exec(backward, ns)
        orders.append(order)
    return orders


@pytest.mark.parametrize("how, n, expected", [
    ("cat", 7, [0, 2, 5, 6, 4, 1, 3]),
    ("stack", 10, [0, 2, 6, 9, 8, 5, 7, 4, 1, 3]),
])
def test_equal_priority_leaves_pop_in_libstdcxx_heap_order(how, n, expected):
    """Facts §3.5: the accumulations all have priority 2**64-1; a max-heap (not FIFO) orders them."""
    leaves = [f"l{i}" for i in range(n)]
    setup = "".join(f"l{i} = torch.tensor([{i}.0], requires_grad=True)\n" for i in range(n))
    ours, theirs = both_orders(setup + f"out = torch.{how}([{', '.join(leaves)}]).sum()\n",
                               ["out"], leaves)
    assert_same_order(ours, theirs)
    assert [label for label, _ in ours[2:]] == [f"AccumulateGrad(l{i})" for i in expected]


def test_multi_root_backward_runs_a_graph_root_first():
    """Facts §3.3: the later-built branch runs first whatever the list order; Acc(x) fires once."""
    snippet = """
        x = torch.tensor([1., 2.], requires_grad=True)
        r1 = (x * 2).sum()
        r2 = (x * 3).sum()
    """
    for roots in ("[r1, r2]", "[r2, r1]"):
        ours, theirs = both_orders(snippet, ["r1", "r2"], "x",
                                   backward=f"torch.autograd.backward({roots})")
        assert_same_order(ours, theirs)
        assert [label for label, _ in ours] == [
            "SumBackward0", "MulBackward0", "SumBackward0", "MulBackward0", "AccumulateGrad(x)"]
        assert ours[-1][1] == ([5.0, 5.0],)


def test_graph_root_consumes_a_sequence_number():
    for ns in run_both("""
        x = torch.tensor([1., 2.], requires_grad=True)
        r1 = (x * 2).sum()
        r2 = (x * 3).sum()
        before = r2.grad_fn._sequence_nr()
        torch.autograd.backward([r1, r2])
        after = (x * 4).grad_fn._sequence_nr()
        single = (x * 5).sum()
        single.backward()
        next_seq = (x * 6).grad_fn._sequence_nr()
    """):
        assert ns["after"] == ns["before"] + 2  # GraphRoot took before + 1
        assert ns["next_seq"] == ns["after"] + 3  # a single root needs no GraphRoot


def test_setting_a_sequence_number_changes_the_order():
    """Facts §3.2: ``x.exp() + x.sin()`` runs Add, Sin, Exp; after raising Exp's number above
    Sin's, Exp runs first."""
    snippet = """
        x = torch.tensor(0.5, requires_grad=True)
        e = x.exp()
        s = x.sin()
        out = e + s
    """
    for bump in (False, True):
        code = textwrap.dedent(snippet) + (
            "e.grad_fn._set_sequence_nr(s.grad_fn._sequence_nr() + 100)\n" if bump else "")
        orders = []
        for ns in run_both(code):
            orders.append(record_order([ns["out"]]))
            ns["out"].backward()
        assert_same_order(*orders)
        middle = [label for label, _ in orders[0][1:3]]
        assert middle == (["ExpBackward0", "SinBackward0"] if bump else ["SinBackward0", "ExpBackward0"])


def test_sequence_numbers_count_only_recorded_nodes():
    for ns in run_both("""
        a = torch.tensor([1., 2.], requires_grad=True)
        n = torch.tensor([1., 2.])
        first = (a * 2).grad_fn._sequence_nr()
        for _ in range(5):
            n * 2
        with torch.no_grad():
            for _ in range(5):
                a * 2
        a.detach() * 2
        second = (a * 2).grad_fn._sequence_nr()
        parts = a.unbind()
        third = (a * 2).grad_fn._sequence_nr()
    """):
        assert ns["second"] == ns["first"] + 1
        assert ns["third"] == ns["second"] + 2  # unbind: one node for both outputs


def test_sequence_counter_is_thread_local():
    seen = {}

    def build():
        a = gradwalk.tensor([1.0], requires_grad=True)
        seen["numbers"] = [(a * 2).grad_fn._sequence_nr(), (a * 2).grad_fn._sequence_nr()]

    a = gradwalk.tensor([1.0], requires_grad=True)
    for _ in range(3):
        a * 2
    main_before = (a * 2).grad_fn._sequence_nr()
    thread = threading.Thread(target=build)
    thread.start()
    thread.join()
    assert seen["numbers"] == [0, 1]
    assert (a * 2).grad_fn._sequence_nr() == main_before + 1


def test_a_node_waits_for_all_its_edges():
    """Facts §3.3(b): CosBackward0 runs early but Acc(r) waits for the Sub branch."""
    ours, theirs = both_orders("""
        r = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
        h = (r - 1.0).exp().tanh() * 3
        out = h + torch.cos(r)
    """, ["out"], "r")
    assert_same_order(ours, theirs)
    labels = [label for label, _ in ours]
    assert labels.index("CosBackward0") == 1 and labels[-1] == "AccumulateGrad(r)"
    assert labels.count("AccumulateGrad(r)") == 1


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 0, 2), (2, 1, 0), (0, 2, 1)])
def test_input_buffer_sums_in_arrival_order_left_fold(order):
    """Facts §3.4: gradients 1e16, 1, 1 reaching one slot sum as ((first + second) + third)."""
    scales = ["1e16", "1.0", "1.0"]
    snippet = "x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)\nh = x * 1\n"
    # later-built terms arrive first, so build them in reverse of the wanted arrival order
    snippet += "out = " + " + ".join(f"(h * {scales[i]})" for i in reversed(order)) + "\n"
    seen = []
    for ns in run_both(snippet):
        ns["h"].register_hook(lambda g: seen.append(g.item()))
        ns["out"].backward()
        assert ns["x"].grad.item() == seen[-1]
    assert seen[0] == seen[1]


def test_buffer_summation_runs_the_consumer_once():
    ours, theirs = both_orders("""
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x * 1
        out = (h * 2 + h * 5).sum()
    """, ["out"], "x")
    assert_same_order(ours, theirs)
    assert [g for label, g in ours if label == "AccumulateGrad(x)"] == [([7.0, 7.0],)]


def test_backward_inputs_accumulates_only_into_those_leaves():
    for ns in run_both("""
        a = torch.tensor([1., 2.], requires_grad=True)
        b = torch.tensor([3., 4.], requires_grad=True)
        h = a * b
        h.retain_grad()
        out = (h * h).sum()
        out.backward(inputs=[a])
    """):
        assert ns["a"].grad.tolist() == [18.0, 64.0]
        assert ns["b"].grad is None
        assert ns["h"].grad.tolist() == [6.0, 16.0]  # h lies on the path to a


def test_backward_inputs_with_a_non_leaf_populates_its_grad():
    for ns in run_both("""
        a = torch.tensor([1., 2.], requires_grad=True)
        h = a * 3
        out = (h * h).sum()
        out.backward(inputs=[h])
    """):
        assert ns["h"].grad.tolist() == [6.0, 12.0]
        assert ns["a"].grad is None


def test_autograd_grad_runs_only_nodes_on_a_path_to_the_inputs():
    """Facts §6: ``grad(exp(a)*sin(b), a)`` runs only MulBackward0 and ExpBackward0."""
    ours, theirs = both_orders("""
        a = torch.tensor(0.3, requires_grad=True)
        b = torch.tensor(0.6, requires_grad=True)
        out = torch.exp(a) * torch.sin(b)
    """, ["out"], "ab", backward="result = torch.autograd.grad(out, a)")
    assert_same_order(ours, theirs)
    assert [label for label, _ in ours] == ["MulBackward0", "ExpBackward0"]


def test_autograd_grad_captures_non_leaf_and_leaves_grad_untouched():
    gw, pt = run_both("""
        a = torch.tensor([1., 2., 3.], requires_grad=True)
        h = a * 2
        out = (h * 3).sum()
        gh, ga = torch.autograd.grad(out, [h, a])
        self_grad = torch.autograd.grad(a, a, torch.ones(3))
    """)
    for name in ("gh", "ga"):
        assert_same(gw[name], pt[name])
    assert gw["a"].grad is None and gw["self_grad"][0].tolist() == [1.0, 1.0, 1.0]


def test_autograd_grad_allow_unused_and_materialize():
    gw, pt = run_both("""
        a = torch.tensor([1., 2.], requires_grad=True)
        b = torch.tensor([3., 4.], requires_grad=True)
        out = (a * 2).sum()
        unused = torch.autograd.grad(out, [a, b], retain_graph=True, allow_unused=True)
        zeros = torch.autograd.grad(out, [a, b], materialize_grads=True)
        as_dict = torch.autograd.grad((a * b).sum(), {"first": a, "second": b})
    """)
    assert gw["unused"][1] is None and pt["unused"][1] is None
    assert_same(gw["zeros"][1], pt["zeros"][1])
    assert_same(gw["unused"][0], pt["unused"][0])
    assert list(gw["as_dict"]) == ["first", "second"]
    assert_same(gw["as_dict"]["second"], pt["as_dict"]["second"])


def test_saved_tensors_are_released_right_after_their_node_runs():
    """Facts §4: inside the node's own posthook ``_saved_self`` is readable; in the next node's
    prehook it raises the backward-twice error."""
    for lib in (gradwalk, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        z = y.sin()
        out = z.sum()
        mul, sin = y.grad_fn, z.grad_fn
        seen = {}
        sin.register_hook(lambda gin, gout: seen.update(own=sin._saved_self.tolist()))

        def later(grads):
            try:
                sin._saved_self
            except RuntimeError as error:
                seen["later"] = message(error)

        mul.register_prehook(later)
        out.backward()
        assert seen["own"] == [1.0, 4.0]
        assert seen["later"].startswith("Trying to backward through the graph a second time")


def test_retain_graph_reuses_nodes_and_accumulates():
    for ns in run_both("""
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        out = (x * x).sum()
        out.backward(retain_graph=True)
        first = x.grad
        out.backward()
    """):
        assert ns["x"].grad.tolist() == [4.0, 8.0, 12.0]
        assert ns["x"].grad is ns["first"]  # accumulated in place


def test_graphs_without_saved_tensors_backward_twice():
    for ns in run_both("""
        x = torch.tensor([1., 2.], requires_grad=True)
        out = (x + 1).sum()
        out.backward()
        out.backward()
    """):
        assert ns["x"].grad.tolist() == [2.0, 2.0]


def test_an_error_in_a_node_drops_the_remaining_tasks():
    """Facts §3.1(6): leaves accumulated before the failing node keep their grads; the rest
    never run."""
    outcomes = []
    for lib in (gradwalk, torch):
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0, requires_grad=True)
        h = a * 2
        out = h * 3 + b
        ran = []
        h.grad_fn.register_prehook(lambda g: ran.append("mul"))

        def boom(grads):
            raise ValueError("boom")

        out.grad_fn.next_functions[0][0].register_prehook(boom)
        with pytest.raises(ValueError, match="boom"):
            out.backward()
        outcomes.append((b.grad.item(), a.grad, ran))
    assert outcomes[0] == outcomes[1] == (1.0, None, [])


def test_broadcast_gradients_are_reduced_by_the_engine():
    gw, pt = run_both("""
        s = torch.tensor(2.0, requires_grad=True)
        v = torch.ones(5, requires_grad=True)
        c = torch.ones(3, 1, requires_grad=True)
        d = torch.ones(1, 4, requires_grad=True)
        ((s * v).sum() + (c + d).sum()).backward()
    """)
    for name in "svcd":
        assert_same(gw[name].grad, pt[name].grad)
    assert gw["s"].grad.shape == () and gw["s"].grad.item() == 5.0


def test_posthooks_see_reduced_gradients():
    seen = []
    for lib in (gradwalk, torch):
        c = lib.ones(3, 1, requires_grad=True)
        d = lib.ones(1, 4, requires_grad=True)
        y = c + d
        y.grad_fn.register_hook(lambda gin, gout: seen.append([tuple(g.shape) for g in gin]))
        y.sum().backward()
    assert seen[0] == seen[1] == [(3, 1), (1, 4)]


def test_sum_of_many_paths_matches_pytorch_exactly():
    """A float64 value reached by many paths sums in the same order as in PyTorch, bit for bit."""
    values = np.random.default_rng(0).normal(size=12) * 10.0 ** np.arange(12)
    snippet = "x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)\nout = " + " + ".join(
        f"x * {v!r}" for v in values) + "\nout.backward()\n"
    ours, theirs = run_both(snippet)
    assert ours["x"].grad.item() == theirs["x"].grad.item()


class _LibstdcxxHeap:
    """libstdc++'s ``push_heap``/``pop_heap`` (``__push_heap``, ``__adjust_heap``) spelled out
    on a max-heap of ``(priority, name)``: the reference for the engine's ready queue."""

    def __init__(self):
        self.c = []

    def _sift_up(self, hole, top, value):
        c = self.c
        parent = (hole - 1) // 2
        while hole > top and c[parent][0] < value[0]:
            c[hole] = c[parent]
            hole = parent
            parent = (hole - 1) // 2
        c[hole] = value

    def push(self, value):
        self.c.append(value)
        self._sift_up(len(self.c) - 1, 0, value)

    def pop(self):
        c = self.c
        top = c[0]
        last = len(c) - 1
        if last:
            value = c[last]
            c[last] = c[0]
            hole = child = 0
            while child < (last - 1) // 2:
                child = 2 * (child + 1)
                if c[child][0] < c[child - 1][0]:
                    child -= 1
                c[hole] = c[child]
                hole = child
            if (last & 1) == 0 and child == (last - 2) // 2:
                child = 2 * (child + 1)
                c[hole] = c[child - 1]
                hole = child - 1
            self._sift_up(hole, 0, value)
        c.pop()
        return top


@pytest.mark.parametrize("seed", range(20))
def test_ready_queue_pops_exactly_as_libstdcxx(seed):
    """Random pushes and pops with many equal priorities (as AccumulateGrad's 2**64-1): the
    engine's queue (heapq on minus the priority) pops the same entries in the same order."""
    from gradwalk.autograd.engine import StdPriorityQueue, UINT64_MAX

    rng = np.random.default_rng(seed)
    ours, reference = StdPriorityQueue(), _LibstdcxxHeap()
    popped_ours, popped_reference = [], []
    for step in range(400):
        if len(reference.c) and rng.random() < 0.45:
            popped_ours.append(ours.pop()[1])
            popped_reference.append(reference.pop()[1])
        else:
            priority = UINT64_MAX if rng.random() < 0.3 else int(rng.integers(0, 12))
            ours.push((priority, f"task{step}", None))
            reference.push((priority, f"task{step}"))
    assert [entry[1] for entry in ours.in_pop_order()] == [reference.pop()[1] for _ in range(len(reference.c))]
    assert popped_ours == popped_reference


def test_a_gradient_sent_to_two_leaves_is_never_shared_by_their_grads():
    """``x + y`` hands one gradient tensor to both accumulations. PyTorch lets ``.grad`` steal
    a gradient's buffer only when nothing else refers to it (``use_count``), so the two leaves'
    ``.grad`` stay separate and a second backward accumulates into each once."""
    results = []
    for lib in (torch, gradwalk):
        x = lib.ones(3, requires_grad=True)
        y = lib.ones(3, requires_grad=True)
        ((x + y) * 2).sum().backward()
        ((x + y) * 2).sum().backward()
        x.grad.add_(100)
        results.append((x.grad.tolist(), y.grad.tolist()))
    assert results[0] == results[1] == ([104.0] * 3, [4.0] * 3)


def test_summing_into_an_input_buffer_never_changes_a_gradient_sent_elsewhere():
    """``u + v`` sends one gradient tensor to both ``u``'s and ``v``'s nodes. ``v``'s node waits
    in the ready queue while ``exp(u)`` (made before the sum, so popped after it but before ``v``)
    sends ``u`` a second gradient, and ``u`` still waits for ``sin(u)``'s. The engine may add
    into a waiting buffer's tensor in place only when nothing else holds it, or ``v``'s queued
    gradient would grow too."""
    grads = []
    for lib in (torch, gradwalk):
        x = lib.ones(3, requires_grad=True)
        u, v = x * 2, x * 3
        s, e = u.sin(), u.exp()
        ((u + v) + e + s).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx([5 + 2 * math.exp(2) + 2 * math.cos(2)] * 3)
    assert grads[1] == pytest.approx(grads[0])


def test_a_gradient_a_hook_kept_is_copied_into_grad():
    kept = {}
    for lib in (torch, gradwalk):
        w = lib.ones(3, requires_grad=True)
        seen = []
        w.register_hook(seen.append)
        (w * 2).sum().backward()
        w.grad.add_(1)
        kept[lib.__name__] = seen[0].tolist()
    assert kept["torch"] == kept["gradwalk"] == [2.0] * 3
