"""Four places where gradwalk used to differ from PyTorch 2.13, each run side by side with it.

1. Anomaly mode (facts §10): a node made by a backward formula (``create_graph=True``) keeps its
   parent, the node whose formula made it; when it fails, a second warning names the parent and
   where *it* was made ("Previous calculation was induced by PowBackward0. ..."), one per ancestor.
2. A custom ``Function`` whose forward writes into a view and calls ``ctx.mark_dirty`` rebases the
   view's base onto ``CopySlices``, as any in-place op on a view does.
3. ``d[1:, [0, 1]] = w``: the basic part of the index makes a view, ``index_put_`` writes into it,
   so the base gets ``CopySlices`` wrapping ``IndexPutBackward0``.
4. ``conv2d`` twice differentiated: one ``ConvolutionBackwardBackward0`` node (edges grad_output,
   input, weight) makes all three gradients; ``ConvolutionBackward0`` has an edge for a missing bias.
"""
import textwrap
import warnings

import numpy as np
import pytest
import torch

import gradwalk
from parity import assert_same, assert_same_error, graph_structure, message, run_both, to_numpy

START = "_probe = torch.ones(1, requires_grad=True) * 1\nstart = _probe.grad_fn._sequence_nr()\n"


def node_info(ns, tensor, leaves):
    """What a user sees of ``tensor``'s history: class, name(), sequence number (relative to the
    snippet's start) and the whole graph under it, leaves named."""
    fn = tensor.grad_fn
    if fn is None:
        return None
    names = {name: ns[name] for name in leaves}
    return (type(fn).__name__, fn.name(), fn._sequence_nr() - ns["start"],
            graph_structure(tensor, names))


def compare(snippet, tensors, leaves, rtol=1e-6):
    """Run ``snippet`` in both libraries; the named tensors must have the same history, values
    and versions, the leaves the same gradients, and the next sequence number must agree."""
    gw, pt = run_both(START + textwrap.dedent(snippet) + "\n_end = (_probe * 1).grad_fn._sequence_nr() - start\n")
    for name in tensors:
        assert node_info(gw, gw[name], leaves) == node_info(pt, pt[name], leaves), name
        assert gw[name]._version == pt[name]._version, name
        np.testing.assert_allclose(to_numpy(gw[name]), to_numpy(pt[name]), rtol=rtol, err_msg=name)
    for name in leaves:
        assert_same(gw[name].grad, pt[name].grad, rtol=rtol)
    assert gw["_end"] == pt["_end"]  # the same number of sequence numbers used
    return gw, pt


# ---------------------------------------------------------------- 1. anomaly mode: parents

