"""Module backward hooks, as the tutorials use them (the "nn package" tutorial's
``register_backward_hook`` on a Conv2d, ``register_full_backward_hook`` and its pre-hook),
written as our own snippets and run under gradwalk and under PyTorch."""
import warnings

import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same, assert_same_error, run_both


def calls_in_both(snippet):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gw, pt = run_both(snippet)
    return gw, pt


def test_full_backward_hooks_see_grad_input_and_grad_output():
    gw, pt = calls_in_both("""
        torch.manual_seed(0)
        calls = []
        def full(m, grad_input, grad_output):
            calls.append(("full", type(m).__name__, [None if g is None else g.clone() for g in grad_input],
                          [g.clone() for g in grad_output]))
        def pre(m, grad_output):
            calls.append(("pre", type(m).__name__, [], [g.clone() for g in grad_output]))
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        net[0].register_full_backward_hook(full)
        net[2].register_full_backward_hook(full)
        net[2].register_full_backward_pre_hook(pre)
        x = torch.randn(5, 3, requires_grad=True)
        out = net(x)
        node = type(out.grad_fn).__name__
        out.sum().backward()
    """)
    assert gw["node"] == pt["node"] == "BackwardHookFunctionBackward"
    assert [c[:2] for c in gw["calls"]] == [c[:2] for c in pt["calls"]]
    for ours, theirs in zip(gw["calls"], pt["calls"]):
        for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3], strict=True):
            assert_same(a, b)
    assert_same(gw["x"].grad, pt["x"].grad)


def test_a_full_backward_hook_replaces_grad_input():
    gw, pt = calls_in_both("""
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
        net[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
        net[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
        x = torch.randn(5, 3, requires_grad=True)
        net(x).sum().backward()
    """)
    assert_same(gw["x"].grad, pt["x"].grad)
    assert_same(gw["net"][0].weight.grad, pt["net"][0].weight.grad)


def test_a_full_backward_hook_fires_at_the_output_when_no_input_requires_grad():
    gw, pt = calls_in_both("""
        seen = []
        lin = torch.nn.Linear(3, 2)
        lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, tuple(go[0].shape))))
        lin(torch.ones(4, 3)).sum().backward()
    """)
    assert gw["seen"] == pt["seen"] == [((None,), (4, 2))]


def test_the_deprecated_backward_hook_sees_the_last_nodes_gradients():
    gw, pt = calls_in_both("""
        torch.manual_seed(0)
        seen = []
        def hook(m, grad_input, grad_output):
            seen.append((type(grad_input).__name__, [None if g is None else g.clone() for g in grad_input],
                         [g.clone() for g in grad_output]))
        conv = torch.nn.Conv2d(1, 2, 3)
        conv.register_backward_hook(hook)
        conv(torch.randn(1, 1, 5, 5)).sum().backward()
        seq = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
        seq.register_backward_hook(hook)
        seq(torch.randn(2, 3)).pow(2).sum().backward()
    """)
    assert len(gw["seen"]) == len(pt["seen"]) == 2
    for ours, theirs in zip(gw["seen"], pt["seen"]):
        assert ours[0] == theirs[0] == "tuple"
        for a, b in zip(ours[1] + ours[2], theirs[1] + theirs[2], strict=True):
            assert_same(a, b, rtol=1e-5, atol=1e-6)


def test_the_deprecated_hook_warns_when_the_module_has_several_nodes():
    import gradwalk

    for lib in (torch, gradwalk):
        seq = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 2))
        seq.register_backward_hook(lambda m, gi, go: None)
        with pytest.warns(FutureWarning, match="non-full backward hook when the forward contains multiple"):
            seq(lib.randn(2, 3))


@pytest.mark.parametrize("first, second", [("register_backward_hook", "register_full_backward_hook"),
                                           ("register_full_backward_hook", "register_backward_hook")])
def test_both_kinds_of_backward_hook_on_one_module_are_refused(first, second):
    assert_same_error(f"""
        lin = torch.nn.Linear(2, 2)
        lin.{first}(lambda m, gi, go: None)
        lin.{second}(lambda m, gi, go: None)
    """)


def test_a_custom_functions_node_prints_as_in_pytorch():
    gw, pt = run_both("""
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, g):
                return g * 2
        y = Double.apply(torch.ones(2, requires_grad=True))
        text = repr(y.grad_fn).split(" object at ")[0]
    """)
    assert gw["text"] == pt["text"] == "<torch.autograd.function.DoubleBackward"
