"""Random draws: gradwalk beside PyTorch 2.13, same sizes, same generator, one process.

    .venv/bin/python benchmarks/bench_random.py            # prints a Markdown table
    .venv/bin/python benchmarks/bench_random.py --repeat 9

Targets (issue 13): ``randn(10**7)`` and ``rand(10**7)`` within 2x PyTorch's time,
``randperm(10**6)`` within 3x. Each figure is the best of ``--repeat`` runs of the process's CPU
time (``time.process_time``: on a shared, busy machine it counts what each draw costs, not the
time spent waiting for a core; ``--wall`` for wall-clock time). PyTorch runs with one thread
(its draws are serial anyway) and the script checks that all give the same values.

gradwalk is timed twice: as it runs (the compiled numba kernels of ``gradwalk._random_fast`` for
large draws, when numba is on) and on its NumPy reference paths alone (``_distributions.FAST_MIN``
raised past every size). With ``GRADWALK_NO_NUMBA=1`` both columns are the reference.
"""
import argparse
import os
import time

import numpy as np
import torch

import gradwalk
from _timing import best
from gradwalk import _distributions as D
from gradwalk import _fast

CASES = [
    ("randn(10**7)", lambda lib: lib.randn(10**7), 2.0),
    ("rand(10**7)", lambda lib: lib.rand(10**7), 2.0),
    ("randperm(10**6)", lambda lib: lib.randperm(10**6), 3.0),
    ("randn(10**7, float64)", lambda lib: lib.randn(10**7, dtype=lib.float64), None),
    ("randint(0, 10, (10**7,))", lambda lib: lib.randint(0, 10, (10**7,)), None),
    ("bernoulli_(0.5), 10**7", lambda lib: lib.empty(10**7).bernoulli_(0.5), None),
    ("normal_(2, 0.5), 10**7", lambda lib: lib.empty(10**7).normal_(2.0, 0.5), None),
    ("exponential_(), 10**6 float64", lambda lib: lib.empty(10**6, dtype=lib.float64).exponential_(), None),
    ("uniform_(-1, 2), 10**7", lambda lib: lib.empty(10**7).uniform_(-1, 2), None),
    ("rand(10**7, float64)", lambda lib: lib.rand(10**7, dtype=lib.float64), None),
    ("normal_() non-contiguous, 10**6", lambda lib: lib.empty(1000, 1000).t().normal_(), None),
    ("log_normal_(), 10**6 float64", lambda lib: lib.empty(10**6, dtype=lib.float64).log_normal_(), None),
    ("cauchy_(), 10**6 float64", lambda lib: lib.empty(10**6, dtype=lib.float64).cauchy_(), None),
    ("geometric_(0.3), 10**6 float64", lambda lib: lib.empty(10**6, dtype=lib.float64).geometric_(0.3), None),
    ("multinomial(ones(1000), 10**6, True)", lambda lib: lib.multinomial(lib.ones(1000), 10**6, True), None),
]


def reference_paths():
    """Context: every draw on the NumPy reference paths."""
    saved = dict(D.FAST_MIN)

    class Reference:
        def __enter__(self):
            D.FAST_MIN.update(dict.fromkeys(D.FAST_MIN, 1 << 62))

        def __exit__(self, *exc):
            D.FAST_MIN.update(saved)
    return Reference()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = parser.parse_args()
    clock = time.perf_counter if args.wall else time.process_time
    torch.set_num_threads(1)
    compiled = _fast.numba_njit() is not None
    print(f"numba fast paths: {'on' if compiled else 'off'}; load average {os.getloadavg()[0]:.1f}")
    print()
    print("| draw | gradwalk ms | reference path ms | PyTorch ms | ratio | reference ratio | target |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, draw in ((name, draw) for name, draw, _ in CASES):
        gradwalk.manual_seed(0)
        torch.manual_seed(0)
        ours = draw(gradwalk).numpy()  # also the first call: numba's import and cached kernels load here
        with reference_paths():
            gradwalk.manual_seed(0)
            reference = draw(gradwalk).numpy()
        theirs = draw(torch).numpy()
        assert np.array_equal(ours, theirs) and np.array_equal(reference, theirs), name
    for name, draw, target in CASES:
        fast = best(lambda: draw(gradwalk), args.repeat, clock, warm_up=False, collect=False)
        with reference_paths():
            ref = best(lambda: draw(gradwalk), args.repeat, clock, warm_up=False, collect=False)
        theirs = best(lambda: draw(torch), args.repeat, clock, warm_up=False, collect=False)
        ratio = fast / theirs
        verdict = "" if target is None else (f"{target:g}x: {'met' if ratio <= target else 'NOT met'}")
        print(f"| `{name}` | {fast * 1e3:,.1f} | {ref * 1e3:,.1f} | {theirs * 1e3:,.1f} | {ratio:.2f}x "
              f"| {ref / theirs:.2f}x | {verdict} |")
    print()
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
