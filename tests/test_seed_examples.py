"""The seeds' worked examples, each run under gradwalk and PyTorch side by side: the gradients,
the node names, and the order in which the engine runs the nodes (recorded with
``Node.register_prehook`` on every node), together with the gradient each node receives.

The expected tables from ``pytorch-autograd-facts.md`` §3.3 are spelled out too, so a reader sees
the numbers without running PyTorch.
"""
import pytest

from parity import assert_same, assert_same_order, graph_structure, record_order, run_both

def run_seed(snippet, leaves, output="out"):
    """Build ``snippet`` in both libraries, hook every node, backward; returns both namespaces
    and both recorded orders."""
    ours, theirs = run_both(snippet)
    orders = []
    for ns in (ours, theirs):
        names = {name: ns[name] for name in leaves}
        order = record_order([ns[output]], names)
        ns[output].backward()
        orders.append(order)
    return ours, theirs, orders[0], orders[1]


def test_neuron_tanh_w_x_plus_b():
    """Seed 000: ``y = tanh(w*x + b)``, and facts §3.3(a)."""
    ours, theirs, our_order, their_order = run_seed("""
        w = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
        b = torch.tensor(-0.3, dtype=torch.float64, requires_grad=True)
        out = torch.tanh(w * x + b)
    """, "wxb")
    assert_same_order(our_order, their_order)
    assert [label for label, _ in our_order] == [
        "TanhBackward0", "AddBackward0", "AccumulateGrad(b)", "MulBackward0",
        "AccumulateGrad(w)", "AccumulateGrad(x)"]
    assert [round(g[0], 5) for _, g in our_order] == [1.0, 0.63474, 0.63474, 0.63474, 1.26948, 0.31737]
    for leaf, expected in (("w", 1.26947918), ("x", 0.31736979), ("b", 0.63473959)):
        assert_same(ours[leaf].grad, theirs[leaf].grad)
        assert ours[leaf].grad.item() == pytest.approx(expected, abs=1e-8)


def test_neuron_float32_repr_and_sequence_numbers():
    ours, theirs = run_both("""
        w = torch.tensor(0.5, requires_grad=True)
        x = torch.tensor(2.0, requires_grad=True)
        b = torch.tensor(-0.3, requires_grad=True)
        u = w * x
        v = u + b
        y = torch.tanh(v)
    """)
    assert repr(ours["y"]) == repr(theirs["y"]) == "tensor(0.6044, grad_fn=<TanhBackward0>)"
    for ns in (ours, theirs):
        seqs = [ns[n].grad_fn._sequence_nr() for n in "uvy"]
        assert seqs[1] == seqs[0] + 1 and seqs[2] == seqs[0] + 2
        assert ns["y"].grad_fn.next_functions[0][0] is ns["v"].grad_fn
        acc = ns["u"].grad_fn.next_functions[0][0]
        assert acc.variable is ns["w"] and acc._sequence_nr() == 2**64 - 1
        assert acc.name() == "torch::autograd::AccumulateGrad"


def test_linear_regression_loss():
    """Seed 002: ``L = (w*x + b - t)**2`` with w=2, x=3, b=1, t=5: dL/dw = 2*e*x = 12."""
    ours, theirs, our_order, their_order = run_seed("""
        w = torch.tensor(2.0, requires_grad=True)
        x = torch.tensor(3.0, requires_grad=True)
        b = torch.tensor(1.0, requires_grad=True)
        t = torch.tensor(5.0, requires_grad=True)
        out = (w * x + b - t) ** 2
    """, "wxbt")
    assert_same_order(our_order, their_order)
    assert [label for label, _ in our_order] == [
        "PowBackward0", "SubBackward0", "AccumulateGrad(t)", "AddBackward0", "AccumulateGrad(b)",
        "MulBackward0", "AccumulateGrad(w)", "AccumulateGrad(x)"]
    assert ours["w"].grad.item() == 12.0
    for leaf, expected in zip("wxbt", (12.0, 8.0, 4.0, -4.0)):
        assert ours[leaf].grad.item() == expected
        assert_same(ours[leaf].grad, theirs[leaf].grad)


def test_gradients_sum_over_paths():
    """Seed 003 / facts §3.3(c): ``L = x*y + x*z``; Acc(x) waits for both paths and fires once
    with 4 + 3 = 7."""
    ours, theirs, our_order, their_order = run_seed("""
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        z = torch.tensor(4.0, requires_grad=True)
        out = x * y + x * z
    """, "xyz")
    assert_same_order(our_order, their_order)
    assert our_order == [
        ("AddBackward0", (1.0,)), ("MulBackward0", (1.0,)), ("AccumulateGrad(z)", (2.0,)),
        ("MulBackward0", (1.0,)), ("AccumulateGrad(x)", (7.0,)), ("AccumulateGrad(y)", (2.0,))]
    assert [ours[n].grad.item() for n in "xyz"] == [7.0, 2.0, 2.0]


