"""Hooks in PyTorch's order (facts §8): tensor hooks, retain_grad, node pre/post hooks,
post-accumulate-grad hooks, RemovableHandle. Each scenario runs in both libraries and the logs
must be identical."""
import numpy as np

import gradwalk
import torch
from parity import to_numpy


def values(g):
    if g is None:
        return None
    if isinstance(g, tuple):
        return tuple(values(x) for x in g)
    return to_numpy(g).tolist()


def hooks_everywhere(lib):
    """The verified scenario of facts §8: ``h = x*3; y = (h*h).sum()`` with hooks everywhere."""
    log = []
    x = lib.tensor([2.0, 4.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    h.register_hook(lambda g: log.append(("h hook1", values(g))))
    h.register_hook(lambda g: (log.append(("h hook2", values(g))), g * 10)[1])
    h.register_hook(lambda g: log.append(("h hook3", values(g))))
    h.retain_grad()
    h.register_hook(lambda g: log.append(("h hook4", values(g))))
    mul = h.grad_fn
    mul.register_prehook(lambda gout: log.append(("Mul(x*3) prehook", values(gout))))
    mul.register_hook(lambda gin, gout: log.append(("Mul(x*3) posthook", values(gin), values(gout))))
    x.register_hook(lambda g: log.append(("x hook", values(g))))
    acc = mul.next_functions[0][0]
    acc.register_prehook(lambda gout: log.append(("Acc prehook", values(gout))))
    x.register_post_accumulate_grad_hook(lambda p: log.append(("x post-accumulate", values(p.grad))))
    acc.register_hook(lambda gin, gout: log.append(("Acc posthook", values(gin), values(gout))))
    y.backward()
    return log, values(h.grad), values(x.grad)


def test_hooks_everywhere_run_in_pytorch_order():
    ours, theirs = hooks_everywhere(gradwalk), hooks_everywhere(torch)
    assert ours == theirs
    log, h_grad, x_grad = ours
    assert log == [
        ("h hook1", [12.0, 24.0]),
        ("h hook2", [12.0, 24.0]),
        ("h hook3", [120.0, 240.0]),
        ("h hook4", [120.0, 240.0]),
        ("Mul(x*3) prehook", ([120.0, 240.0],)),
        ("Mul(x*3) posthook", ([360.0, 720.0], None), ([120.0, 240.0],)),
        ("x hook", [360.0, 720.0]),
        ("Acc prehook", ([360.0, 720.0],)),
        ("x post-accumulate", [360.0, 720.0]),
        ("Acc posthook", (), ([360.0, 720.0],)),
    ]
    assert h_grad == [120.0, 240.0]  # retain_grad stores the value after all tensor hooks


def run(lib, scenario):
    log = []
    scenario(lib, log)
    return log


def test_tensor_used_twice_hook_fires_once_with_the_sum():
    def scenario(lib, log):
        x = lib.ones(2, requires_grad=True)
        h = x * 1
        h.register_hook(lambda g: log.append(values(g)))
        (h * 2 + h * 5).sum().backward()

    assert run(gradwalk, scenario) == run(torch, scenario) == [[7.0, 7.0]]


def test_hook_on_the_root_sees_the_seed():
    def scenario(lib, log):
        x = lib.ones(2, requires_grad=True)
        y = (x * 2).sum()
        y.register_hook(lambda g: log.append(values(g)))
        y.backward()

    assert run(gradwalk, scenario) == run(torch, scenario) == [1.0]


def test_hook_registered_before_an_in_place_op_sees_the_old_value_gradient():
    """Facts §8: ``h=x*1; hook A; h.mul_(3); hook B`` → B sees [6,12] first, then A [18,36]."""
    def scenario(lib, log):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        h.register_hook(lambda g: log.append(("A", values(g))))
        h.mul_(3)
        h.register_hook(lambda g: log.append(("B", values(g))))
        (h * lib.tensor([6.0, 12.0]) / 3 * 3).sum().backward()

    assert run(gradwalk, scenario) == run(torch, scenario)
    assert [name for name, _ in run(gradwalk, scenario)] == ["B", "A"]


def test_removable_handles():
    def scenario(lib, log):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        handle = y.register_hook(lambda g: log.append("tensor"))
        pre = y.grad_fn.register_prehook(lambda g: log.append("pre"))
        post = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        acc = x.register_post_accumulate_grad_hook(lambda p: log.append("acc"))
        y.sum().backward(retain_graph=True)
        for h in (handle, pre, post, acc):
            h.remove()
        y.sum().backward()
        log.append(values(x.grad))

    assert run(gradwalk, scenario) == run(torch, scenario) == ["tensor", "pre", "post", "acc", [4.0, 4.0]]


def test_hooks_can_replace_gradients():
    def scenario(lib, log):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(lambda gout: (gout[0] * 10,))
        y.grad_fn.register_hook(lambda gin, gout: (gin[0] + 1, gin[1]))
        x.register_hook(lambda g: g * -1)
        y.sum().backward()
        log.append(values(x.grad))

    assert run(gradwalk, scenario) == run(torch, scenario) == [[-21.0, -21.0]]


def test_leaf_tensor_hook_changes_what_is_accumulated():
    def scenario(lib, log):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 2)
        (x * 3).sum().backward()
        log.append(values(x.grad))

    assert run(gradwalk, scenario) == run(torch, scenario) == [[6.0, 6.0]]


def test_retain_grad_on_leaf_is_a_no_op_and_on_non_leaf_accumulates():
    def scenario(lib, log):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.retain_grad()
        h = x * 2
        h.retain_grad()
        log.append((x.retains_grad, h.retains_grad))
        out = (h * h).sum()
        out.backward(retain_graph=True)
        log.append(values(h.grad))
        out.backward()
        log.append(values(h.grad))

    assert run(gradwalk, scenario) == run(torch, scenario) == [(False, True), [4.0, 8.0], [8.0, 16.0]]


def test_grad_mode_inside_hooks():
    def scenario(lib, log):
        x = lib.tensor(1.0, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: log.append(lib.is_grad_enabled()))
        y.backward(retain_graph=True)
        lib.autograd.grad(y, x, create_graph=True)

    assert run(gradwalk, scenario) == run(torch, scenario) == [False, True]


def test_node_hooks_see_none_for_inputs_without_grad():
    def scenario(lib, log):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([3.0, 4.0])
        y = x * c
        y.grad_fn.register_hook(lambda gin, gout: log.append(values(gin)))
        y.sum().backward()

    assert run(gradwalk, scenario) == run(torch, scenario) == [([3.0, 4.0], None)]


def test_post_accumulate_grad_hook_runs_for_every_backward():
    def scenario(lib, log):
        p = lib.tensor([1.0], requires_grad=True)
        p.register_post_accumulate_grad_hook(lambda t: log.append(values(t.grad)))
        (p * 2).sum().backward()
        (p * 3).sum().backward()

    assert run(gradwalk, scenario) == run(torch, scenario) == [[2.0], [5.0]]


def test_saved_tensors_hooks_pack_and_unpack():
    def scenario(lib, log):
        x = lib.tensor([1.0, 2.0], requires_grad=True)

        def pack(t):
            log.append(("pack", values(t)))
            return t

        def unpack(t):
            log.append(("unpack", values(t)))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x * x
            z = y.exp()
            w = z * 2.0
        w.sum().backward()
        log.append(("grad", values(x.grad)))

    ours, theirs = run(gradwalk, scenario), run(torch, scenario)
    assert [e[0] for e in ours] == [e[0] for e in theirs]
    assert [e[0] for e in ours].count("pack") == 3  # x twice and exp's result; never the 2.0
    np.testing.assert_allclose(ours[-1][1], theirs[-1][1], rtol=1e-6)