def anomaly_warnings(lib, make_error):
    """The warnings of a failing backward under detect_anomaly: (error text, warning texts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            with pytest.raises(Exception) as info:
                make_error(lib)
    texts = [message(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return message(info.value), [t for t in texts if "Anomaly Detection has been enabled" not in t]


def nan_in_second_order(lib):
    x = lib.tensor([0.0, 2.0], requires_grad=True)
    y = x ** 0.5  # the parent's line
    gx, = lib.autograd.grad(y.sum(), x, create_graph=True)  # the failing node's line
    (gx * 0).sum().backward()


def nan_in_third_order(lib):
    x = lib.tensor([0.0, 2.0], requires_grad=True)
    y = x ** 2.5  # the grandparent's line
    g1, = lib.autograd.grad(y.sum(), x, create_graph=True)  # the parent's line
    g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)  # the failing node's line
    (g2 * 0).sum().backward()


def check_warnings(ours, theirs, heads, marks):
    assert len(ours) == len(theirs) == len(heads)
    for mine, real, head, mark in zip(ours, theirs, heads, marks):
        assert mine.startswith(head) and real.startswith(head)
        assert mark in mine and mark in real  # the user's line, in both libraries' stacks
        assert "src/gradwalk" not in mine  # gradwalk's own frames are left out


def test_anomaly_mode_names_the_node_whose_backward_made_the_failing_node():
    error, ours = anomaly_warnings(gradwalk, nan_in_second_order)
    t_error, theirs = anomaly_warnings(torch, nan_in_second_order)
    assert error == t_error == "Function 'PowBackward0' returned nan values in its 0th output."
    check_warnings(ours, theirs, [
        "Error detected in PowBackward0. Traceback of forward call that caused the error:\n",
        "\n\nPrevious calculation was induced by PowBackward0. Traceback of forward call that "
        "induced the previous calculation:\n"],
        ["# the failing node's line", "# the parent's line"])


def test_anomaly_mode_walks_every_ancestor():
    _, ours = anomaly_warnings(gradwalk, nan_in_third_order)
    _, theirs = anomaly_warnings(torch, nan_in_third_order)
    previous = ("\n\nPrevious calculation was induced by PowBackward0. Traceback of forward call "
                "that induced the previous calculation:\n")
    check_warnings(ours, theirs, [
        "Error detected in PowBackward0. Traceback of forward call that caused the error:\n",
        previous, previous],
        ["# the failing node's line", "# the parent's line", "# the grandparent's line"])


@pytest.mark.parametrize("lib", [gradwalk, torch], ids=["gradwalk", "torch"])
def test_parent_is_in_the_metadata_of_nodes_made_during_backward(lib):
    with lib.autograd.set_detect_anomaly(True):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        gx, = lib.autograd.grad(y.sum(), x, create_graph=True)
    assert sorted(y.grad_fn.metadata) == ["traceback_"]  # made by the forward: no parent
    assert sorted(gx.grad_fn.metadata) == ["parent_", "traceback_"]
    assert gx.grad_fn.metadata["parent_"] is y.grad_fn
    leaf_node = y.grad_fn.next_functions[0][0]  # AccumulateGrad keeps its stack too
    assert "traceback_" in leaf_node.metadata


def failing_custom_function(lib):
    class Fails(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("boom")

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.set_detect_anomaly(False):
        y = Fails.apply(x)  # made outside anomaly mode: no stack to show
    y.sum().backward()


def test_a_node_made_outside_anomaly_mode_has_no_forward_information():
    error, ours = anomaly_warnings(gradwalk, failing_custom_function)
    t_error, theirs = anomaly_warnings(torch, failing_custom_function)
    assert error == t_error == "boom"
    assert ours == theirs == [
        "Error detected in FailsBackward. No forward pass information available. Enable detect "
        "anomaly during forward pass for more information."]


# ---------------------------------------------------------------- 2. mark_dirty on a view

MUL_INTO = """
class MulInto(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, w):
        ctx.save_for_backward(v.detach().clone(), w)
        v.mul_(w)
        ctx.mark_dirty(v)
        return v

    @staticmethod
    def backward(ctx, grad):
        old, w = ctx.saved_tensors
        return grad * w, grad * old

x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
w = torch.tensor([2., 3.], requires_grad=True)
"""


@pytest.mark.parametrize("snippet", [
    """
    h = x * 1
    v = h[1:3]
    out = MulInto.apply(v, w)
    same = out is v
    (h * torch.tensor([1., 10., 100., 1000.])).sum().backward()
    """,
    """
    h = (x * 2).view(2, 2)
    v = h.t()[1]
    out = MulInto.apply(v, w)
    same = out is v
    (h ** 2).sum().backward()
    """,
    """
    h = x.detach() * 1
    v = h[1:3]
    out = MulInto.apply(v, w)
    same = out is v
    (h * torch.tensor([1., 10., 100., 1000.])).sum().backward()
    """,
], ids=["slice", "row of a transpose", "base needs no grad"])
def test_mark_dirty_on_a_view_rebases_its_base_onto_copy_slices(snippet):
    gw, pt = compare(MUL_INTO + textwrap.dedent(snippet), ("h", "v", "out"), ("x", "w"))
    assert gw["same"] and pt["same"]
    assert type(pt["out"].grad_fn).__name__ == "AsStridedBackward0"
    base = pt["h"] if pt["h"]._base is None else pt["h"]._base
    assert type(base.grad_fn).__name__ == "CopySlices"


@pytest.mark.parametrize("snippet", [
    "MulInto.apply(x[1:3], w)",
    "h = x * 1\nwith torch.no_grad():\n    v = h[1:3]\nMulInto.apply(v, w)",
    "h = x * 1\na, b = h.split(2)\nMulInto.apply(a, w)",
    """
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, w):
        v.mul_(w)
        ctx.mark_dirty(v)
        return v, w * 2

    @staticmethod
    def backward(ctx, g, g2):
        return g, g2

