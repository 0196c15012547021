"""In-place ops on views, side by side with PyTorch (facts §1 CopySlices row, §2, §7).

Writing into a view of a tensor that is part of a graph rebases the *base*: its grad_fn becomes
``CopySlices`` (wrapping the op's node) and the view's grad_fn an ``AsStridedBackward0`` over it,
regenerated whenever the shared version counter moves. Each case below runs in both libraries;
we compare, for the tensors it names: values, version, requires_grad, is_leaf, the grad_fn's
class, ``name()`` and sequence number (relative to the snippet's first node), the whole graph
under it (``next_functions``, recursively), and the gradient of every leaf.
"""
import textwrap

import numpy as np
import pytest

import gradwalk
from parity import assert_same, assert_same_error, graph_structure, run_both, to_numpy

PROBE = "_probe = torch.ones(1, requires_grad=True) * 1\nstart = _probe.grad_fn._sequence_nr()\n"


def observe(ns, tensors, leaves):
    """What a user can see of ``tensors`` and the ``leaves``' gradients, as comparable data."""
    names = {name: ns[name] for name in leaves}
    seen, values = {}, {}
    for name in tensors:
        t = ns[name]
        fn = t.grad_fn
        seen[name] = {
            "version": t._version, "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
            "grad_fn": None if fn is None else (type(fn).__name__, fn.name(), fn._sequence_nr() - ns["start"]),
            "graph": graph_structure(t, names),
        }
        values[name] = to_numpy(t)
    for name in leaves:
        grad = ns[name].grad
        seen[name + ".grad"] = None if grad is None else tuple(grad.shape)
        values[name + ".grad"] = to_numpy(grad)
    return seen, values


def check(snippet, tensors, leaves):
    gw, pt = run_both(PROBE + textwrap.dedent(snippet))
    ours, ours_values = observe(gw, tensors, leaves)
    theirs, their_values = observe(pt, tensors, leaves)
    assert ours == theirs
    for key, expected in their_values.items():
        if expected is None:
            assert ours_values[key] is None, key
        else:
            np.testing.assert_allclose(ours_values[key], expected, rtol=1e-6, atol=1e-7, err_msg=key)
    return gw, pt


LEAVES = """
x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
w = torch.tensor(0.5, requires_grad=True)
w2 = torch.tensor([[-1.5, 2.5]], requires_grad=True)
m = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
"""
ALL_LEAVES = ("x", "w", "w2", "m")

