"""Function transforms beside torch.func on one thread: the jacobians/hessians tutorial and
per-sample gradients of a small MLP.

    .venv/bin/python benchmarks/bench_vmap.py [--repeat 3] [--quick]

(a) jacrev and jacfwd of the tutorial's ``predict(weight, bias, x) = tanh(linear(x, W, b))``
    with Din=32, Dout=2048 and with Din=2048, Dout=32; (b) the hessian of a 512-wide scalar
    function (``predict(...).sum()`` with D=512); (c) per-sample gradients of a 64-128-128-10
    MLP over a batch of 64 (``vmap(grad(loss), in_dims=(None, 0, 0))``); (d) ``vmap(f)(x)`` of an
    elementwise ``f`` on 10^6 elements, and whether it gives the same bits as ``f(x)``; (e)
    per-sample gradients of the digits CNN of ``bench_conv.py`` (1x8x8 images: Conv2d(1, 16, 3,
    padding=1), ReLU, Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2), Linear(512, 64), ReLU,
    Linear(64, 10)) over a batch of 64, as the per-sample-gradients tutorial's CNN, and (f) an
    ensemble of 4 such CNNs (``stack_module_state``) on one minibatch of 64.
Prints best-of-``repeat`` CPU seconds (``time.process_time``: other processes on a shared machine
do not count) and gradwalk / PyTorch ratios, and the load average. float32, as the tutorial.
PyTorch and NumPy's BLAS each on one thread.
"""
import argparse
import os
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import gradwalk as gw
from _timing import best as _best

torch.set_num_threads(1)
gw.set_num_threads(1)  # (MKL, when installed: gradwalk's products on one thread too)
threadpool_limits(1, "blas")  # NumPy's BLAS on one thread too, as PyTorch


def best(fn, repeat):
    """Best of ``repeat`` CPU-time samples (one warm-up run first); a sample is as many calls as
    take ~20 ms, so the small workloads are not timed one call against the clock's granularity."""
    t0 = time.process_time()
    fn()
    number = max(1, int(0.02 / max(time.process_time() - t0, 1e-6)))

    def calls():
        for _ in range(number):
            fn()

    return _best(calls, repeat, time.process_time, warm_up=False, collect=False) / number


def predict(lib):
    def f(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()
    return f


def jacobian_work(lib, d_in, d_out, transform):
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((d_out, d_in)).astype(np.float32))
    b = lib.tensor(rng.standard_normal(d_out).astype(np.float32))
    x = lib.tensor(rng.standard_normal(d_in).astype(np.float32))
    jac = getattr(lib.func, transform)(predict(lib), argnums=2)
    return lambda: jac(w, b, x)


def hessian_work(lib, d):
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((d, d)).astype(np.float32) / float(np.sqrt(d)))
    b = lib.tensor(rng.standard_normal(d).astype(np.float32))
    x = lib.tensor(rng.standard_normal(d).astype(np.float32))
    hess = lib.func.hessian(lambda x: predict(lib)(w, b, x).sum())
    return lambda: hess(x)


def per_sample_work(lib, batch):
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 128), lib.nn.ReLU(),
                              lib.nn.Linear(128, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    data = lib.tensor(rng.standard_normal((batch, 64)).astype(np.float32))
    targets = lib.tensor(rng.integers(0, 10, batch))

    def loss(params, sample, target):
        out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, data, targets)


def digits_cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(512, 64), nn.ReLU(), nn.Linear(64, 10))


def per_sample_cnn_work(lib, batch):
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    model = digits_cnn(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}
    data = lib.tensor(rng.random((batch, 1, 8, 8), dtype=np.float32))
    targets = lib.tensor(rng.integers(0, 10, batch))

    def loss(params, sample, target):
        out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, data, targets)


def ensemble_cnn_work(lib, models, batch):
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    nets = [digits_cnn(lib) for _ in range(models)]
    params, buffers = lib.func.stack_module_state(nets)
    params = {k: v.detach() for k, v in params.items()}
    data = lib.tensor(rng.random((batch, 1, 8, 8), dtype=np.float32))

    def run(params, buffers, x):
        return lib.func.functional_call(nets[0], (params, buffers), (x,))

    ensemble = lib.func.vmap(run, in_dims=(0, 0, None))
    return lambda: ensemble(params, buffers, data)


def elementwise(lib, x):
    return lib.tanh(x) * lib.sigmoid(x + 0.5) - x.exp() / 3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--only", default="", help="run only the rows whose name holds this text (e.g. CNN)")
    args = parser.parse_args()
    big, hess_d, batch = (256, 64, 16) if args.quick else (2048, 512, 64)
    rows = [
        (f"jacrev, Din=32, Dout={big}", lambda lib: jacobian_work(lib, 32, big, "jacrev")),
        (f"jacfwd, Din=32, Dout={big}", lambda lib: jacobian_work(lib, 32, big, "jacfwd")),
        (f"jacrev, Din={big}, Dout=32", lambda lib: jacobian_work(lib, big, 32, "jacrev")),
        (f"jacfwd, Din={big}, Dout=32", lambda lib: jacobian_work(lib, big, 32, "jacfwd")),
        (f"hessian, {hess_d}x{hess_d}", lambda lib: hessian_work(lib, hess_d)),
        (f"per-sample grads, MLP, batch {batch}", lambda lib: per_sample_work(lib, batch)),
        (f"per-sample grads, digits CNN, batch {batch}", lambda lib: per_sample_cnn_work(lib, batch)),
        (f"ensemble of 4 digits CNNs, batch {batch}", lambda lib: ensemble_cnn_work(lib, 4, batch)),
    ]
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'work':<40} {'PyTorch s':>10} {'gradwalk s':>11} {'ratio':>7}")
    for name, make in rows:
        if args.only not in name:
            continue
        t_torch = best(make(torch), args.repeat)
        t_ours = best(make(gw), args.repeat)
        print(f"{name:<40} {t_torch:>10.4f} {t_ours:>11.4f} {t_ours / t_torch:>6.2f}x", flush=True)
    if args.only:
        return
    x = np.random.default_rng(1).standard_normal(10 ** 6).astype(np.float32).reshape(1000, 1000)
    xs, xt = gw.tensor(x), torch.tensor(x)
    t_torch = best(lambda: torch.func.vmap(lambda r: elementwise(torch, r))(xt), args.repeat)
    t_ours = best(lambda: gw.func.vmap(lambda r: elementwise(gw, r))(xs), args.repeat)
    same = np.array_equal(gw.func.vmap(lambda r: elementwise(gw, r))(xs).numpy(), elementwise(gw, xs).numpy())
    print(f"{'vmap(elementwise), 10^6':<40} {t_torch:>10.4f} {t_ours:>11.4f} {t_ours / t_torch:>6.2f}x"
          f"   bit-equal to f(x): {same}")


if __name__ == "__main__":
    main()
