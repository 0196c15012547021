"""micrograd's moons demo step, in every engine, on the same work in one run.

    .venv/bin/python benchmarks/bench_peers.py [--samples 100] [--repeat 3]

One training step of micrograd's demo (a 2-16-16-1 ReLU MLP, hinge loss on every sample plus
L2 regularisation, backward, SGD update) written the micrograd way: every weight a scalar,
every neuron a sum of scalar products, so the graph has one node per scalar operation
(~70,000 for 100 samples). Engines: gradwalk and PyTorch with 0-dim tensors (PyTorch on 1 and
2 threads), micrograd's ``Value``, MyGrad 0-dim tensors, HIPS autograd on Python floats; and,
as the floor, the same math hand-vectorised in NumPy. Prints seconds per step and ratios.

Each engine runs in a fresh subprocess of its own (``--same-process`` runs them all in this one):
Python's cyclic garbage collector rescans every live object at a full collection, so in a
shared process each engine would also pay for the objects the others' imports left behind
(PyTorch's alone are ~300,000), which slows the pure-Python engines by 30-40%.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.setrecursionlimit(100_000)  # micrograd's topological sort is recursive


def moons_data(n):
    from sklearn.datasets import make_moons

    x, y = make_moons(n_samples=n, noise=0.1, random_state=1)
    return x.tolist(), (y * 2 - 1).tolist()


def initial_weights(seed=1337):
    rng = np.random.default_rng(seed)
    sizes = [2, 16, 16, 1]
    return [(rng.uniform(-1, 1, (n_out, n_in)).tolist(), [0.0] * n_out) for n_in, n_out in zip(sizes, sizes[1:])]


def mlp_scores(layers, xs, relu):
    """micrograd's MLP.__call__ on each sample: neuron = act(sum(w*x) + b); no ReLU on the last layer."""
    scores = []
    for x in xs:
        h = x
        for i, (w, b) in enumerate(layers):
            last = i == len(layers) - 1
            h = [sum((wi * hi for wi, hi in zip(row, h)), bias) for row, bias in zip(w, b)]
            if not last:
                h = [relu(v) for v in h]
        scores.append(h[0])
    return scores


