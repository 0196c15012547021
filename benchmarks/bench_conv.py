"""Convolutions and max pooling beside PyTorch on one thread: each layer forward and forward +
backward, and whole training steps, on the digits CNN and on a CIFAR-sized batch.

    .venv/bin/python benchmarks/bench_conv.py [--repeat 7] [--only abg]

(a) the digits CNN of ``examples/train_digits_cnn.py`` / ``bench_training.py`` (1x8x8 images,
    batch 32: Conv2d(1, 16, 3, padding=1), ReLU, Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2),
    Linear(512, 64), ReLU, Linear(64, 10)): each conv/pool layer, then one SGD training step;
(b) a CIFAR-sized batch, 64x3x32x32: Conv2d(3, 32, 3, padding=1), MaxPool2d(2),
    Conv2d(32, 64, 3, padding=1), MaxPool2d(2), Conv2d(64, 128, 3, padding=1), MaxPool2d(2), each
    with ReLU, then Linear(2048, 10): each layer, then one SGD training step.
(g) the matrix products alone (``--only g``): what OpenBLAS reaches, in GFLOP/s, on each wide
    layer's three products in the layout gradwalk uses and in the others one could use (one large
    GEMM per layer, NHWC columns, ``np.dot`` on 2-D contiguous operands), beside ``torch.mm`` on the
    same operands and PyTorch's whole convolution forward; with MKL installed, gradwalk's three
    products through MKL too (on one thread), and whether they give OpenBLAS's bits.
A layer's "fwd + bwd" is ``layer(x).backward(g)`` with input, weight and bias gradients. Prints
best-of-``repeat`` CPU milliseconds, gradwalk / PyTorch, and whether the outputs and gradients are
bit-identical to PyTorch's ("bits") or their largest difference (the matrix products are
different BLAS libraries: NumPy's OpenBLAS, PyTorch's own kernels). float32; PyTorch and NumPy's
BLAS each on one thread.
"""
import argparse

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import gradwalk as gw
from _timing import CLOCK, best, compare
from gradwalk import _mkl

torch.set_num_threads(1)
gw.set_num_threads(1)  # (MKL, when installed: gradwalk's products on one thread too)
threadpool_limits(1, "blas")


# CPU time of this process by default (``--clock wall`` for elapsed time): see _timing.py
clock = CLOCK["cpu"]


def copy_params(src, dst):
    """The same starting weights in both libraries."""
    for p, q in zip(src.parameters(), dst.parameters()):
        q.data = gw.tensor(p.detach().numpy().copy()) if isinstance(q, gw.Tensor) else torch.tensor(p.detach().numpy())


def layer_work(lib, layer, x, g):
    xs = lib.tensor(x, requires_grad=True)
    gs = lib.tensor(g)

    def forward():
        with lib.no_grad():
            return [layer(xs)]

    def backward():
        xs.grad = None
        for p in layer.parameters():
            p.grad = None
        out = layer(xs)
        out.backward(gs)
        return [out, xs.grad] + [p.grad for p in layer.parameters()]

    return forward, backward


def arrays(tensors):
    return [t.detach().numpy().copy() for t in tensors]


def row(name, fn_gw, fn_torch, repeat):
    agree = compare(arrays(fn_gw()), arrays(fn_torch()))
    t_torch, t_gw = best(fn_torch, repeat, clock), best(fn_gw, repeat, clock)
    print(f"  {name:<56} {t_torch * 1e3:9.3f} {t_gw * 1e3:9.3f} ms {t_gw / t_torch:7.2f}x   {agree}", flush=True)
    return t_gw / t_torch


def layers(lib, spec):
    """One module per entry of ``spec``: ('conv', cin, cout) or ('pool',)."""
    torch.manual_seed(0)
    made = []
    for entry in spec:
        if entry[0] == "conv":
            made.append(torch.nn.Conv2d(entry[1], entry[2], 3, padding=1))
        else:
            made.append(torch.nn.MaxPool2d(2))
    if lib is torch:
        return made
    ours = [gw.nn.Conv2d(e[1], e[2], 3, padding=1) if e[0] == "conv" else gw.nn.MaxPool2d(2) for e in spec]
    for a, b in zip(made, ours):
        copy_params(a, b)
    return ours