# name: (snippet after LEAVES, tensors to observe)
CASES = {
    # the strict-xfail example of test_inplace_versions: x.grad [2, 36, 54, 72], not [2, 12, 18, 24]
    "slice mul_ scalar": ("""
        h = x * 1
        v = h[1:]
        v.mul_(3)
        (h * h).sum().backward()
    """, ("h", "v")),
    "slice mul_ tensor (old view values reach w)": ("""
        h = x * 2
        v = h[1:3]
        v.mul_(w)
        (h * h).sum().backward()
    """, ("h", "v")),
    "select chain: x[0].mul_, then h[1:][0].mul_": ("""
        h = x * 1
        h[0].mul_(2)
        h[1:][0].mul_(5)
        (h * h).sum().backward()
    """, ("h",)),
    "view of a view of a view": ("""
        h = m * 1
        v = h[1:]
        u = v[0]
        u[1:].add_(w)
        (h ** 2).sum().backward()
    """, ("h", "v", "u")),
    "transpose, then a row of it": ("""
        h = m * 1
        h.t()[1].mul_(3)
        (h * h).sum().backward()
    """, ("h",)),
    "view(2, 2)[0], reshape, flatten": ("""
        h = x * 1
        h.view(2, 2)[0].mul_(w2[0])
        r = h.reshape(2, 2)
        r[:, 1].sub_(1)
        (h * h.detach()).sum().backward()
    """, ("h", "r")),
    "unsqueeze, squeeze, permute, narrow": ("""
        h = m * 1
        h.unsqueeze(0)[0, :, 1:].mul_(w2)
        h.narrow(1, 1, 2).sub_(2)
        h.permute(1, 0)[0].add_(1)
        h.squeeze()[0].tanh_()
        (h * h).sum().backward()
    """, ("h",)),
    "an in-place op that saves its result (the last write)": ("""
        h = x * 1.5
        h[2:].neg_()
        h[1:3].exp_()
        (h * h).sum().backward()
    """, ("h",)),
    "copy_, fill_, zero_ into views": ("""
        h = x * 1
        h[0:2].copy_(w2[0])
        h[2].fill_(w)
        h[3:].zero_()
        (h * torch.arange(1., 5.)).sum().backward()
    """, ("h",)),
    "a sibling view sees the write": ("""
        h = x * 1
        a = h[0:2]
        b = h[1:3]
        a.mul_(2)
        (b * b).sum().backward()
    """, ("h", "a", "b")),
    "the base written: its views follow": ("""
        h = x * 1
        v = h[1:]
        h.mul_(2)
        (v * v).sum().backward()
    """, ("h", "v")),
    "the base written under no_grad: views still regenerate": ("""
        h = x * 1
        v = h[1:]
        with torch.no_grad():
            h.mul_(2)
        (v * v).sum().backward()
    """, ("h", "v")),
    "a view of a leaf written under no_grad": ("""
        v = x[1:]
        with torch.no_grad():
            v.mul_(2)
        (v * v).sum().backward()
    """, ("x", "v")),
    "a plain base gets history from the value": ("""
        z = torch.zeros(3)
        row = z[0:2]
        z[1] = w
        z[2:].mul_(w)
        (row.sum() + (z * z).sum()).backward()
    """, ("z", "row")),
    "the view used again after the write": ("""
        h = x * 1
        v = h[1:]
        v.mul_(3)
        y = v * 2  # saves nothing of v
        v.add_(1)
        (y.sum() + h.sum()).backward()
    """, ("h", "v", "y")),
    "the seeds' pitfall, fixed: relu_ on a slice of a hidden layer, then out of place": ("""
        hidden = m @ torch.tensor([[0.5], [-1.0], [0.25]])
        hidden[1:].relu_()
        out = hidden + 1
        (out ** 2).sum().backward()
    """, ("hidden", "out")),
}


@pytest.mark.parametrize("name", CASES)
def test_in_place_on_views_matches_pytorch(name):
    snippet, tensors = CASES[name]
    check(LEAVES + textwrap.dedent(snippet), tensors, ALL_LEAVES)


SETITEM = {
    "d[0] = 5.": ("d[0] = 5.",),
    "d[1] = w": ("d[1] = w",),
    "d[1:3] = w2 (leading 1 stripped)": ("d[1:3] = w2",),
    "d[1:3] = 5. (fill_)": ("d[1:3] = 5.",),
    "d[...] = w (no view: fill_ on d)": ("d[...] = w",),
    "d[:] = w2[0, 0]": ("d[:] = w2[0, 0]",),
    "d[None] = w": ("d[None] = w",),
    "d[[0, 2]] = w (IndexPutBackward0)": ("d[[0, 2]] = w",),
    "d[d > 2] = 0.": ("d[d > 2] = 0.",),
    "d[0:3][1] = w, twice": ("d[0:3][1] = w", "d[0:3][1] = w"),
    "a float64 value": ("d[2] = torch.tensor(2.5, dtype=torch.float64)",),
}


@pytest.mark.parametrize("name", SETITEM)
def test_setitem_on_a_non_leaf_matches_pytorch(name):
    lines = "\n".join(SETITEM[name])
    check(LEAVES + "d = x * 1\n" + lines + "\n(d * d).sum().backward()\n", ("d",), ALL_LEAVES)


def test_setitem_on_two_dims():
    check(LEAVES + """
h = m * 1
h[:, 1] = w
h[0, 1:] = w2[0]
h[1][2] = 7.
(h * h).sum().backward()
""", ("h",), ALL_LEAVES)


def test_sequence_numbers_of_setitem():
    """Facts §2: ``d[0] = 5.`` takes Select, CopyBackwards, CopySlices and the view's
    AsStridedBackward0: four numbers."""
    for ns in run_both("""
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        d = x * 1
        first = d.grad_fn._sequence_nr()
        d[0] = 5.
        after = (d * 1).grad_fn._sequence_nr()
        copy_slices = d.grad_fn._sequence_nr()
    """):
        assert ns["copy_slices"] - ns["first"] == 3
        assert ns["after"] - ns["first"] == 5