MIXED = """
    p = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    q = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    r = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
    t1 = p + q; t2 = t1 - r; t3 = t2 * p; t4 = t3 / q; t5 = t4 ** 2
    t6 = torch.tanh(t5); t7 = torch.exp(t6); t8 = torch.log(t7 + 1.0)
    t9 = torch.sin(t8) + torch.cos(r); t10 = torch.sigmoid(t9); out = torch.relu(t10 - 0.5)
"""


def test_mixed_example():
    """Facts §3.3(b): every op of the lab, with leaves used twice."""
    ours, theirs, our_order, their_order = run_seed(MIXED, "pqr")
    assert_same_order(our_order, their_order)
    assert [label for label, _ in our_order] == [
        "ReluBackward0", "SubBackward0", "SigmoidBackward0", "AddBackward0", "CosBackward0",
        "SinBackward0", "LogBackward0", "AddBackward0", "ExpBackward0", "TanhBackward0",
        "PowBackward0", "DivBackward0", "MulBackward0", "SubBackward0", "AccumulateGrad(r)",
        "AddBackward0", "AccumulateGrad(p)", "AccumulateGrad(q)"]
    received = [round(g[0], 5) for _, g in our_order]
    assert received[3:8] == [0.12242, 0.12242, 0.12242, 0.06014, 0.02089]
    assert received[14:] == [-0.06961, 0.02194, 0.07208, -0.00506]
    for leaf, expected in zip("pqr", (0.0720802, -0.00506249, -0.06961017)):
        assert ours[leaf].grad.item() == pytest.approx(expected, abs=1e-7)
        assert_same(ours[leaf].grad, theirs[leaf].grad, rtol=1e-12)
    assert graph_structure(ours["out"], {n: ours[n] for n in "pqr"}) == \
        graph_structure(theirs["out"], {n: theirs[n] for n in "pqr"})
    for ns in (ours, theirs):
        seqs = [ns[f"t{i}"].grad_fn._sequence_nr() for i in range(1, 6)]
        assert seqs == list(range(seqs[0], seqs[0] + 5))


@pytest.mark.parametrize("b, expected", [(1.0, (3.0, 2.0, 1.0)), (-10.0, (0.0, 0.0, 0.0))])
def test_relu_neuron_and_dead_relu(b, expected):
    """Seed 003: ``y = relu(x1*x2 + b)``; with b = -10 the ReLU is dead and every gradient is 0
    (not None: the nodes still run and send zeros)."""
    ours, theirs, our_order, their_order = run_seed(f"""
        x1 = torch.tensor(2.0, requires_grad=True)
        x2 = torch.tensor(3.0, requires_grad=True)
        b = torch.tensor({b}, requires_grad=True)
        out = (x1 * x2 + b).relu()
    """, ("x1", "x2", "b"))
    assert_same_order(our_order, their_order)
    assert [label for label, _ in our_order] == [
        "ReluBackward0", "AddBackward0", "AccumulateGrad(b)", "MulBackward0",
        "AccumulateGrad(x1)", "AccumulateGrad(x2)"]
    assert tuple(ours[n].grad.item() for n in ("x1", "x2", "b")) == expected
    for n in ("x1", "x2", "b"):
        assert_same(ours[n].grad, theirs[n].grad)


def test_relu_with_python_constant():
    """Seed 003's micrograd line ``(x1 * x2 + 1.0).relu()``: the constant gets a ``(None, 0)`` edge."""
    ours, theirs = run_both("""
        x1 = torch.tensor(2.0, requires_grad=True)
        x2 = torch.tensor(3.0, requires_grad=True)
        y = (x1 * x2 + 1.0).relu()
        add = y.grad_fn.next_functions[0][0]
        y.backward()
    """)
    for ns in (ours, theirs):
        assert ns["add"].next_functions[1] == (None, 0)
        assert (ns["x1"].grad.item(), ns["x2"].grad.item()) == (3.0, 2.0)


def test_five_gradients_of_a_linear_neuron():
    """Seed 003: w1=1, w2=2, x1=0.5, x2=-1, b=3: relu(w1*x1 + w2*x2 + b)."""
    ours, theirs, our_order, their_order = run_seed("""
        w1 = torch.tensor(1.0, requires_grad=True)
        w2 = torch.tensor(2.0, requires_grad=True)
        x1 = torch.tensor(0.5, requires_grad=True)
        x2 = torch.tensor(-1.0, requires_grad=True)
        b = torch.tensor(3.0, requires_grad=True)
        out = torch.relu(w1 * x1 + w2 * x2 + b)
    """, ("w1", "w2", "x1", "x2", "b"))
    assert_same_order(our_order, their_order)
    grads = [ours[n].grad.item() for n in ("w1", "w2", "b", "x1", "x2")]
    assert grads == [0.5, -1.0, 1.0, 1.0, 2.0]
