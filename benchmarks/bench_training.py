"""Training throughput and memory: gradwalk's nn + optim beside PyTorch CPU and hand NumPy.

    .venv/bin/python benchmarks/bench_training.py [--steps 200] [--repeat 3] [--skip-memory] [--phases]

(a) the digits MLP (64-128-128-10, ReLU, cross-entropy, SGD) at batch 32 and 256: training
    samples per second (forward, backward, optimizer step) for gradwalk, PyTorch on 1 and 2
    threads, and the same step written by hand in NumPy (the floor for a NumPy engine);
(b) the digits CNN of ``gradwalk train digits-cnn``: samples per second at batch 32;
    With ``--phases``: the MLP step split into forward / loss / backward / optimizer (zero_grad
    and step), microseconds per step, gradwalk beside PyTorch 1T and the hand NumPy step;
(c) memory: peak growth of resident memory during one training step of 8 Linear(1024, 1024)
    + ReLU layers at batch 512, each library in a fresh subprocess, sampled every 0.2 ms
    (glibc told to mmap blocks over 64 KiB so resident memory follows live memory).
NumPy's BLAS runs on one thread (``threadpoolctl``), as ``gradwalk train`` does.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time

import numpy as np
from _timing import best


def mlp(lib, sizes):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(lib.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(512, 64), nn.ReLU(), nn.Linear(64, 10))


def library_steps(lib, model, x, y, steps):
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.functional.cross_entropy
    xs, ys = lib.tensor(x), lib.tensor(y)

    def run():
        for _ in range(steps):
            loss = loss_fn(model(xs), ys)
            opt.zero_grad()
            loss.backward()
            opt.step()

    return run


def numpy_steps(x, y, steps):
    """Hand-written forward/backward/SGD of the same MLP, float32."""
    rng = np.random.default_rng(0)
    sizes = [64, 128, 128, 10]
    ws = [rng.uniform(-0.1, 0.1, (b, a)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
    bs = [np.zeros(b, np.float32) for b in sizes[1:]]
    onehot = np.eye(10, dtype=np.float32)[y]

    def run():
        for _ in range(steps):
            acts, h = [x], x
            for i in range(3):
                h = h @ ws[i].T + bs[i]
                if i < 2:
                    h = np.maximum(h, 0)
                acts.append(h)
            e = np.exp(h - h.max(1, keepdims=True))
            g = (e / e.sum(1, keepdims=True) - onehot) / len(x)
            for i in (2, 1, 0):
                gw, gb = g.T @ acts[i], g.sum(0)
                if i:
                    g = (g @ ws[i]) * (acts[i] > 0)
                ws[i] -= 0.01 * gw
                bs[i] -= 0.01 * gb

    return run


def library_phases(lib, model, x, y):
    """One timed step in four phases: forward, loss, backward, optimizer (zero_grad + step)."""
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.functional.cross_entropy
    xs, ys = lib.tensor(x), lib.tensor(y)
    clock = time.perf_counter

    def step():
        t0 = clock()
        out = model(xs)
        t1 = clock()
        loss = loss_fn(out, ys)
        t2 = clock()
        opt.zero_grad()
        t3 = clock()
        loss.backward()
        t4 = clock()
        opt.step()
        return t1 - t0, t2 - t1, t4 - t3, clock() - t4 + t3 - t2

    return step


def numpy_phases(x, y):
    """The hand NumPy step of ``numpy_steps`` in the same four phases (gradients first, then the
    updates, so that "backward" and "optimizer" can be timed apart; the same NumPy calls)."""
    rng = np.random.default_rng(0)
    sizes = [64, 128, 128, 10]
    ws = [rng.uniform(-0.1, 0.1, (b, a)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
    bs = [np.zeros(b, np.float32) for b in sizes[1:]]
    onehot = np.eye(10, dtype=np.float32)[y]
    clock = time.perf_counter

    def step():
        t0 = clock()
        acts, h = [x], x
        for i in range(3):
            h = h @ ws[i].T + bs[i]
            if i < 2:
                h = np.maximum(h, 0)
            acts.append(h)
        t1 = clock()
        e = np.exp(h - h.max(1, keepdims=True))
        g = (e / e.sum(1, keepdims=True) - onehot) / len(x)
        t2 = clock()
        grads = []
        for i in (2, 1, 0):
            grads.append((i, g.T @ acts[i], g.sum(0)))
            if i:
                g = (g @ ws[i]) * (acts[i] > 0)
        t3 = clock()
        for i, gw, gb in grads:
            ws[i] -= 0.01 * gw
            bs[i] -= 0.01 * gb
        return t1 - t0, t2 - t1, t3 - t2, clock() - t3

    return step


def phase_table(steps, repeat, batch, x, y):
    """Microseconds per step in each phase: the best mean over ``repeat`` runs of ``steps`` steps."""
    import torch

    import gradwalk

    torch.set_num_threads(1)
    runs = {"gradwalk": library_phases(gradwalk, mlp(gradwalk, [64, 128, 128, 10]), x, y),
            "PyTorch 1T": library_phases(torch, mlp(torch, [64, 128, 128, 10]), x, y),
            "hand NumPy": numpy_phases(x, y)}
    print(f"  batch {batch:>3}, us per step:   forward     loss  backward  optimizer     total")
    for name, step in runs.items():
        for _ in range(steps):  # warm up
            step()
        best = [float("inf")] * 4
        for _ in range(repeat):
            gc.collect()
            sums = [0.0] * 4
            for _ in range(steps):
                for k, t in enumerate(step()):
                    sums[k] += t
            best = [min(b, s / steps * 1e6) for b, s in zip(best, sums)]
        print(f"    {name:<12}      " + "".join(f"{v:9.1f}" for v in best) + f"{sum(best):10.1f}")


def best_of(fn, repeat):
    # elapsed time: "PyTorch 2T" runs on two threads, whose CPU time would count twice
    return best(fn, repeat, time.perf_counter)


def throughput(args):
    import torch
    from threadpoolctl import threadpool_limits

    import gradwalk

    rng = np.random.default_rng(0)
    print("(a) digits MLP 64-128-128-10, SGD step: samples/s (higher is better)")
    rows = []
    with threadpool_limits(1, "blas"):
        for batch in (32, 256):
            x = rng.random((batch, 64), dtype=np.float32)
            y = rng.integers(0, 10, batch)
            figures = {"gradwalk": library_steps(gradwalk, mlp(gradwalk, [64, 128, 128, 10]), x, y, args.steps)}
            for threads in (1, 2):
                torch.set_num_threads(threads)
                run = library_steps(torch, mlp(torch, [64, 128, 128, 10]), x, y, args.steps)
                figures[f"PyTorch {threads}T"] = (lambda run=run, threads=threads:
                                                  (torch.set_num_threads(threads), run()))
            figures["hand NumPy"] = numpy_steps(x, y, args.steps)
            rate = {name: batch * args.steps / best_of(fn, args.repeat) for name, fn in figures.items()}
            rows.append((batch, rate))
            line = "  ".join(f"{name} {value:,.0f}" for name, value in rate.items())
            print(f"  batch {batch:>3}: {line}")
            print(f"             gradwalk / PyTorch 1T = {rate['gradwalk'] / rate['PyTorch 1T']:.2f}x, "
                  f"hand NumPy / gradwalk = {rate['hand NumPy'] / rate['gradwalk']:.2f}x")
            if args.phases:
                phase_table(args.steps, args.repeat, batch, x, y)
        print("(b) digits CNN, batch 32: samples/s")
        x = rng.random((32, 1, 8, 8), dtype=np.float32)
        y = rng.integers(0, 10, 32)
        steps = max(args.steps // 4, 10)
        cnn_rate = {"gradwalk": 32 * steps / best_of(library_steps(gradwalk, cnn(gradwalk), x, y, steps), args.repeat)}
        torch.set_num_threads(1)
        cnn_rate["PyTorch 1T"] = 32 * steps / best_of(library_steps(torch, cnn(torch), x, y, steps), args.repeat)
        print("  " + "  ".join(f"{k} {v:,.0f}" for k, v in cnn_rate.items())
              + f"   gradwalk / PyTorch = {cnn_rate['gradwalk'] / cnn_rate['PyTorch 1T']:.2f}x")
    return rows


MEMORY_CHILD = r"""
import json, sys, threading, time
import numpy as np
lib_name = sys.argv[1]
if lib_name == "torch":
    import torch as lib
    lib.set_num_threads(1)