def test_names_and_reprs():
    gw, pt = run_both("""
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        v.mul_(3)
        names = (type(h.grad_fn).__name__, h.grad_fn.name(), type(v.grad_fn).__name__, v.grad_fn.name())
        reprs = (repr(h).split("grad_fn=")[1], repr(h.grad_fn).split(" object")[0])
        same = v.grad_fn is v.grad_fn
        base = (v._base is h, h[1:][0]._base is h, h.t()._base is h, h.unsqueeze(0)._base is h,
                h.view(3)._base is h, h.expand(2, 3)._base is h, h.split(1)[2]._base is h,
                h.unbind()[0]._base is h, h.narrow(0, 1, 1)._base is h, h.detach()._base is None)
    """)
    assert gw["names"] == pt["names"] == ("CopySlices", "torch::autograd::CopySlices",
                                          "AsStridedBackward0", "AsStridedBackward0")
    assert gw["reprs"] == pt["reprs"] == ("<CopySlices>)", "<CopySlices")
    assert gw["same"] and pt["same"]
    assert gw["base"] == pt["base"] == (True,) * 10
    assert isinstance(gw["v"], gradwalk.Tensor) and isinstance(gw["h"].grad_fn, gradwalk.autograd.graph.Node)


def test_version_counters_shared_by_base_and_views():
    for ns in run_both("""
        x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
        h = x * 1
        v = h[1:]
        u = v.view(3, 1)
        t = h.view(2, 2).t()
        v.mul_(2)
        u[0].add_(1)
        t.sub_(1)
        h[0] = 3.
        with torch.no_grad():
            t[0].zero_()
        versions = [h._version, v._version, u._version, t._version, x._version]
        values = h.tolist()
    """):
        assert ns["versions"] == [5, 5, 5, 5, 0]
    gw, pt = run_both("""
        x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
        h = x * 1
        v = h[1:]
        u = v.view(3, 1)
        t = h.view(2, 2).t()
        v.mul_(2)
        u[0].add_(1)
        t.sub_(1)
        h[0] = 3.
        h.sum().backward()
    """)
    assert_same(gw["h"], pt["h"])
    assert_same(gw["x"].grad, pt["x"].grad)


def test_hooks_and_retain_grad_around_the_write():
    """A hook registered on the base before the write sees the old value's gradient; retain_grad
    moves to the new grad_fn (the base's CopySlices, the view's AsStridedBackward0)."""
    gw, pt = run_both("""
        seen = []
        x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
        h = x * 1
        h.register_hook(lambda g: seen.append(("h before", g.tolist())))
        h.retain_grad()
        v = h[1:]
        v.register_hook(lambda g: seen.append(("v before", g.tolist())))
        v.mul_(2)
        v.register_hook(lambda g: seen.append(("v after", g.tolist())))
        v.retain_grad()
        h.register_hook(lambda g: seen.append(("h after", g.tolist())))
        (v * v).sum().backward()
        grads = (h.grad.tolist(), v.grad.tolist(), x.grad.tolist())
    """)
    assert gw["seen"] == pt["seen"]
    assert gw["grads"] == pt["grads"]


def test_retain_grad_follows_a_plain_in_place_op():
    gw, pt = run_both("""
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x * 1
        h.retain_grad()
        h.mul_(3)
        (h * h).sum().backward()
    """)
    assert_same(gw["h"].grad, pt["h"].grad)
    assert_same(gw["x"].grad, pt["x"].grad)


def test_gradients_of_some_inputs_only_and_retain_graph():
    gw, pt = run_both("""
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        w = torch.tensor(2., requires_grad=True)
        h = x * x
        h[1:].mul_(w)
        loss = (h * h).sum()
        (gw,) = torch.autograd.grad(loss, [w], retain_graph=True)
        (gx,) = torch.autograd.grad(loss, [x], retain_graph=True)
        loss.backward(retain_graph=True)
        loss.backward()
    """)
    for name in ("gw", "gx"):
        assert_same(gw[name], pt[name])
    assert_same(gw["x"].grad, pt["x"].grad)
    assert_same(gw["w"].grad, pt["w"].grad)


