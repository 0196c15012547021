"""Gaps found by running PyTorch's own test/test_autograd.py bodies (session 5, part b), each
checked beside real PyTorch: torch._C._current_autograd_node, sum/mean(dim=None), the profiler's
randn events, and the recurrent layers (nn.RNN/LSTM/GRU and their cells)."""
import numpy as np
import pytest
import torch

import gradwalk


# --- torch._C._current_autograd_node ---------------------------------------------------------

def _nodes_seen_by_hooks(lib):
    """The node names a tensor hook and a custom backward see, and what is seen outside."""
    seen = []

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(lib._C._current_autograd_node().name())
            return g * 2

    a = lib.ones(3, requires_grad=True)
    b = Double.apply(a)
    c = b.exp()
    c.register_hook(lambda g: seen.append(lib._C._current_autograd_node().name()))
    before = lib._C._current_autograd_node()
    c.sum().backward()
    return before, seen, lib._C._current_autograd_node()


def test_current_autograd_node_is_the_running_node():
    before, seen, after = _nodes_seen_by_hooks(gradwalk)
    t_before, t_seen, t_after = _nodes_seen_by_hooks(torch)
    assert before is None and after is None
    assert t_before is None and t_after is None
    assert seen == t_seen == ["ExpBackward0", "DoubleBackward"]


def _post_hook_registered_in_unpack(lib):
    """PyTorch's test_node_post_hook_registered_during_unpack_hook: an unpack hook registers a
    post hook on the running node; it runs, and sees no inputs (PyTorch moved them)."""
    inputs_seen = []

    def unpack(t):
        node = lib._C._current_autograd_node()

        def hook(grad_inputs, grad_outputs):
            inputs_seen.append(all(g is None for g in grad_outputs))
            return tuple(g / 2.0 if g is not None else None for g in grad_inputs)

        node.register_hook(hook)
        return t

    a = lib.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        var, mean = lib.var_mean(a, dim=0)
        (var + mean).sum().backward()
    return a.grad.numpy(), inputs_seen


def test_post_hook_registered_by_unpack_hook_runs():
    grad, inputs_seen = _post_hook_registered_in_unpack(gradwalk)
    t_grad, t_inputs_seen = _post_hook_registered_in_unpack(torch)
    np.testing.assert_array_equal(grad, t_grad)
    assert inputs_seen == t_inputs_seen and inputs_seen and all(inputs_seen)


# --- sum/mean(dim=None) are the dim overloads -------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "std", "var"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": None}, {"dim": None, "keepdim": True}])
def test_reductions_with_dim_none_make_pytorchs_node(name, kwargs):
    data = np.arange(6.0).reshape(2, 3)
    x = gradwalk.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out, t_out = getattr(x, name)(**kwargs), getattr(tx, name)(**kwargs)
    assert out.grad_fn.name() == t_out.grad_fn.name()
    assert tuple(out.shape) == tuple(t_out.shape)
    np.testing.assert_array_equal(out.detach().numpy(), t_out.detach().numpy())
    out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_sum_dim_none_is_sumbackward1_and_sum_is_sumbackward0():
    x = gradwalk.ones(2, 3, requires_grad=True)
    assert type(x.sum().grad_fn).__name__ == "SumBackward0"
    assert type(x.sum(dim=None).grad_fn).__name__ == "SumBackward1"
    assert type(gradwalk.sum(x, None).grad_fn).__name__ == "SumBackward1"
    assert type(x.mean(None).grad_fn).__name__ == "MeanBackward1"


# --- the profiler's events for randn ----------------------------------------------------------

def _profiled_events(lib, profile):
    with profile() as p:
        x = lib.randn(4, 4, requires_grad=True)
        x.sum(dim=None).backward()
    names = ("aten::randn", "aten::normal_", "aten::sum", "autograd::engine::evaluate_function: SumBackward1")
    return [(e.name, [c.name for c in e.cpu_children]) for e in p.function_events if e.name in names], \
        [e.sequence_nr for e in p.function_events if e.name in names[2:]]


def test_profiler_records_randn_as_empty_then_normal():
    from gradwalk.autograd.profiler import profile
    from torch.autograd.profiler import profile as t_profile

    events, seqs = _profiled_events(gradwalk, profile)
    t_events, t_seqs = _profiled_events(torch, t_profile)
    assert [e[0] for e in events] == [e[0] for e in t_events] == [
        "aten::randn", "aten::normal_", "aten::sum", "autograd::engine::evaluate_function: SumBackward1"]
    assert events[0] == t_events[0] == ("aten::randn", ["aten::empty", "aten::normal_"])
    assert seqs[0] == seqs[1] >= 0 and t_seqs[0] == t_seqs[1] >= 0