def hinge_loss(layers, xs, ys, relu):
    scores = mlp_scores(layers, xs, relu)
    losses = [relu(1 + -yi * si) for yi, si in zip(ys, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg = sum(p * p for w, b in layers for row in w + [b] for p in row)
    return data_loss + 1e-4 * reg


def flat(layers):
    return [p for w, b in layers for row in w + [b] for p in row]


# ---------------------------------------------------------------- one step per engine

def tensor_engine(lib):
    """gradwalk / PyTorch / MyGrad: 0-dim tensors that require grad."""
    def setup(weights):
        return [([[lib.tensor(v, requires_grad=True) for v in row] for row in w],
                 [lib.tensor(v, requires_grad=True) for v in b]) for w, b in weights]

    def step(layers, xs, ys):
        relu = (lambda v: v.relu()) if hasattr(lib, "relu") else _mygrad_relu
        loss = hinge_loss(layers, xs, ys, relu)
        loss.backward()
        for p in flat(layers):
            p.data -= 0.1 * p.grad
            p.grad = None
        return float(loss.item())

    return setup, step


def _mygrad_relu(v):
    import mygrad

    return mygrad.maximum(v, 0.0)


def mygrad_engine():
    import mygrad

    def setup(weights):
        return [([[mygrad.tensor(v) for v in row] for row in w], [mygrad.tensor(v) for v in b])
                for w, b in weights]

    def step(layers, xs, ys):
        loss = hinge_loss(layers, xs, ys, _mygrad_relu)
        loss.backward()
        for p in flat(layers):
            p.data -= 0.1 * p.grad
        return float(loss.item())

    return setup, step


def micrograd_engine():
    from micrograd.engine import Value

    def setup(weights):
        return [([[Value(v) for v in row] for row in w], [Value(v) for v in b]) for w, b in weights]

    def step(layers, xs, ys):
        for p in flat(layers):
            p.grad = 0.0
        loss = hinge_loss(layers, xs, ys, lambda v: v.relu())
        loss.backward()
        for p in flat(layers):
            p.data -= 0.1 * p.grad
        return loss.data

    return setup, step


def hips_autograd_engine():
    import autograd
    import autograd.numpy as anp

    def setup(weights):
        return [float(p) for p in flat(weights)]

    def unflatten(params):
        layers, i = [], 0
        for n_in, n_out in ((2, 16), (16, 16), (16, 1)):
            w = [params[i + r * n_in:i + (r + 1) * n_in] for r in range(n_out)]
            i += n_in * n_out
            layers.append((w, params[i:i + n_out]))
            i += n_out
        return layers

    def loss_of(params, xs, ys):
        return hinge_loss(unflatten(params), xs, ys, lambda v: anp.maximum(v, 0.0))

    value_and_grad = autograd.value_and_grad(loss_of)

    def step(params, xs, ys):
        loss, grads = value_and_grad(params, xs, ys)
        params[:] = [p - 0.1 * g for p, g in zip(params, grads)]
        return float(loss)

    return setup, step


def numpy_engine():
    """The same step vectorised by hand: the floor for any NumPy engine on this work."""
    def setup(weights):
        return [(np.array(w), np.array(b)) for w, b in weights]

    def step(layers, xs, ys):
        x, y = np.asarray(xs), np.asarray(ys)
        acts, h = [x], x
        for i, (w, b) in enumerate(layers):
            h = h @ w.T + b
            if i < len(layers) - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        margin = 1 - y * h[:, 0]
        loss = np.maximum(margin, 0).mean() + 1e-4 * sum((w * w).sum() + (b * b).sum() for w, b in layers)
        g = ((margin > 0) * -y / len(y))[:, None]
        for i in range(len(layers) - 1, -1, -1):
            w, b = layers[i]
            gw, gb = g.T @ acts[i] + 2e-4 * w, g.sum(0) + 2e-4 * b
            if i:
                g = (g @ w) * (acts[i] > 0)
            w -= 0.1 * gw
            b -= 0.1 * gb
        return float(loss)

    return setup, step


def time_step(setup, step, xs, ys, repeat):
    best, loss = float("inf"), None
    for _ in range(repeat):
        state = setup(initial_weights())
        gc.collect()
        t0 = time.perf_counter()
        loss = step(state, xs, ys)
        best = min(best, time.perf_counter() - t0)
    return best, loss


ENGINES = {
    "gradwalk (0-dim tensors)": lambda: tensor_engine(_import("gradwalk")),
    "PyTorch 1 thread (0-dim tensors)": lambda: _torch_engine(1),
    "PyTorch 2 threads (0-dim tensors)": lambda: _torch_engine(2),
    "micrograd (Value)": lambda: micrograd_engine(),
    "MyGrad (0-dim tensors)": lambda: mygrad_engine(),
    "HIPS autograd (floats)": lambda: hips_autograd_engine(),
    "hand NumPy (vectorised floor)": lambda: numpy_engine(),
}


def _import(name):
    import importlib

    return importlib.import_module(name)


def _torch_engine(threads):
    import torch

    torch.set_num_threads(threads)
    return tensor_engine(torch)


def run_engine(name, xs, ys, repeat):
    setup, step = ENGINES[name]()
    return time_step(setup, step, xs, ys, repeat)


def run_isolated(name, data_path, repeat):
    """One engine in a fresh interpreter: only its own imports are alive for the GC to scan."""
    out = subprocess.run([sys.executable, __file__, "--engine", name, "--data", data_path,
                          "--repeat", str(repeat)], capture_output=True, text=True)
    if out.returncode:
        last = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        hint = ' (install the peers: .venv/bin/pip install -e ".[bench]")' if "ModuleNotFoundError" in last else ""
        raise SystemExit(f"bench_peers: {name} failed: {last}{hint}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["seconds"], result["loss"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--same-process", action="store_true",
                        help="run every engine in this process (each then pays for all the imports)")
    parser.add_argument("--engine", help=argparse.SUPPRESS)  # a subprocess's one engine
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine:  # the child: one engine, data from the parent, a JSON line back
        with open(args.data) as f:
            xs, ys = json.load(f)
        seconds, loss = run_engine(args.engine, xs, ys, args.repeat)
        print(json.dumps({"seconds": seconds, "loss": loss}))
        return
    xs, ys = moons_data(args.samples)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "moons.json")
        with open(data_path, "w") as f:
            json.dump([xs, ys], f)
        for name in ENGINES:
            if args.same_process:
                results[name], loss = run_engine(name, xs, ys, args.repeat)
            else:
                results[name], loss = run_isolated(name, data_path, args.repeat)
            print(f"{name:<34} {results[name] * 1000:9.1f} ms/step   loss {loss:.6f}", flush=True)
    ours = results["gradwalk (0-dim tensors)"]
    where = "all in one process" if args.same_process else "each engine in its own process"
    print(f"\nmicrograd demo step, {args.samples} samples, {where}: ratio = engine time / gradwalk time")
    for name, seconds in results.items():
        print(f"  {name:<34} {seconds / ours:7.2f}x")


if __name__ == "__main__":
    main()
