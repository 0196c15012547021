"""Big arrays beside PyTorch on one thread: elementwise, reduction and indexing/embedding work on
10^5-10^7 elements, forward and backward, and the character-level MLP of makemore's part 2.

    .venv/bin/python benchmarks/bench_arrays.py [--repeat 5] [--quick] [--only NAME]

(a) elementwise ``(x * x + 1).tanh() * x``, summed, on 10^5, 10^6 and 10^7 float32 elements;
(b) reductions: ``x.sum()``, ``x.mean(1)``, ``softmax(x, 1)`` and ``log_softmax`` of (n/100, 100);
(c) indexing: ``C[X]`` with X 228,146 x 3 over a 27 x 10 table (the MLP's embedding lookup),
    ``F.embedding`` of 10^6 indices into a 1,000 x 16 table, a 1-D gather ``x[idx]`` of 10^6, a
    boolean mask ``x[x > 0]`` of 10^6;
(d) the character-level MLP (27 x 10 embedding, 30-200-27, tanh, cross_entropy, SGD by
    ``p.data += -lr * p.grad``): one 32-row minibatch step, the full-batch evaluation under
    ``no_grad`` (228,146 rows: tanh over 228k x 200, cross_entropy over 228k x 27) and one
    full-batch forward + backward.
Each line runs the same work in both libraries (best of ``repeat``, after a warm-up run), prints
CPU milliseconds (``--clock wall`` for elapsed time), gradwalk / PyTorch, and whether the values
and gradients are bit-identical to PyTorch's ("bits") or their largest difference. The data are
random (names.txt is not shipped): the shapes are the notebook's. PyTorch and NumPy's BLAS each on one thread.

NumPy asks the kernel for transparent huge pages for arrays over 4 MiB; where the kernel compacts
memory on a fault (``/sys/kernel/mm/transparent_hugepage/defrag`` = madvise) the first touch of a
fresh 180 MB array can stall for a second on a busy machine: the warm-up run and best-of-N keep
that out of the figures, and the first (cold) run is printed for the MLP's evaluation.
"""
import argparse

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import gradwalk as gw
from _timing import CLOCK, best, compare

torch.set_num_threads(1)
gw.set_num_threads(1)  # (MKL, when installed: gradwalk's products on one thread too)
threadpool_limits(1, "blas")


# CPU time of this process by default (``--clock wall`` for elapsed time): see _timing.py
clock = CLOCK["cpu"]


def arrays_of(lib, tensors):
    return [t.detach().numpy().copy() if t is not None else None for t in tensors]


# ---------------------------------------------------------------- the work, written once for both

def elementwise(lib, n):
    x = lib.tensor(np.random.default_rng(0).standard_normal(n).astype(np.float32), requires_grad=True)

    def forward():
        with lib.no_grad():
            return [(x * x + 1).tanh() * x]

    def backward():
        x.grad = None
        y = ((x * x + 1).tanh() * x).sum()
        y.backward()
        return [y, x.grad]

    return forward, backward


