"""In-place ops and version counters (facts §1 in-place rows, §7): ``_version`` bumps, the nodes
in-place ops record, gradients through them, and the saved-tensor version check."""
import numpy as np
import pytest

import gradwalk
import torch
from parity import assert_same, graph_structure, run_both


@pytest.mark.parametrize("op", [
    "add_(b)", "add_(1.0)", "sub_(b)", "mul_(b)", "mul_(3)", "div_(b)", "div_(2.0)",
    "clamp_(-0.5, 0.5)", "relu_()", "exp_()", "zero_()", "fill_(2.0)", "fill_(b[1])", "copy_(b)",
    "copy_(b[0])",
])
def test_in_place_op_on_a_non_leaf_matches_pytorch(op):
    gw, pt = run_both(f"""
        a = torch.tensor([0.7, -1.3, 2.1], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([1.5, 0.4, -0.8], dtype=torch.float64, requires_grad=True)
        c = a * 1.5
        before = c.grad_fn
        version = c._version
        result = c.{op}
        out = (c * c).sum()
        out.backward()
    """)
    for ns in (gw, pt):
        assert ns["result"] is ns["c"] and ns["c"]._version == ns["version"] + 1
        assert ns["c"].grad_fn is not ns["before"]
    assert_same(gw["c"], pt["c"])
    assert type(gw["c"].grad_fn).__name__ == type(pt["c"].grad_fn).__name__
    assert graph_structure(gw["c"], {"a": gw["a"], "b": gw["b"]}) == \
        graph_structure(pt["c"], {"a": pt["a"], "b": pt["b"]})
    assert_same(gw["a"].grad, pt["a"].grad)
    assert_same(gw["b"].grad, pt["b"].grad)


def test_version_counts_every_in_place_op():
    for ns in run_both("""
        t = torch.ones(3)
        versions = [t._version]
        t.mul_(2).add_(1)
        versions.append(t._version)
        t[0] = 2.0
        versions.append(t._version)
        t += 1
        versions.append(t._version)
        t.zero_()
        versions.append(t._version)
        t * 2
        versions.append(t._version)
    """):
        assert ns["versions"] == [0, 2, 3, 4, 5, 5]


def test_views_and_detach_share_the_version_counter_but_data_does_not():
    for ns in run_both("""
        x = torch.ones(4)
        v = x.view(2, 2)
        d = x.detach()
        s = x[1:]
        v.add_(1)
        d.mul_(2)
        s.sub_(1)
        shared = [x._version, v._version, d._version, s._version]
        x.data.add_(1)
        after_data = x._version
    """):
        assert ns["shared"] == [3, 3, 3, 3]
        assert ns["after_data"] == 3
        assert ns["x"].tolist() == [5.0, 4.0, 4.0, 4.0]


def test_in_place_operator_forms():
    gw, pt = run_both("""
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        c = a * 2
        c += 1
        c *= a
        c -= 0.5
        c /= 2
        names = type(c.grad_fn).__name__
        c.sum().backward()
    """)
    assert gw["names"] == pt["names"] == "DivBackward0"
    assert_same(gw["a"].grad, pt["a"].grad)


def test_in_place_on_saved_tensor_is_caught_and_on_unsaved_is_fine():
    for lib in (gradwalk, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        y = h.exp()  # saves its result, not h
        h.add_(1)
        y.sum().backward()
        assert x.grad.tolist() == pytest.approx([2 * 7.389056, 2 * 54.59815], rel=1e-6)
        x.grad = None
        h = x * 2
        y = h.sin()  # saves h
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_in_place_ops_allowed_on_leaves_without_grad_and_under_no_grad():
    for lib in (gradwalk, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            w.mul_(3)
            w -= 1
        assert w.is_leaf and w.requires_grad and w.grad_fn is None and w._version == 2
        plain = lib.tensor([1.0, 2.0])
        plain.add_(w)  # the plain tensor now depends on w: it gets a grad_fn
        assert type(plain.grad_fn).__name__ == "AddBackward0"
        plain.sum().backward()
        assert w.grad.tolist() == [1.0, 1.0]


def test_optimizer_style_update_under_no_grad():
    gw, pt = run_both("""
        w = torch.tensor([0.5, -0.5], requires_grad=True)
        for _ in range(3):
            loss = ((w * 2 - 1) ** 2).sum()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
    """)
    assert_same(gw["w"], pt["w"])


def test_relu_in_place_then_backward():
    gw, pt = run_both("""
        a = torch.tensor([0.7, -1.3, 2.1], requires_grad=True)
        h = a * 2
        torch.relu_(h)
        h.sum().backward()
    """)
    assert_same(gw["a"].grad, pt["a"].grad)


def test_in_place_on_a_view_of_a_non_leaf_rebases_the_base():
    gw, pt = run_both("""
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        v.mul_(3)
        names = (h.grad_fn.name(), type(v.grad_fn).__name__)
        (h * h).sum().backward()
    """)
    assert gw["names"] == pt["names"] == ("torch::autograd::CopySlices", "AsStridedBackward0")
    assert_same(gw["x"].grad, pt["x"].grad)


def test_add__on_tensors_nothing_records_is_pytorchs():
    """``add_`` where nothing records (an optimizer's update, ``p.data += -lr * p.grad``) writes
    the sum straight into the tensor: the same values, version count and errors as PyTorch."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 200)).astype(np.float32)
    b = rng.standard_normal((30, 200)).astype(np.float32)
    results = []
    for lib in (gradwalk, torch):
        p = lib.tensor(a, requires_grad=True)
        g = lib.tensor(b)
        d = p.data
        d += -0.1 * g
        p.data += -0.1 * g
        x = lib.tensor(a)
        x.add_(x)  # the other operand is the tensor itself
        y = lib.tensor(a)
        y[1:].add_(y[:-1].clone())  # into a view: the base sees it
        z = lib.tensor(a)
        with lib.no_grad():
            z.add_(lib.tensor(b))
        results.append([t.detach().numpy().copy() for t in (p, x, y, z)]
                       + [p._version, d._version, x._version, y._version, z._version])
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            p.add_(g)
        with lib.inference_mode():
            frozen = lib.tensor(a)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            frozen.add_(lib.tensor(b))
        h = lib.tensor(a, requires_grad=True) * 1
        h.add_(g)  # in a graph: recorded
        assert type(h.grad_fn).__name__ == "AddBackward0"
    mine, theirs = results
    for m, t in zip(mine, theirs):
        assert np.array_equal(m, t) if isinstance(m, np.ndarray) else m == t
