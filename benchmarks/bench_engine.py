"""Per-op cost of the engine, gradwalk beside PyTorch CPU, on the same work in one run.

    .venv/bin/python benchmarks/bench_engine.py [--ops 10000] [--repeat 5]

(a) a chain of N small elementwise ops (mul, add, tanh, sin in turn), forward then backward,
    on 1-element and 16x16 tensors: microseconds per op each way, and the ratio to PyTorch;
(b) one training step (forward, backward, SGD update) of a 64-128-128-10 MLP at batch 32 and 256.
A hand-written NumPy forward/backward of (a) is the floor any NumPy engine can reach.
"""
import argparse
import gc

import numpy as np
from _timing import CLOCK, best


# CPU time of this process by default (``--clock wall`` for elapsed time): see _timing.py
clock = CLOCK["cpu"]


def chain(lib, shape, n):
    x = lib.ones(shape, requires_grad=True) if shape else lib.tensor(0.5, requires_grad=True)
    c = lib.ones(shape) * 0.999 if shape else lib.tensor(0.999)
    h = x
    for i in range(n):
        k = i % 4
        if k == 0:
            h = h * c
        elif k == 1:
            h = h + c
        elif k == 2:
            h = lib.tanh(h)
        else:
            h = lib.sin(h)
    return x, h.sum()


def time_chain(lib, shape, n, repeat):
    fwd = []
    bwd = []
    for _ in range(repeat):
        gc.collect()
        t0 = clock()
        x, out = chain(lib, shape, n)
        t1 = clock()
        out.backward()
        t2 = clock()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
        del x, out
    return min(fwd) / n * 1e6, min(bwd) / n * 1e6


def numpy_chain(shape, n, repeat):
    """The floor: the same chain's forward and backward by hand, no graph."""

    def run():
        x = np.ones(shape, dtype=np.float32) if shape else np.float32(0.5) * np.ones((), np.float32)
        c = (np.ones(shape, dtype=np.float32) if shape else np.ones((), np.float32)) * np.float32(0.999)
        tape = []
        h = x
        t0 = clock()
        for i in range(n):
            k = i % 4
            if k == 0:
                tape.append((0, c))
                h = h * c
            elif k == 1:
                tape.append((1, None))
                h = h + c
            elif k == 2:
                h = np.tanh(h)
                tape.append((2, h))
            else:
                tape.append((3, h))
                h = np.sin(h)
        t1 = clock()
        g = np.ones_like(h)
        for kind, saved in reversed(tape):
            if kind == 0:
                g = g * saved
            elif kind == 2:
                g = g * (1 - saved * saved)
            elif kind == 3:
                g = g * np.cos(saved)
        t2 = clock()
        return t1 - t0, t2 - t1

    results = [run() for _ in range(repeat)]
    return min(r[0] for r in results) / n * 1e6, min(r[1] for r in results) / n * 1e6


def mlp_step(lib, batch, steps=20):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.randn(batch, 64)
    y = lib.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(3):
        step()

    def run():
        for _ in range(steps):
            step()

    return best(run, 5, clock, warm_up=False) / steps * 1e3  # ms per step


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCK), default="cpu",
                        help="cpu: this process's CPU time (default); wall: elapsed time")
    args = parser.parse_args()
    global clock
    clock = CLOCK[args.clock]

    import torch

    import gradwalk

    torch.set_num_threads(1)
    gradwalk.set_num_threads(1)  # (MKL, when installed: gradwalk's products on one thread too)
    # one BLAS thread for NumPy too, like for like (and OpenBLAS's spinning threads make small
    # matmuls erratic on a busy 2-core machine)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    print(f"(a) chain of {args.ops} ops, microseconds per op (best of {args.repeat})")
    print(f"{'shape':<8} {'library':<10} {'forward':>9} {'backward':>9} {'total':>9} {'vs torch':>9}")
    for shape, label in ((None, "1 elem"), ((16, 16), "16x16")):
        tf, tb = time_chain(torch, shape, args.ops, args.repeat)
        gf, gb = time_chain(gradwalk, shape, args.ops, args.repeat)
        nf, nb = numpy_chain(shape, args.ops, args.repeat)
        for name, f, b in (("torch", tf, tb), ("gradwalk", gf, gb), ("numpy", nf, nb)):
            print(f"{label:<8} {name:<10} {f:9.2f} {b:9.2f} {f + b:9.2f} {(f + b) / (tf + tb):8.2f}x")
    try:
        print("\n(b) MLP 64-128-128-10 training step, ms per step (torch on 1 thread)")
        for batch in (32, 256):
            t = mlp_step(torch, batch)
            g = mlp_step(gradwalk, batch)
            print(f"batch {batch:<4} torch {t:7.3f}  gradwalk {g:7.3f}  ratio {g / t:5.2f}x")
    except AttributeError as e:  # nn/optim not there yet
        print(f"(b) skipped: {e}")


if __name__ == "__main__":
    main()
