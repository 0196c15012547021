"""The stepper runs the real engine one node at a time: same order as PyTorch's pre-hooks record,
same gradients, hooks and errors as backward(), and JSON records as docs/lab-api.md describes."""
import json
import random
import threading

import numpy as np
import pytest
import torch

import gradwalk
from gradwalk.autograd import stepper, watch_backward

ERR_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


def torch_order(output):
    """(node name, seq, first gradient received) in the order PyTorch's engine runs the nodes:
    a pre-hook on every node, as in the seeds' table."""
    rows, seen, stack = [], set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: rows.append(
            (node.name(), node._sequence_nr(), grads[0].detach().numpy().copy())))
        stack.extend(fn for fn, _ in node.next_functions)
    output.backward()
    return rows


def stepper_order(s):
    rows = []
    for record in s:
        seq = record["seq"] if record["seq"] is not None else 2**64 - 1
        rows.append((record["name"], seq, np.array(record["grad_in"][0]["data"])))
    return rows


def relative_seqs(rows):
    """Sequence counters differ between processes and libraries; numbers relative to the
    graph's first node don't (AccumulateGrad keeps MAX)."""
    first = min(seq for _, seq, _ in rows if seq != 2**64 - 1)
    return [(name, seq if seq == 2**64 - 1 else seq - first) for name, seq, _ in rows]