else:
    import gradwalk as lib
from threadpoolctl import threadpool_limits
threadpool_limits(1, "blas")

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

layers = []
for _ in range(8):
    layers += [lib.nn.Linear(1024, 1024), lib.nn.ReLU()]
model = lib.nn.Sequential(*layers)
opt = lib.optim.SGD(model.parameters(), lr=0.01)
x = lib.tensor(np.random.default_rng(0).random((512, 1024), dtype=np.float32))

def step():
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

step()  # the first step allocates the .grad tensors that stay; measure the second
peak, stop = [0], [False]
def sample():
    while not stop[0]:
        peak[0] = max(peak[0], rss())
        time.sleep(0.0002)
before = rss()
t = threading.Thread(target=sample); t.start()
step()
stop[0] = True; t.join()
print(json.dumps({"peak_growth": max(peak[0], rss()) - before}))
"""


def memory(repeat):
    print("(c) peak memory growth of one training step, 8 x Linear(1024,1024)+ReLU, batch 512 (MiB)")
    growth = {}
    for lib in ("gradwalk", "torch"):
        samples = []
        for _ in range(repeat):
            # large blocks straight from mmap, so that freed memory leaves the resident set at once
            # (glibc's default threshold grows after frees and would hide reuse inside the heap)
            env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="0")
            out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, lib], capture_output=True, text=True,
                                 check=True, env=env).stdout
            samples.append(json.loads(out.strip().splitlines()[-1])["peak_growth"] / 2**20)
        growth[lib] = min(samples)
        print(f"  {lib:<9} {growth[lib]:7.1f} MiB   (runs: {', '.join(f'{s:.1f}' for s in samples)})")
    print(f"  gradwalk / PyTorch = {growth['gradwalk'] / growth['torch']:.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--phases", action="store_true",
                        help="also time the MLP step by phase (forward, loss, backward, optimizer)")
    args = parser.parse_args(argv)
    throughput(args)
    if not args.skip_memory:
        memory(args.repeat)


if __name__ == "__main__":
    main()
