"""The benchmarks' one timing helper: the best of several timed runs, on a chosen clock.

    from _timing import CLOCK, best           # the scripts run as benchmarks/bench_*.py

    seconds = best(work, repeat=5)            # CPU time, one warm-up run, gc.collect() before each
    seconds = best(work, 5, CLOCK["wall"])    # elapsed time instead

CPU time (``time.process_time``) is the default: every benchmark runs both libraries on this one
thread (PyTorch ``set_num_threads(1)``, NumPy's BLAS by threadpoolctl), and on a shared machine
CPU time leaves out the time other jobs hold the core, which elapsed time does not.
"""
import gc
import time

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
