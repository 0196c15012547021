"""The character-level MLP's minibatch step (bench_arrays.py's section (d)) on a busy machine:
PyTorch and gradwalk alternate in blocks of 100 steps, so both meet the same load; the best and
the median per-step CPU time of each, and their ratios.

    .venv/bin/python benchmarks/bench_minibatch.py [--blocks 15]

PyTorch, NumPy's BLAS and gradwalk's MKL (when loaded) each on one thread. ``GRADWALK_NO_MKL=1``
measures the NumPy-BLAS path; ``PYTHONPATH=<worktree>/src`` another commit's gradwalk.
"""
import argparse
import gc
import os
import time

import torch
from threadpoolctl import threadpool_limits

import gradwalk as gw
from bench_arrays import CharMLP

torch.set_num_threads(1)
threadpool_limits(1, "blas")
if hasattr(gw, "set_num_threads"):
    gw.set_num_threads(1)


def per_step(model):
    gc.collect()
    t0 = time.process_time()
    model.steps()
    return (time.process_time() - t0) / len(model.batches) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=15)
    n = ap.parse_args().blocks
    mg, mt = CharMLP(gw), CharMLP(torch)
    mt.steps()
    mg.steps()  # warm-up: kernels built, caches filled
    times_torch, times_gw = [], []
    for _ in range(n):
        times_torch.append(per_step(mt))
        times_gw.append(per_step(mg))
    times_torch.sort()
    times_gw.sort()
    bt, mt_ = times_torch[0], times_torch[n // 2]
    bg, mg_ = times_gw[0], times_gw[n // 2]
    print(f"minibatch step (us): PyTorch best {bt:.1f} median {mt_:.1f} | gradwalk best {bg:.1f} median {mg_:.1f}"
          f" | ratio best {bg / bt:.2f}x median {mg_ / mt_:.2f}x | load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
