"""The profiler records forward ops with sequence numbers and backward nodes with their formula's
ops inside; forward op and backward node are linked by sequence number, as in PyTorch (§11)."""
import json

import torch

import gradwalk
from gradwalk.ops.core import observers
from gradwalk.autograd.engine import hooks


def profile_mul_sum(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    with lib.profiler.profile() as prof:
        y = x * w
        z = y.sum()
        z.backward()
    return prof, z


def ours_and_theirs():
    return profile_mul_sum(gradwalk), profile_mul_sum(torch)


def relative(seq, base):
    return seq - base if seq >= 0 else -1


def test_forward_ops_carry_sequence_numbers_like_pytorch():
    (prof, z), (t_prof, t_z) = ours_and_theirs()
    base, t_base = z.grad_fn._sequence_nr() - 1, t_z.grad_fn._sequence_nr() - 1

    def forward(p, b):
        return [(e.name, relative(e.sequence_nr, b)) for e in p.events()
                if e.name in ("aten::mul", "aten::sum") and e.cpu_parent is None]

    assert forward(prof, base) == forward(t_prof, t_base) == [("aten::mul", 0), ("aten::sum", 1)]


def test_backward_nodes_hold_their_formulas_ops():
    (prof, z), (t_prof, t_z) = ours_and_theirs()

    def backward(p):
        rows = []
        for e in p.events():
            if e.name.startswith("autograd::engine::evaluate_function: "):
                (node,) = e.cpu_children
                ops = [c.name for c in node.cpu_children]
                rows.append((e.name, node.name, ops if node.name == "MulBackward0" else None))
        return rows

    expected = [
        ("autograd::engine::evaluate_function: SumBackward0", "SumBackward0", None),
        ("autograd::engine::evaluate_function: MulBackward0", "MulBackward0", ["aten::mul", "aten::mul"]),
        ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
         "torch::autograd::AccumulateGrad", None),
        ("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
         "torch::autograd::AccumulateGrad", None),
    ]
    assert backward(prof) == backward(t_prof) == expected
    mul_ops = [e for e in prof.events() if e.name == "aten::mul" and e.is_backward]
    assert [e.sequence_nr for e in mul_ops] == [-1, -1]  # grad mode is off inside backward


def test_forward_op_and_backward_node_share_a_sequence_number():
    (prof, z), _ = ours_and_theirs()
    pairs = [(f.name, b.name, f.sequence_nr == b.sequence_nr) for f, b in prof.forward_backward_pairs()]
    assert pairs == [("aten::sum", "autograd::engine::evaluate_function: SumBackward0", True),
                     ("aten::mul", "autograd::engine::evaluate_function: MulBackward0", True)]
    acc = [e for e in prof.events() if e.name == "torch::autograd::AccumulateGrad"]
    assert {e.sequence_nr for e in acc} == {-1}


def test_no_grad_ops_show_minus_one_and_record_function_nests():
    x = gradwalk.tensor([1.0], requires_grad=True)
    with gradwalk.profiler.profile() as prof:
        with gradwalk.profiler.record_function("my_block"):
            with gradwalk.no_grad():
                x * 2
            x * 2
    block = prof.events()[0]
    assert block.name == "my_block"
    assert [(c.name, c.sequence_nr >= 0) for c in block.cpu_children] == [("aten::mul", False),
                                                                          ("aten::mul", True)]


def test_key_averages_table_looks_like_pytorchs():
    (prof, _), (t_prof, _) = ours_and_theirs()
    ours = prof.key_averages().table(sort_by="cpu_time_total", row_limit=20).splitlines()
    theirs = t_prof.key_averages().table(sort_by="cpu_time_total", row_limit=20).splitlines()
    assert ours[1].split() == theirs[1].split() == [
        "Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total", "CPU",
        "time", "avg", "#", "of", "Calls"]
    assert ours[-1].startswith("Self CPU time total: ")
    mul = [line for line in ours if line.strip().startswith("aten::mul ")][0]
    assert mul.split()[-1] == "3"  # once forward, twice inside MulBackward0
    averages = {a.key: a.count for a in prof.key_averages()}
    assert averages["aten::mul"] == 3 and averages["MulBackward0"] == 1


def test_chrome_trace_is_valid_trace_event_json(tmp_path):
    (prof, _), _ = ours_and_theirs()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert {"schemaVersion", "traceEvents", "displayTimeUnit", "baseTimeNanoseconds",
            "traceName"} <= set(trace)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for event in complete:
        assert event["cat"] == "cpu_op" and event["dur"] >= 0
        assert {"pid", "tid", "ts", "name", "args"} <= set(event)
    mul = [e for e in complete if e["name"] == "aten::mul"][0]
    assert mul["args"]["Sequence number"] == prof.events()[0].sequence_nr
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    assert set(starts) == set(ends) and len(starts) == 2
    assert all(e["cat"] == "fwdbwd" and e["bp"] == "e" for e in ends.values())


def test_zero_cost_when_not_profiling():
    assert observers.profiler is None and hooks.evaluate_function is None
    with gradwalk.profiler.profile():
        assert observers.profiler is not None and hooks.evaluate_function is not None
    assert observers.profiler is None and hooks.evaluate_function is None and not observers.any