def test_double_backward_through_copy_slices():
    gw, pt = run_both("""
        x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
        h = x * x
        h[1:].mul_(x[:2])
        h[0] = x[2] ** 3
        (g,) = torch.autograd.grad((h * h).sum(), x, create_graph=True)
        g.sum().backward()
    """)
    assert_same(gw["g"], pt["g"])
    assert_same(gw["x"].grad, pt["x"].grad)


ERRORS = {
    "the seeds' pitfall: relu_ on a slice saved its result, += changed it": """
        m = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        hidden = m @ torch.tensor([[0.5], [-1.0], [0.25]])
        hidden[1:].relu_()
        hidden += 1
        (hidden ** 2).sum().backward()
    """,
    "a saved result, then another view of the base written": """
        m = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        h = m * 1
        h.narrow(1, 1, 2).sigmoid_()
        h.permute(1, 0)[0].add_(1)
        (h * h).sum().backward()
    """,
    "a view saved by a later op, then written": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        v.mul_(3)
        y = v * v
        v.add_(1)
        y.sum().backward()
    """,
    "backward twice through CopySlices": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        h[1:].mul_(2)
        h.sum().backward()
        h.sum().backward()
    """,
    "a saved view written later: output 0 of AsStrided": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        y = v.sin()
        v.mul_(2)
        y.sum().backward()
    """,
    "a saved view whose base is written later": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        y = v.sin()
        h.mul_(2)
        y.sum().backward()
    """,
    "saved after one write, stale after the next": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        v.exp_()
        y = v * v
        h.mul_(2)
        y.sum().backward()
    """,
    "a view of a leaf": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        x[1:].mul_(2)
    """,
    "a transposed leaf": """
        x = torch.ones(2, 2, requires_grad=True)
        x.t().mul_(2)
    """,
    "setitem on a leaf": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        x[0] = 5.
    """,
    "setitem ... on a leaf (no view)": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        x[...] = 5.
    """,
    "an output of split": """
        x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
        a, b = (x * 1).split(2)
        b.mul_(2)
    """,
    "an output of chunk, indirectly": """
        x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
        h = x * 1
        a, b = h.chunk(2)
        h.mul_(2)
        b.grad_fn
    """,
    "an output of unbind": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        (x * 1).unbind()[2].add_(1)
    """,
    "a view made under no_grad": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        with torch.no_grad():
            v = h[1:]
        v.mul_(2)
    """,
    "a view made under no_grad, its base written": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        with torch.no_grad():
            v = h[1:]
        h.mul_(2)
        v * 2
    """,
    "a view of a leaf made under no_grad": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        with torch.no_grad():
            v = x[1:]
        v.mul_(2)
    """,
    "an expanded view": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        (x * 1)[:1].expand(3).mul_(2)
    """,
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_pytorch(name):
    assert_same_error(ERRORS[name])


def test_no_grad_view_of_a_graph_tensor():
    """Made under no_grad: no grad_fn, yet requires_grad (its base does); ops on it later get a
    ``(None, 0)`` edge and no gradient flows."""
    gw, pt = run_both("""
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        with torch.no_grad():
            v = h[1:]
        flags = (v.grad_fn is None, v.requires_grad, v.is_leaf)
        y = v * 2
        edges = [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions]
        y.sum().backward()
    """)
    assert gw["flags"] == pt["flags"] == (True, True, True)
    assert gw["edges"] == pt["edges"] == [None, None]
    assert gw["x"].grad is None and pt["x"].grad is None
    assert_same(gw["h"], pt["h"])


def test_writes_through_views_without_grad():
    for ns in run_both("""
        t = torch.zeros(2, 3)
        t[0].fill_(1.)
        t[:, 2].add_(5.)
        t.t()[1].sub_(2.)
        t.view(6)[0] = 9.
        for row in t.unbind():
            row[1].mul_(10)
        t.split(1)[1][0, 0] = 4.
        values = t.tolist()
        version = t._version
        still_plain = (t.grad_fn, t.requires_grad)
    """):
        assert ns["values"] == [[9.0, -10.0, 6.0], [4.0, -20.0, 5.0]]
        assert ns["version"] == 7
        assert ns["still_plain"] == (None, False)