def reduction(lib, n, kind):
    data = np.random.default_rng(1).standard_normal((n // 100, 100)).astype(np.float32)
    x = lib.tensor(data, requires_grad=True)
    F = lib.nn.functional
    op = {"sum": lambda t: t.sum(), "mean(1)": lambda t: t.mean(1),
          "softmax(1)": lambda t: F.softmax(t, 1), "log_softmax(1)": lambda t: F.log_softmax(t, 1)}[kind]
    weights = lib.tensor(np.random.default_rng(2).standard_normal(op(lib.tensor(data)).shape).astype(np.float32))

    def forward():
        with lib.no_grad():
            return [op(x)]

    def backward():
        x.grad = None
        y = op(x)
        y.backward(weights if y.ndim else None)
        return [y, x.grad]

    return forward, backward


def char_lookup(lib):
    rng = np.random.default_rng(3)
    C = lib.tensor(rng.standard_normal((27, 10)).astype(np.float32), requires_grad=True)
    X = lib.tensor(rng.integers(0, 27, (228146, 3)))
    g = lib.tensor(rng.standard_normal((228146, 3, 10)).astype(np.float32))

    def forward():
        with lib.no_grad():
            return [C[X]]

    def backward():
        C.grad = None
        emb = C[X]
        emb.backward(g)
        return [emb, C.grad]

    return forward, backward


def embedding(lib):
    rng = np.random.default_rng(4)
    W = lib.tensor(rng.standard_normal((1000, 16)).astype(np.float32), requires_grad=True)
    idx = lib.tensor(rng.integers(0, 1000, 10 ** 6))
    g = lib.tensor(rng.standard_normal((10 ** 6, 16)).astype(np.float32))

    def forward():
        with lib.no_grad():
            return [lib.nn.functional.embedding(idx, W)]

    def backward():
        W.grad = None
        out = lib.nn.functional.embedding(idx, W)
        out.backward(g)
        return [out, W.grad]

    return forward, backward


def gather_1d(lib):
    rng = np.random.default_rng(5)
    x = lib.tensor(rng.standard_normal(10 ** 6).astype(np.float32), requires_grad=True)
    idx = lib.tensor(rng.integers(0, 10 ** 6, 10 ** 6))
    g = lib.tensor(rng.standard_normal(10 ** 6).astype(np.float32))

    def forward():
        with lib.no_grad():
            return [x[idx]]

    def backward():
        x.grad = None
        out = x[idx]
        out.backward(g)
        return [out, x.grad]

    return forward, backward


def boolean_mask(lib):
    rng = np.random.default_rng(6)
    x = lib.tensor(rng.standard_normal(10 ** 6).astype(np.float32), requires_grad=True)

    def forward():
        with lib.no_grad():
            return [x[x > 0]]

    def backward():
        x.grad = None
        out = x[x > 0]
        out.sum().backward()
        return [out, x.grad]

    return forward, backward


class CharMLP:
    """makemore part 2: C[X] -> view(-1, 30) @ W1 + b1 -> tanh -> @ W2 + b2 -> cross_entropy."""

    rows = 228146

    def __init__(self, lib):
        rng = np.random.default_rng(7)
        self.lib = lib
        shapes = [(27, 10), (30, 200), (200,), (200, 27), (27,)]
        self.params = [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
                       for s in shapes]
        self.X = lib.tensor(rng.integers(0, 27, (self.rows, 3)))
        self.Y = lib.tensor(rng.integers(0, 27, self.rows))
        self.batches = [lib.tensor(ix) for ix in rng.integers(0, self.rows, (100, 32))]

    def loss(self, X, Y):
        C, W1, b1, W2, b2 = self.params
        emb = C[X]
        h = self.lib.tanh(emb.view(-1, 30) @ W1 + b1)
        logits = h @ W2 + b2
        return self.lib.nn.functional.cross_entropy(logits, Y)

    def steps(self):
        losses = []
        for ix in self.batches:
            loss = self.loss(self.X[ix], self.Y[ix])
            for p in self.params:
                p.grad = None
            loss.backward()
            for p in self.params:
                p.data += -0.1 * p.grad
            losses.append(loss)
        return losses + self.params

    def evaluate(self):
        with self.lib.no_grad():
            return [self.loss(self.X, self.Y)]

    def full_backward(self):
        for p in self.params:
            p.grad = None
        loss = self.loss(self.X, self.Y)
        loss.backward()
        return [loss] + [p.grad for p in self.params]


# ---------------------------------------------------------------- the table

def row(name, work_gw, work_torch, repeat, per=1.0, unit="ms"):
    out_gw = arrays_of(gw, work_gw())
    out_torch = arrays_of(torch, work_torch())
    agree = compare(out_gw, out_torch)
    t_torch = best(work_torch, repeat, clock) / per
    t_gw = best(work_gw, repeat, clock) / per
    scale = 1e3 if unit == "ms" else 1e6
    print(f"  {name:<44} {t_torch * scale:10.2f} {t_gw * scale:10.2f} {unit:<3} {t_gw / t_torch:7.2f}x   {agree}",
          flush=True)
    return t_gw / t_torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="10^5 and 10^6 only, repeat 2")
    ap.add_argument("--only", default="", help="run the sections whose letter is given, e.g. 'cd'")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu",
                    help="cpu: this process's CPU time (default); wall: elapsed time")
    args = ap.parse_args()
    global clock
    clock = CLOCK[args.clock]
    repeat = 2 if args.quick else args.repeat
    sizes = (10 ** 5, 10 ** 6) if args.quick else (10 ** 5, 10 ** 6, 10 ** 7)
    sections = args.only or "abcd"
    print(f"  {'work':<44} {'PyTorch':>10} {'gradwalk':>10}     {'ratio':>7}   values and gradients")
    if "a" in sections:
        print("(a) elementwise (x * x + 1).tanh() * x, float32")
        for n in sizes:
            (fg, bg), (ft, bt) = elementwise(gw, n), elementwise(torch, n)
            row(f"n = 10^{len(str(n)) - 1}, forward (no_grad)", fg, ft, repeat)
            row(f"n = 10^{len(str(n)) - 1}, forward + backward of .sum()", bg, bt, repeat)
    if "b" in sections:
        print("(b) reductions of (n/100, 100), forward + backward")
        for n in sizes:
            for kind in ("sum", "mean(1)", "softmax(1)", "log_softmax(1)"):
                (_, bg), (_, bt) = reduction(gw, n, kind), reduction(torch, n, kind)
                row(f"{kind}, n = 10^{len(str(n)) - 1}", bg, bt, repeat)
    if "c" in sections:
        print("(c) indexing and embedding")
        for name, make in (("C[X], X 228k x 3, C 27 x 10", char_lookup),
                           ("F.embedding, 10^6 indices, 1000 x 16", embedding),
                           ("x[idx], 10^6 from 10^6", gather_1d),
                           ("x[x > 0], 10^6", boolean_mask)):
            (fg, bg), (ft, bt) = make(gw), make(torch)
            row(f"{name}: forward", fg, ft, repeat)
            row(f"{name}: fwd + bwd", bg, bt, repeat)
    if "d" in sections:
        print("(d) character-level MLP (makemore part 2), 228,146 rows")
        mg, mt = CharMLP(gw), CharMLP(torch)
        t0 = clock()
        mt.evaluate()
        t1 = clock()
        mg.evaluate()
        t2 = clock()
        print(f"  {'full-batch evaluation, first (cold) run':<44} {(t1 - t0) * 1e3:10.2f} {(t2 - t1) * 1e3:10.2f} ms "
              f"{(t2 - t1) / (t1 - t0):7.2f}x")
        row("full-batch evaluation (no_grad)", mg.evaluate, mt.evaluate, repeat)
        row("full-batch forward + backward", mg.full_backward, mt.full_backward, repeat)
        mg, mt = CharMLP(gw), CharMLP(torch)  # fresh parameters: the steps change them
        row("minibatch step, 32 rows (per step)", mg.steps, mt.steps, repeat, per=len(mg.batches), unit="us")


if __name__ == "__main__":
    main()