Two.apply((x * 1)[1:3], w)
""",
], ids=["view of a leaf", "view made under no_grad", "output of split", "two outputs"])
def test_mark_dirty_on_a_view_errors(snippet):
    assert_same_error(MUL_INTO + textwrap.dedent(snippet))


# ---------------------------------------------------------------- 3. mixed basic + advanced setitem

SETITEM_LEAVES = """
x = torch.arange(12.).reshape(3, 4).requires_grad_()
w = torch.tensor([[10., 20.], [30., 40.]], requires_grad=True)
y = torch.arange(24.).reshape(2, 3, 4).requires_grad_()
"""
SCALE = "torch.arange(1., 13.).reshape(3, 4)"


@pytest.mark.parametrize("snippet", [
    f"d = x * 1\nd[1:, [0, 1]] = w\n(d * {SCALE}).sum().backward()",
    f"d = x * 1\nd[0, [0, 2]] = w[0]\n(d * {SCALE}).sum().backward()",
    f"d = x * 1\nd[1:, [0, 1]] = w.reshape(1, 1, 2, 2) * 1\n(d * {SCALE}).sum().backward()",
    f"d = x * 1\nd[[0, 2]] = w.sum()\n(d * {SCALE}).sum().backward()",
    f"d = x * 1\nd[:, [0, 2]] = 5.\n(d * {SCALE}).sum().backward()",
    f"d = x * 1\nd[..., [1, 2]] = w[1]\n(d * {SCALE}).sum().backward()",
    f"d = x * 1\nd[1:][d[1:] > 5] = w.sum()\n(d * {SCALE}).sum().backward()",
    """
d = y * 1
d[[0, 1], 1:, [1, 2]] = w[:, :1] * 1 + w[0]
d[None, 1, ..., [0, 3]] = w[1, 1]
d[0, d[0] > 5] = w[0, 0] * 2
(d * torch.arange(24.).reshape(2, 3, 4)).sum().backward()
""",
], ids=["slice then list", "int then list", "value with leading 1s", "list only",
        "full slice then list", "ellipsis then list", "mask on a slice", "3-d mixtures"])
def test_setitem_with_basic_and_advanced_parts_matches(snippet):
    compare(SETITEM_LEAVES + snippet, ("d",), ("x", "w", "y"))


def test_setitem_mixed_index_second_order():
    gw, pt = run_both(SETITEM_LEAVES + """
d = x * x
d[1:, [0, 1]] = w * w
gx, gw = torch.autograd.grad((d * d).sum(), (x, w), create_graph=True)
hx, hw = torch.autograd.grad(gx.sum() + (gw * gw).sum(), (x, w))
""")
    for name in ("gx", "gw", "hx", "hw"):
        assert_same(gw[name], pt[name])


def test_setitem_mixed_index_on_a_no_grad_view_errors():
    assert_same_error(SETITEM_LEAVES + """
d = x * 1
with torch.no_grad():
    e = d[1:]
e[:, [0]] = torch.tensor(2., requires_grad=True)
""")


# ---------------------------------------------------------------- 4. conv2d double backward

CONV = """
rng = np.random.default_rng(0)
x = torch.tensor(rng.standard_normal((2, 3, 5, 5)), requires_grad={x})
w = torch.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad={w})
b = torch.tensor(rng.standard_normal(4), requires_grad=True)
y = F.conv2d(x, w, {bias}, stride={stride}, padding=1, groups=1)
inputs = [t for t in ({inputs}) if t.requires_grad]
grads = torch.autograd.grad((y ** 3).sum(), inputs, create_graph=True)
g0 = grads[0]
g1 = grads[-1]
second = torch.autograd.grad(sum((g * g * g).sum() for g in grads), inputs)
"""


@pytest.mark.parametrize("x_grad, w_grad, bias, stride", [
    (True, True, "b", 1), (True, True, "None", 2), (False, True, "b", 1), (True, False, "b", 2),
    (True, False, "None", 1)])
def test_conv2d_double_backward_is_one_node(x_grad, w_grad, bias, stride):
    inputs = "x, w, b" if bias == "b" else "x, w"
    snippet = CONV.format(x=x_grad, w=w_grad, bias=bias, stride=stride, inputs=inputs)
    gw, pt = compare(snippet, ("y", "g0", "g1"), ("x", "w", "b"), rtol=1e-9)
    assert pt["g0"].grad_fn.name() == "ConvolutionBackwardBackward0"
    assert gw["g0"].grad_fn is gw["g1"].grad_fn  # one node, several outputs
    assert [g.output_nr for g in gw["grads"]] == [g.output_nr for g in pt["grads"]]
    for ours, theirs in zip(gw["second"], pt["second"]):
        assert_same(ours, theirs, rtol=1e-9)


def test_unbatched_conv2d_double_backward():
    compare("""
rng = np.random.default_rng(1)
x = torch.tensor(rng.standard_normal((3, 5, 5)), requires_grad=True)
w = torch.tensor(rng.standard_normal((2, 3, 3, 3)), requires_grad=True)
y = F.conv2d(x, w)
gx, = torch.autograd.grad((y * y).sum(), x, create_graph=True)
gx.pow(2).sum().backward()
""", ("y", "gx"), ("x", "w"), rtol=1e-9)
