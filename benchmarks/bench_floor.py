"""How far a Python engine can go: the least any graph-recording op costs in CPython, and where
gradwalk's time goes on micrograd's demo step (the cyclic garbage collector's share included).

    .venv/bin/python benchmarks/bench_floor.py [--samples 100]

(a) Per recorded op, forward only, on 0-dim NumPy float32 values (gradwalk's representation):
    a bare minimum engine (one tensor object and one node object with a sequence number, its
    edges and its saved inputs; no checks, no promotion, no hooks), micrograd's ``Value`` and
    gradwalk; each alone (the result freed at once, GC off) and in a 10,000-op chain (GC on).
(b) micrograd's demo step (see ``bench_peers.py``) in gradwalk: forward, backward and update
    times, tracked objects the graph adds per node, and the cyclic GC's collections during the
    forward, by generation. Then what the issue's "10x faster than micrograd" target would allow
    per node, beside the floor of (a).

Run it in a fresh process (as here): the GC's cost grows with every live object in the process.
"""
import argparse
import gc
import threading
import time
import timeit

import numpy as np

from bench_peers import flat, hinge_loss, initial_weights, moons_data, tensor_engine


class _Sequence(threading.local):
    value = 0


_sequence = _Sequence()


class BareNode:
    __slots__ = ("sequence_nr", "edges", "saved")


class BareTensor:
    """The least an op must make to be recorded: an output and a node that can run backward."""

    __slots__ = ("data", "grad_fn", "requires_grad")

    def __init__(self, data, requires_grad=False):
        self.data, self.grad_fn, self.requires_grad = data, None, requires_grad

    def __mul__(self, other):
        out = BareTensor.__new__(BareTensor)
        out.data = self.data * other.data
        out.requires_grad = True
        node = BareNode.__new__(BareNode)
        seq = _sequence.value
        _sequence.value = seq + 1
        node.sequence_nr = seq
        node.edges = (self.grad_fn, 0, other.grad_fn, 0)
        node.saved = (self, other)
        out.grad_fn = node
        return out


def per_op_forward(make_pair, repeat=9, number=100_000):
    """Microseconds per ``a * b``: alone (result freed, GC off) and in a 10,000-op chain (GC on)."""
    a, b = make_pair()
    a = a * b  # an op's result: a leaf would make its AccumulateGrad again at every call
    gc.disable()
    alone = min(timeit.repeat(lambda: a * b, number=number, repeat=repeat, timer=time.process_time))
    gc.enable()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        h = a
        t0 = time.process_time()
        for _ in range(10_000):
            h = h * b
        best = min(best, time.process_time() - t0)
        del h
    return alone / number * 1e6, best / 10_000 * 1e6


def demo_breakdown(samples):
    import gradwalk
    from gradwalk.autograd.node import peek_sequence_nr

    xs, ys = moons_data(samples)
    setup, _ = tensor_engine(gradwalk)
    layers = setup(initial_weights())
    relu = lambda v: v.relu()  # noqa: E731
    hinge_loss(layers, xs, ys, relu).backward()  # warm up
    for p in flat(layers):
        p.grad = None
    gc.collect()
    collections = []

    def on_gc(phase, info):
        if phase == "start":
            collections.append([info["generation"], time.perf_counter()])
        else:
            collections[-1][1] = time.perf_counter() - collections[-1][1]

    tracked_before = len(gc.get_objects())
    first = peek_sequence_nr()
    gc.callbacks.append(on_gc)
    t0 = time.perf_counter()
    loss = hinge_loss(layers, xs, ys, relu)
    t1 = time.perf_counter()
    gc.callbacks.remove(on_gc)
    tracked = len(gc.get_objects()) - tracked_before
    nodes = peek_sequence_nr() - first  # op nodes (each leaf's AccumulateGrad is not counted)
    t2 = time.perf_counter()
    loss.backward()
    t3 = time.perf_counter()
    for p in flat(layers):
        p.data -= 0.1 * p.grad
        p.grad = None
    t4 = time.perf_counter()
    by_generation = {g: (sum(1 for c in collections if c[0] == g), sum(c[1] for c in collections if c[0] == g))
                     for g in (0, 1, 2)}
    return {"forward": t1 - t0, "backward": t3 - t2, "update": t4 - t3, "nodes": nodes,
            "tracked_per_node": tracked / nodes, "gc": by_generation, "tracked_before": tracked_before}


def micrograd_demo_seconds(samples, repeat=3):
    """micrograd's step in a fresh process of its own, as ``bench_peers.py`` times it."""
    import json
    import os
    import tempfile

    from bench_peers import run_isolated

    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "moons.json")
        with open(data_path, "w") as f:
            json.dump(moons_data(samples), f)
        seconds, _ = run_isolated("micrograd (Value)", data_path, repeat)
    return seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100)
    args = parser.parse_args(argv)

    import gradwalk
    from micrograd.engine import Value

    def bare():
        return BareTensor(np.float32(0.5), True), BareTensor(np.float32(0.999))

    def micrograd():
        return Value(0.5), Value(0.999)

    def ours():
        return gradwalk.tensor(0.5, requires_grad=True), gradwalk.tensor(0.999)

    print("(a) one recorded op (a * b, 0-dim), forward only, microseconds")
    print(f"  {'engine':<34} {'alone, GC off':>14} {'10k chain, GC on':>17}")
    floor = None
    for name, make in (("bare minimum (NumPy scalars)", bare), ("micrograd Value (Python floats)", micrograd),
                       ("gradwalk (0-dim tensors)", ours)):
        alone, chained = per_op_forward(make)
        floor = floor or chained
        print(f"  {name:<34} {alone:14.2f} {chained:17.2f}")

    print(f"\n(b) micrograd's demo step, {args.samples} samples, in gradwalk (this process)")
    d = demo_breakdown(args.samples)
    gc_seconds = sum(s for _, s in d["gc"].values())
    print(f"  nodes recorded: {d['nodes']:,}; GC-tracked objects the graph adds per node: "
          f"{d['tracked_per_node']:.2f} (live before: {d['tracked_before']:,})")
    print(f"  forward {d['forward'] * 1e3:7.1f} ms, of which the cyclic GC {gc_seconds * 1e3:.1f} ms: "
          + ", ".join(f"gen{g} {n} x {s * 1e3:.1f} ms" for g, (n, s) in d["gc"].items()))
    print(f"  backward {d['backward'] * 1e3:6.1f} ms (GC paused), update {d['update'] * 1e3:.1f} ms")
    step = d["forward"] + d["backward"] + d["update"]
    per_node = step / d["nodes"] * 1e6
    micro = micrograd_demo_seconds(args.samples)
    allowed = micro / 10 / d["nodes"] * 1e6
    print(f"  step {step * 1e3:.1f} ms = {per_node:.2f} us per node; micrograd's step {micro * 1e3:.1f} ms"
          " (in its own process)")
    print(f"\n10x faster than micrograd allows {allowed:.2f} us per node for forward + backward + update;"
          f" the bare minimum forward alone costs {floor:.2f} us per op in a chain.")


if __name__ == "__main__":
    main()
