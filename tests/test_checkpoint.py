"""Checkpointing and saved-tensor hooks, side by side with PyTorch."""
import numpy as np
import pytest

import gradwalk
from conftest import assert_same, assert_same_error, run_both

SETUP = """
import importlib, warnings
cp = importlib.import_module(torch.__name__ + ".utils.checkpoint")
calls = []
def block(x):
    calls.append(1)
    return (x * 2.0).tanh().exp()
x = torch.tensor([0.1, 0.2, -0.3], dtype=torch.float64, requires_grad=True)
"""


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_same_gradients_and_nodes_and_two_calls(use_reentrant):
    gw, pt = run_both(SETUP + f"""
y = cp.checkpoint(block, x, use_reentrant={use_reentrant})
name = type(y.grad_fn).__name__
calls_after_forward = len(calls)
y.sum().backward()
""")
    for ns in (gw, pt):
        assert ns["name"] == ("CheckpointFunctionBackward" if use_reentrant else "ExpBackward0")
        assert ns["calls_after_forward"] == 1 and len(ns["calls"]) == 2
    assert_same(gw["x"].grad, pt["x"].grad)


def test_omitting_use_reentrant_warns_and_uses_the_reentrant_variant():
    gw, pt = run_both(SETUP + """
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = cp.checkpoint(block, x)
messages = [str(w.message) for w in caught]
name = type(y.grad_fn).__name__
""")
    assert gw["messages"] == pt["messages"]
    assert gw["messages"][0].startswith("torch.utils.checkpoint: the use_reentrant parameter should")
    assert gw["name"] == pt["name"] == "CheckpointFunctionBackward"


def test_non_reentrant_works_with_autograd_grad_and_keyword_arguments():
    gw, pt = run_both(SETUP + """
def scaled(x, scale=1.0):
    return (x * scale).sin()
y = cp.checkpoint(scaled, x, use_reentrant=False, scale=3.0)
g, = torch.autograd.grad(y.sum(), x)
""")
    assert_same(gw["g"], pt["g"])


def test_reentrant_rejects_keyword_arguments():
    assert_same_error(SETUP + "cp.checkpoint(block, x, use_reentrant=True, scale=3.0)")


def test_checkpoint_sequential_matches():
    gw, pt = run_both(SETUP + """
fs = [lambda t: t.sin(), lambda t: t * 3.0, lambda t: t.exp(), lambda t: t.tanh()]
y = cp.checkpoint_sequential(fs, 2, x, use_reentrant=False)
y.sum().backward()
name = type(y.grad_fn).__name__
""")
    assert gw["name"] == pt["name"] == "TanhBackward0"
    assert_same(gw["x"].grad, pt["x"].grad)


def test_dropout_inside_a_checkpoint_is_replayed_with_the_same_mask():
    x = gradwalk.ones(200, dtype=gradwalk.float64, requires_grad=True)
    F = gradwalk.nn.functional
    from gradwalk.utils.checkpoint import checkpoint

    y = checkpoint(lambda t: F.dropout(t, 0.5, training=True) * t, x, use_reentrant=False)
    y.sum().backward()
    # d/dx (mask * x * x) = 2 * mask * x: the recomputed mask must be the forward's mask
    np.testing.assert_array_equal(x.grad.numpy(), 2 * y.detach().numpy())


SAVED_BYTES = """
import importlib
cp = importlib.import_module(torch.__name__ + ".utils.checkpoint")
nbytes = []
def pack(t):
    nbytes.append(t.numel() * t.element_size())
    return t
x = torch.ones(4, 8, requires_grad=True)
layers = [(lambda t: (t * t).exp().sin()) for _ in range(3)]
with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    y = x
    for layer in layers:
        y = {wrap}
y.sum().backward()
total = sum(nbytes)
"""


def test_checkpointing_saves_fewer_bytes_exactly_as_pytorch_does():
    plain = run_both(SAVED_BYTES.format(wrap="layer(y)"))
    checkpointed = run_both(SAVED_BYTES.format(wrap="cp.checkpoint(layer, y, use_reentrant=False)"))
    reentrant = run_both(SAVED_BYTES.format(wrap="cp.checkpoint(layer, y, use_reentrant=True)"))
    for gw, pt in (plain, checkpointed, reentrant):
        assert gw["nbytes"] == pt["nbytes"]
        assert_same(gw["x"].grad, pt["x"].grad)
    assert plain[0]["total"] == 3 * 4 * 128  # x twice, exp's result and sin's input, per layer
    assert checkpointed[0]["total"] == reentrant[0]["total"] == 3 * 128  # only each layer's input


# ---------------------------------------------------------------- saved_tensors_hooks

def test_saved_tensors_hooks_pack_three_tensors_and_not_the_wrapped_scalar():
    gw, pt = run_both("""
packed, unpacked = [], []
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.detach().tolist()) or t,
                                              lambda t: unpacked.append(1) or t):
    y = x * x
    z = y.exp()
    w = z * 2.0
after_forward = len(unpacked)
w.sum().backward()
""")
    assert len(gw["packed"]) == len(pt["packed"]) == 3
    np.testing.assert_allclose(gw["packed"], pt["packed"], rtol=1e-6)
    assert gw["after_forward"] == pt["after_forward"] == 0
    assert len(gw["unpacked"]) == len(pt["unpacked"]) == 3
    assert_same(gw["x"].grad, pt["x"].grad)


def test_reading_a_saved_tensor_calls_unpack():
    gw, pt = run_both("""
unpacked = []
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: unpacked.append(1) or t):
    y = x.exp()
value = y.grad_fn._saved_result.tolist()
""")
    assert gw["unpacked"] == pt["unpacked"] == [1]
    np.testing.assert_allclose(gw["value"], pt["value"], rtol=1e-6)


def test_unpack_can_substitute_the_value_backward_uses():
    gw, pt = run_both("""
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 0 + 5):
    y = x * x
y.sum().backward()
""")
    assert_same(gw["x"].grad, pt["x"].grad)
    assert gw["x"].grad.tolist() == [10.0, 10.0]


def test_custom_function_saves_go_through_the_hooks():
    gw, pt = run_both("""
packed = []
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([3.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.shape) or t, lambda t: t):
    y = Sq.apply(x)
y.backward()
""")
    assert len(gw["packed"]) == len(pt["packed"]) == 1
    assert_same(gw["x"].grad, pt["x"].grad)