def assert_same_order(ours, theirs):
    assert relative_seqs(ours) == relative_seqs(theirs)
    for (_, _, a), (_, _, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def neuron(lib):
    w = lib.tensor(0.5, requires_grad=True)
    x = lib.tensor(2.0, requires_grad=True)
    b = lib.tensor(-0.3, requires_grad=True)
    y = lib.tanh(w * x + b)
    return y, {"w": w, "x": x, "b": b}


def mixed(lib):
    p = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
    q = lib.tensor(1.3, dtype=lib.float64, requires_grad=True)
    r = lib.tensor(0.4, dtype=lib.float64, requires_grad=True)
    t1 = p + q; t2 = t1 - r; t3 = t2 * p; t4 = t3 / q; t5 = t4 ** 2  # noqa: E702
    t6 = lib.tanh(t5); t7 = lib.exp(t6); t8 = lib.log(t7 + 1.0)  # noqa: E702
    t9 = lib.sin(t8) + lib.cos(r); t10 = lib.sigmoid(t9); out = lib.relu(t10 - 0.5)  # noqa: E702
    return out, {"p": p, "q": q, "r": r}


def two_paths(lib):
    x = lib.tensor(2.0, requires_grad=True)
    y = lib.tensor(3.0, requires_grad=True)
    z = lib.tensor(4.0, requires_grad=True)
    return x * y + x * z, {"x": x, "y": y, "z": z}


def names_of(leaves):
    return {t: name for name, t in leaves.items()}


@pytest.mark.parametrize("example", [neuron, mixed, two_paths])
def test_steps_follow_pytorchs_order_and_gradients(example):
    theirs = torch_order(example(torch)[0])
    out, leaves = example(gradwalk)
    s = stepper(out, names=names_of(leaves))
    assert_same_order(stepper_order(s), theirs)
    t_out, t_leaves = example(torch)
    t_out.backward()
    for name, leaf in leaves.items():
        np.testing.assert_allclose(leaf.grad.numpy(), t_leaves[name].grad.numpy(), rtol=1e-6)


def in_fresh_thread(fn):
    """Sequence numbers are per thread and start at 0 in a new one (facts §2)."""
    result = []
    thread = threading.Thread(target=lambda: result.append(fn()))
    thread.start()
    thread.join()
    return result[0]


def test_neuron_records_read_like_the_seeds_table():
    y, leaves = in_fresh_thread(lambda: neuron(gradwalk))
    s = stepper(y, names=names_of(leaves))
    graph = s.graph
    assert graph["root"] == "n0"
    assert graph["seed"] == {"shape": [], "dtype": "float32", "data": 1.0}
    by_id = {node["id"]: node for node in graph["nodes"]}
    assert [by_id[f"n{i}"]["name"] for i in range(3)] == ["TanhBackward0", "AddBackward0", "MulBackward0"]
    assert {node["variable"]: node["dependencies"] for node in graph["nodes"] if node["variable"]} == \
        {"w": 1, "x": 1, "b": 1}
    assert by_id["n0"]["saved"][0]["name"] == "result" and by_id["n0"]["saved"][0]["freed"] is False
    records = s.run()
    assert [r["text"] for r in records] == [
        "popped TanhBackward0 (seq 2) with gradient 1, sent 0.6347 to AddBackward0",
        "popped AddBackward0 (seq 1) with gradient 0.6347, sent 0.6347 to MulBackward0 and 0.6347 "
        "to AccumulateGrad(b)",
        "popped AccumulateGrad(b) with gradient 0.6347, b.grad is now 0.6347",
        "popped MulBackward0 (seq 0) with gradient 0.6347, sent 1.269 to AccumulateGrad(w) and 0.3174 "
        "to AccumulateGrad(x)",
        "popped AccumulateGrad(w) with gradient 1.269, w.grad is now 1.269",
        "popped AccumulateGrad(x) with gradient 0.3174, x.grad is now 0.3174",
    ]
    add = records[1]
    assert [r["name"] for r in add["ready"]] == ["torch::autograd::AccumulateGrad", "MulBackward0"]
    assert {d["node"]: (d["before"], d["after"]) for d in add["dependencies"]} == \
        {"n2": (1, 0), "n5": (1, 0)}
    assert records[0]["released"] == ["result"]
    assert records[4]["leaf_grads"][0]["leaf"] == "w"
    assert s.done and s.step() is None
    json.dumps(s.to_dict())  # plain JSON all the way down


def test_input_buffer_sums_both_paths_before_the_leaf_runs():
    out, leaves = two_paths(gradwalk)
    s = stepper(out, names=names_of(leaves))
    records = s.run()
    acc_x = [r for r in records if r["leaf_grads"] and r["leaf_grads"][0]["leaf"] == "x"]
    assert len(acc_x) == 1 and acc_x[0]["grad_in"][0]["data"] == 7.0
    waiting = records[1]["buffers"]  # after the first Mul: x's buffer holds 4 and waits for 3 more
    assert len(waiting) == 1
    assert waiting[0]["slots"] == [{"shape": [], "dtype": "float32", "data": 4.0}]


def test_hooks_run_as_in_backward():
    calls = []
    out, leaves = neuron(gradwalk)
    leaves["w"].register_hook(lambda g: calls.append(("w hook", g.item())) or g * 2)
    out.grad_fn.register_prehook(lambda grads: calls.append(("tanh prehook", grads[0].item())))
    stepper(out).run()
    assert calls == [("tanh prehook", 1.0), ("w hook", pytest.approx(1.2694792))]
    assert leaves["w"].grad.item() == pytest.approx(2 * 1.2694792)


def test_second_pass_without_retain_graph_fails_at_the_first_freed_node():
    out, leaves = mixed(gradwalk)
    stepper(out).run()
    s = stepper(out)
    with pytest.raises(RuntimeError) as info:
        s.run()
    assert str(info.value) == ERR_TWICE
    t_out, _ = mixed(torch)
    t_out.backward()
    with pytest.raises(RuntimeError) as t_info:
        t_out.backward()
    assert str(t_info.value) == str(info.value)
    # ReluBackward0 saved its result, so the very first node fails
    assert [r["name"] for r in s.records] == ["ReluBackward0"]
    assert s.records[0]["error"]["message"] == ERR_TWICE
    assert s.to_dict()["error"]["type"] == "RuntimeError"
    assert s.done and s.step() is None


def test_second_pass_fails_later_when_the_first_nodes_saved_nothing():
    x = gradwalk.tensor(2.0, requires_grad=True)
    out = (x * x) + 1.0  # AddBackward0 saves nothing; MulBackward0 saved x twice
    stepper(out).run()
    s = stepper(out)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        s.run()
    assert [r["name"] for r in s.records] == ["AddBackward0", "MulBackward0"]
    assert "error" not in s.records[0] and "error" in s.records[1]


def test_retain_graph_allows_a_second_pass():
    out, leaves = neuron(gradwalk)
    first = stepper(out, retain_graph=True)
    first.run()
    assert all(r["released"] == [] for r in first.records)
    stepper(out).run()
    assert leaves["w"].grad.item() == pytest.approx(2 * 1.2694792)


def test_topo_mode_same_gradients_micrograds_order():
    out, leaves = neuron(gradwalk)
    s = stepper(out, mode="topo", names=names_of(leaves))
    order = [s.label(r["node"]) for r in s]
    # build(): children first in edge order -> [w, x, Mul, b, Add, Tanh], walked backwards
    assert order == ["TanhBackward0", "AddBackward0", "AccumulateGrad(b)", "MulBackward0",
                     "AccumulateGrad(x)", "AccumulateGrad(w)"]
    first_ready = [s.label(r["node"]) for r in s.records[0]["ready"]]
    assert first_ready == order[1:]  # topo's "ready" list: the rest of the list, in order
    t_out, t_leaves = neuron(torch)
    t_out.backward()
    for name in leaves:
        assert leaves[name].grad.item() == pytest.approx(t_leaves[name].grad.item())


def test_topo_mode_mixed_example_matches_gradients_and_counts_reach_zero():
    out, leaves = mixed(gradwalk)
    s = stepper(out, mode="topo", names=names_of(leaves))
    deps = {node["id"]: node["dependencies"] for node in s.graph["nodes"]}
    for record in s:
        for change in record["dependencies"]:
            deps[change["node"]] = change["after"]
        assert deps[record["node"]] == 0  # topological order: every gradient arrived already
    t_out, t_leaves = mixed(torch)
    t_out.backward()
    for name in leaves:
        assert leaves[name].grad.item() == pytest.approx(t_leaves[name].grad.item(), rel=1e-12)


def test_multiple_outputs_get_a_graph_root():
    x = gradwalk.tensor([1.0, 2.0], requires_grad=True)
    s = stepper([(x * 2).sum(), (x * 3).sum()], names={x: "x"})
    assert s.graph["nodes"][0]["kind"] == "root" and len(s.graph["seeds"]) == 2
    names = [r["name"] for r in s]
    assert names == ["torch::autograd::GraphRoot", "SumBackward0", "MulBackward0", "SumBackward0",
                     "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert x.grad.tolist() == [5.0, 5.0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_non_finite_values_are_strings():
    x = gradwalk.tensor([0.0, 1.0], requires_grad=True)
    y = (x.log() * 0 + x).sum()
    s = stepper(y, names={x: "x"})
    s.run()
    log_node = [n for n in s.graph["nodes"] if n["name"] == "LogBackward0"][0]
    assert log_node["saved"][0]["value"]["data"] == [0.0, 1.0]
    mul = [r for r in s.records if r["name"] == "MulBackward0"][0]
    assert mul["grads_out"][0]["value"]["data"] == [1.0 * 0, 0.0]
    assert s.to_dict()["grads"]["x"]["data"] == ["nan", 1.0]  # 0 * (1/0) = nan
    json.dumps(s.to_dict())


def test_watch_backward_records_every_call_and_autograd_grad_results():
    x = gradwalk.tensor(3.0, requires_grad=True)
    with watch_backward(names={x: "x"}) as passes:
        y = x * x
        (g,) = gradwalk.autograd.grad(y, x, retain_graph=True)
        y.backward()
    assert g.item() == 6.0 and x.grad.item() == 6.0
    assert len(passes) == 2
    first, second = (p.to_dict() for p in passes)
    assert first["result"] == [{"shape": [], "dtype": "float32", "data": 6.0}]
    assert [r["name"] for r in first["steps"]] == ["MulBackward0", "torch::autograd::AccumulateGrad"]
    assert first["steps"][1].get("skipped") is True
    assert second["grads"] == {"x": {"shape": [], "dtype": "float32", "data": 6.0}}
    assert gradwalk.autograd.run_backward.__name__ == "run_backward"  # restored


def test_backward_with_inputs_fills_a_non_leaf_grad():
    x = gradwalk.tensor(2.0, requires_grad=True)
    h = x * 3
    out = h * h
    stepper(out, inputs=[h]).run()
    assert h.grad.item() == 12.0 and x.grad is None


def test_a_deep_chain_steps_without_recursion():
    x = gradwalk.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    for mode in ("pytorch", "topo"):
        x.grad = None
        s = stepper(y, mode=mode, retain_graph=True)
        assert len(s.run()) == 3001
        assert x.grad.item() == 1.0


def random_program(seed, leaves=4, ops=14):
    rnd = random.Random(seed)
    program = []
    for k in range(ops):
        op = rnd.choice(["add", "mul", "sub", "tanh", "sin", "mul_const"])
        a = rnd.randrange(leaves + k)
        b = rnd.randrange(leaves + k)
        program.append((op, a, b))
    return [rnd.uniform(-1, 1) for _ in range(leaves)], program


def run_program(lib, values, program):
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    env = list(leaves)
    for op, a, b in program:
        x, y = env[a], env[b]
        env.append({"add": lambda: x + y, "mul": lambda: x * y, "sub": lambda: x - y,
                    "tanh": lambda: lib.tanh(x), "sin": lambda: lib.sin(x),
                    "mul_const": lambda: x * 0.5}[op]())
    out = env[-1]
    for t in env[len(leaves):-1]:
        out = out + t * 0.1  # every intermediate feeds the output: a graph with many joins
    return out, leaves


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_step_exactly_like_backward_and_pytorch(seed):
    values, program = random_program(seed)
    theirs = torch_order(run_program(torch, values, program)[0])
    out, leaves = run_program(gradwalk, values, program)
    s = stepper(out)
    assert_same_order(stepper_order(s), theirs)
    stepped = grads_of(leaves)
    out2, leaves2 = run_program(gradwalk, values, program)
    out2.backward()
    assert grads_of(leaves2) == stepped  # the same engine: bit for bit
    out3, leaves3 = run_program(gradwalk, values, program)
    stepper(out3, mode="topo").run()
    for topo, engine in zip(grads_of(leaves3), stepped):  # another order of summation
        assert (topo is None and engine is None) or topo == pytest.approx(engine, rel=1e-12)


def grads_of(leaves):
    return [None if leaf.grad is None else leaf.grad.item() for leaf in leaves]