def network(lib, spec, flat, classes=10):
    mods = []
    for entry in spec:
        if entry[0] == "conv":
            mods += [lib.nn.Conv2d(entry[1], entry[2], 3, padding=1), lib.nn.ReLU()]
        else:
            mods.append(lib.nn.MaxPool2d(2))
    mods += [lib.nn.Flatten(), lib.nn.Linear(flat, 64), lib.nn.ReLU(), lib.nn.Linear(64, classes)]
    return lib.nn.Sequential(*mods)


def train_step(lib, model, x, y):
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    xs, ys = lib.tensor(x), lib.tensor(y)

    def step():
        loss = lib.nn.functional.cross_entropy(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return [loss]

    return step


def section(title, spec, batch_shape, flat, repeat, steps_per_timing):
    print(title)
    rng = np.random.default_rng(0)
    x = rng.random(batch_shape, dtype=np.float32)
    for lg, lt, entry in zip(layers(gw, spec), layers(torch, spec), spec):
        with torch.no_grad():
            out_shape = tuple(lt(torch.tensor(x)).shape)
        g = rng.standard_normal(out_shape).astype(np.float32)
        (fg, bg), (ft, bt) = layer_work(gw, lg, x, g), layer_work(torch, lt, x, g)
        name = (f"Conv2d({entry[1]}, {entry[2]}, 3, padding=1)" if entry[0] == "conv" else "MaxPool2d(2)")
        name += " on " + "x".join(map(str, x.shape))
        row(name + ": forward", fg, ft, repeat)
        row(name + ": fwd + bwd", bg, bt, repeat)
        with torch.no_grad():
            x = lt(torch.tensor(x)).numpy()
            if entry[0] == "conv":
                x = np.maximum(x, 0)
    y = rng.integers(0, 10, batch_shape[0])
    xb = rng.random(batch_shape, dtype=np.float32)
    mt = network(torch, spec, flat)
    mg = network(gw, spec, flat)
    copy_params(mt, mg)
    sg, st = train_step(gw, mg, xb, y), train_step(torch, mt, xb, y)

    def many(step):
        return lambda: [step() for _ in range(steps_per_timing)][-1]

    print(f"  {'training step (SGD), per ' + str(steps_per_timing) + ' steps':<56} ", end="")
    agree = compare(arrays(sg()), arrays(st()))
    t_torch, t_gw = best(many(st), repeat, clock), best(many(sg), repeat, clock)
    print(f"{t_torch * 1e3:9.3f} {t_gw * 1e3:9.3f} ms {t_gw / t_torch:7.2f}x   first loss {agree}")


def gemm_section(repeat):
    """(g): GFLOP/s of each way to lay out a 3x3 layer's products, on random float32 operands."""
    print("(g) the products alone, GFLOP/s (2 * O * C*9 * N*OH*OW flops each)")
    rng = np.random.default_rng(0)
    for n, c, h, o in [(32, 16, 8, 32), (64, 3, 32, 32), (64, 32, 16, 64), (64, 64, 8, 128)]:
        k, p = c * 9, h * h
        flops = 2 * n * p * o * k
        w = rng.standard_normal((o, k)).astype(np.float32)
        cols = rng.standard_normal((n, k, p)).astype(np.float32)  # gradwalk's forward layout
        cols_knp = np.ascontiguousarray(cols.transpose(1, 0, 2)).reshape(k, n * p)  # one GEMM
        rows = np.ascontiguousarray(cols.transpose(0, 2, 1)).reshape(n * p, k)  # NHWC columns
        g = rng.standard_normal((n, o, p)).astype(np.float32)
        g_rows = np.ascontiguousarray(g.transpose(1, 0, 2)).reshape(o, n * p)
        g_nhwc = np.ascontiguousarray(g.transpose(0, 2, 1)).reshape(n * p, o)
        x = torch.from_numpy(rng.standard_normal((n, c, h, h)).astype(np.float32))
        wt = torch.from_numpy(w.reshape(o, c, 3, 3).copy())
        work = [
            ("forward: per-sample W @ cols[n] (gradwalk)", lambda: np.matmul(w, cols)),
            ("forward: one GEMM W @ (C*9, N*OH*OW)", lambda: w @ cols_knp),
            ("forward: one GEMM, then transposed to NCHW",
             lambda: np.ascontiguousarray((w @ cols_knp).reshape(o, n, p).transpose(1, 0, 2))),
            ("forward: NHWC rows @ W.T", lambda: rows @ w.T),
            ("forward: np.dot, 2-D contiguous", lambda: np.dot(w, cols_knp)),
            ("forward: torch.mm, same operands", lambda: torch.from_numpy(w) @ torch.from_numpy(cols_knp)),
            ("input grad: per-sample W.T @ g[n] (gradwalk)", lambda: np.matmul(w.T, g)),
            ("input grad: one GEMM W.T @ (O, N*OH*OW)", lambda: w.T @ g_rows),
            ("input grad: NHWC g @ W", lambda: g_nhwc @ w),
            ("weight grad: (O, N*OH*OW) @ rows (gradwalk)", lambda: g_rows @ rows),
            ("weight grad: the same, columns transposed", lambda: g_rows @ cols_knp.T),
            ("weight grad: per-sample products summed", lambda: np.matmul(g, cols.transpose(0, 2, 1)).sum(0)),
            ("weight grad: torch.mm, same operands", lambda: torch.from_numpy(g_rows) @ torch.from_numpy(rows)),
            ("PyTorch conv2d forward (whole layer)", lambda: torch.nn.functional.conv2d(x, wt, padding=1)),
        ]
        if _mkl.enabled():  # the same three products through Intel MKL (PyTorch's own BLAS)
            w_each, wt_each = np.broadcast_to(w, (n, o, k)), np.broadcast_to(w.T, (n, k, o))
            mkl_work = [
                ("forward: per-sample, MKL batch", lambda: _mkl.bmm(w_each, cols), lambda: np.matmul(w, cols)),
                ("input grad: per-sample, MKL batch", lambda: _mkl.bmm(wt_each, g), lambda: np.matmul(w.T, g)),
                ("weight grad: (O, N*OH*OW) @ rows, MKL gemm", lambda: _mkl.gemm(g_rows, rows), lambda: g_rows @ rows),
            ]
            work += [(name + (" (OpenBLAS's bits)" if np.array_equal(fn(), ref()) else " (other bits)"), fn)
                     for name, fn, ref in mkl_work]
        print(f"  Conv2d({c}, {o}) on {n}x{c}x{h}x{h}: {o} x {k} x {n * p}, {flops / 1e6:.0f} MFLOP")
        for name, fn in work:
            t = best(fn, repeat, clock)
            print(f"    {name:<54} {t * 1e3:9.3f} ms {flops / t / 1e9:7.1f} GFLOP/s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default="ab")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu",
                    help="cpu: this process's CPU time (default); wall: elapsed time")
    args = ap.parse_args()
    global clock
    clock = CLOCK[args.clock]
    print(f"  {'work':<56} {'PyTorch':>9} {'gradwalk':>9}    {'ratio':>7}   values and gradients")
    if "a" in args.only:
        section("(a) digits CNN, batch 32 of 1x8x8", [("conv", 1, 16), ("conv", 16, 32), ("pool",)],
                (32, 1, 8, 8), 512, args.repeat, 20)
    if "b" in args.only:
        section("(b) CIFAR-sized batch, 64x3x32x32",
                [("conv", 3, 32), ("pool",), ("conv", 32, 64), ("pool",), ("conv", 64, 128), ("pool",)],
                (64, 3, 32, 32), 2048, args.repeat, 2)
    if "g" in args.only:
        gemm_section(args.repeat)


if __name__ == "__main__":
    main()
