"""The benchmarks' shared helpers: the best of several timed runs on a chosen clock, and how
closely two libraries' results agree.

    from _timing import CLOCK, best           # the scripts run as benchmarks/bench_*.py

    seconds = best(work, repeat=5)            # CPU time, one warm-up run, gc.collect() before each
    seconds = best(work, 5, CLOCK["wall"])    # elapsed time instead

CPU time (``time.process_time``) is the default: every benchmark runs both libraries on this one
thread (PyTorch ``set_num_threads(1)``, NumPy's BLAS by threadpoolctl), and on a shared machine
CPU time leaves out the time other jobs hold the core, which elapsed time does not.
"""
import gc
import time

import numpy as np

CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}


def best(fn, repeat, clock=time.process_time, warm_up=True, collect=True):
    """The shortest of ``repeat`` timed calls of ``fn()``, in seconds of ``clock``.

    warm_up: one untimed call first (caches, lazily built kernels, first-touch page faults);
    collect: ``gc.collect()`` before each timed call, so no call pays for another's garbage."""
    if warm_up:
        fn()
    times = []
    for _ in range(repeat):
        if collect:
            gc.collect()
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def compare(a, b):
    """'bits' when every array pair is bit-identical, else the largest absolute difference."""
    worst = 0.0
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"shape/dtype {x.shape} {x.dtype} vs {y.shape} {y.dtype}"
        if not np.array_equal(x, y, equal_nan=True):
            worst = max(worst, float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64)))))
    return "bits" if worst == 0.0 else f"max diff {worst:.2g}"
