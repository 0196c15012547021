"""Stepping and tracing a long graph: no recursion, time linear in the number of nodes.

    .venv/bin/python benchmarks/bench_stepper.py            # 10k, 50k, 100k nodes
    .venv/bin/python benchmarks/bench_stepper.py 20000      # other sizes

For each size N it builds a chain of N ops on one leaf (y = tanh(y * 1.0) ...; N nodes plus the
leaf's AccumulateGrad) and times: plain backward(); the stepper in both modes (one JSON record
per node); the trace table; make_dot. The last column, microseconds per node, should stay about
flat as N grows: that is what "linear" means here.
"""
import sys
import time

import gradwalk
from gradwalk.autograd import stepper
from gradwalk.viz import make_dot


def chain(n):
    x = gradwalk.tensor(0.5, requires_grad=True)
    y = x
    for i in range(n):
        y = gradwalk.tanh(y) if i % 2 else y * 1.0
    return x, y


def timed(label, n, work):
    start = time.perf_counter()
    work()
    seconds = time.perf_counter() - start
    print(f"{n:>8}  {label:<28} {seconds:8.3f} s  {1e6 * seconds / n:8.2f} us/node", flush=True)
    return seconds


def bench(n):
    x, y = chain(n)
    timed("backward()", n, lambda: y.backward(retain_graph=True))
    for mode in ("pytorch", "topo"):
        s = stepper(y, retain_graph=True, mode=mode, names={x: "x"})
        timed(f"stepper run, mode={mode}", n, s.run)
        assert len(s.records) == n + 1
    timed("trace table", n, s.table)
    timed("make_dot source", n, lambda: make_dot(y).source)


def main(argv):
    sizes = [int(a) for a in argv] or [10_000, 50_000, 100_000]
    print(f"{'nodes':>8}  {'what':<28} {'time':>10}  {'per node':>14}")
    for n in sizes:
        bench(n)
    print(f"recursion limit stayed {sys.getrecursionlimit()}: nothing recursed")


if __name__ == "__main__":
    main(sys.argv[1:])
