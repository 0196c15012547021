"""make_dot draws the backward graph torchviz-style; `gradwalk dot` prints it for a script."""
import subprocess
import sys

import gradwalk
from gradwalk.viz import DotGraph, make_dot


def neuron():
    w = gradwalk.tensor(0.5, requires_grad=True)
    x = gradwalk.tensor([2.0, 1.0], requires_grad=True)
    b = gradwalk.tensor(-0.3, requires_grad=True)
    y = gradwalk.tanh(w * x + b).sum()
    return y, {"w": w, "x": x, "b": b}


def test_nodes_carry_names_sequence_numbers_and_shapes():
    y, params = neuron()
    source = make_dot(y, params=params).source
    seqs = {name: fn._sequence_nr() for name, fn in [
        ("SumBackward0", y.grad_fn), ("TanhBackward0", y.grad_fn.next_functions[0][0])]}
    assert f'label="SumBackward0\nseq {seqs["SumBackward0"]}"' in source
    assert f'label="TanhBackward0\nseq {seqs["TanhBackward0"]}"' in source
    assert 'label="x\n (2)" fillcolor=lightblue' in source
    assert 'label="w\n ()" fillcolor=lightblue' in source
    assert 'label="output\n ()" fillcolor=darkolivegreen1' in source
    # 6 ops/leaves feeding each other: Sum<-Tanh<-Add<-{Mul, b}, Mul<-{w, x}, plus output<-Sum
    assert source.count(" -> ") == 7
    assert "orange" not in source


def test_show_saved_draws_the_saved_tensors():
    y, params = neuron()
    source = make_dot(y, params=params, show_saved=True).source
    assert 'label="result\n (2)" fillcolor=orange' in source  # TanhBackward0 saved its output
    assert 'label="self\n ()" fillcolor=orange' in source  # MulBackward0 saved w
    y.backward()
    assert 'label="result\n (freed)"' in make_dot(y, show_saved=True).source


def test_a_deep_graph_draws_without_recursion():
    x = gradwalk.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert make_dot(y).source.count("MulBackward0") == 5000


def test_fallback_graph_writes_the_same_dot():
    graph = DotGraph(node_attr={"shape": "box"})
    graph.node("n0", "MulBackward0\nseq 0", fillcolor="lightgrey")
    graph.edge("n1", "n0")
    assert graph.source == ('digraph {\n\tnode [shape=box]\n'
                            '\tn0 [label="MulBackward0\nseq 0" fillcolor=lightgrey]\n\tn1 -> n0\n}\n')


def test_renders_svg_with_graphviz():
    y, params = neuron()
    svg = make_dot(y, params=params).pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "TanhBackward0" in svg


def test_dot_command_prints_each_backward_graph(tmp_path):
    script = tmp_path / "neuron.py"
    script.write_text("import torch\nw = torch.tensor(0.5, requires_grad=True)\n"
                      "y = torch.tanh(w * 2.0)\ny.backward()\n")
    done = subprocess.run([sys.executable, "-m", "gradwalk", "dot", str(script), "--show-saved",
                           "--render", str(tmp_path / "g.svg")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("// pass 1: y.backward()  (line 4)\ndigraph {")
    assert 'label="TanhBackward0\nseq 1"' in done.stdout and 'label="w\n ()"' in done.stdout
    assert 'label="result\n ()" fillcolor=orange' in done.stdout  # drawn before the pass freed it
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<?xml")
