"""Property tests: random expression graphs (DAGs over a few leaves of broadcastable shapes, with
+ - * / tanh exp sin relu sum ...) run through gradwalk and PyTorch must give the same gradients
and the same node order, recorded by a prehook on every node."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gradwalk
import torch
from parity import assert_same_order, record_order

SHAPES = [(), (3,), (2, 1), (1, 3), (2, 3)]
BINARY = ["+", "-", "*", "/", "maximum"]
UNARY = ["tanh", "exp", "sin", "cos", "relu", "sigmoid", "neg", "square", "sum", "mean", "abs",
         "scalar_mul", "scalar_rsub", "scalar_rdiv", "scalar_pow"]


@st.composite
def programs(draw):
    """A list of steps; step i makes value ``v{i}`` from earlier values (leaves come first)."""
    n_leaves = draw(st.integers(1, 3))
    leaves = [(draw(st.sampled_from(SHAPES)),
               draw(st.lists(st.floats(-2, 2, allow_nan=False).map(lambda v: round(v, 3)),
                             min_size=6, max_size=6)))
              for _ in range(n_leaves)]
    steps = []
    for i in range(draw(st.integers(1, 8))):
        available = n_leaves + i
        if draw(st.booleans()):
            op = draw(st.sampled_from(BINARY))
            steps.append((op, draw(st.integers(0, available - 1)), draw(st.integers(0, available - 1))))
        else:
            steps.append((draw(st.sampled_from(UNARY)), draw(st.integers(0, available - 1)), None))
    return leaves, steps


def apply_step(lib, op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / (b.abs() + 0.5)  # keep away from division by zero
    if op == "maximum":
        return lib.maximum(a, b)
    if op == "square":
        return a ** 2
    if op == "neg":
        return -a
    if op == "scalar_mul":
        return a * 1.5
    if op == "scalar_rsub":
        return 2.0 - a
    if op == "scalar_rdiv":
        return 1.0 / (a.abs() + 1.0)
    if op == "scalar_pow":
        return 2 ** a
    if op == "abs":
        return a.abs()
    return getattr(a, op)()


def run_program(lib, program):
    leaves, steps = program
    values = []
    for shape, data in leaves:
        n = int(np.prod(shape))
        values.append(lib.tensor(np.array(data[:n], dtype=np.float64).reshape(shape),
                                 requires_grad=True))
    for op, i, j in steps:
        values.append(apply_step(lib, op, values[i], values[j] if j is not None else None))
    out = values[-1].sum() if values[-1].ndim else values[-1]
    if out.grad_fn is None:  # a bare leaf: nothing to order
        out = out * 1.0
    order = record_order([out], {f"leaf{k}": values[k] for k in range(len(leaves))})
    out.backward()
    grads = [v.grad for v in values[:len(leaves)]]
    return order, grads


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_graphs_match_pytorch(program):
    our_order, our_grads = run_program(gradwalk, program)
    their_order, their_grads = run_program(torch, program)
    assert_same_order(our_order, their_order)
    for ours, theirs in zip(our_grads, their_grads):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(programs(), st.booleans())
def test_random_graphs_gradients_are_the_same_with_retain_graph_twice(program, retain):
    """Backward twice with retain_graph doubles every gradient, exactly as in PyTorch."""
    results = []
    for lib in (gradwalk, torch):
        leaves, steps = program
        values = [lib.tensor(np.array(d[:int(np.prod(s))]).reshape(s), requires_grad=True)
                  for s, d in leaves]
        for op, i, j in steps:
            values.append(apply_step(lib, op, values[i], values[j] if j is not None else None))
        out = values[-1].sum() * 1.0
        out.backward(retain_graph=True)
        if retain:
            out.backward()
        results.append([None if v.grad is None else v.grad.numpy().copy() for v in values[:len(leaves)]])
    for ours, theirs in zip(*results):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
