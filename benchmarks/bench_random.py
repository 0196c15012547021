"""Random draws: gradwalk beside PyTorch 2.13, same sizes, same generator, one process.

    .venv/bin/python benchmarks/bench_random.py            # prints a Markdown table
    .venv/bin/python benchmarks/bench_random.py --repeat 9

Targets (issue 13): ``randn(10**7)`` and ``rand(10**7)`` within 2x PyTorch's time,
``randperm(10**6)`` within 3x. Each figure is the best of ``--repeat`` runs of the process's CPU
time (``time.process_time``: on a shared, busy machine it counts what each draw costs, not the
time spent waiting for a core; ``--wall`` for wall-clock time). PyTorch runs with one thread
(its draws are serial anyway) and the script checks that both give the same values.
"""
import argparse
import time

import numpy as np
import torch

import gradwalk
from _timing import best

CASES = [
    ("randn(10**7)", lambda lib: lib.randn(10**7), 2.0),
    ("rand(10**7)", lambda lib: lib.rand(10**7), 2.0),
    ("randperm(10**6)", lambda lib: lib.randperm(10**6), 3.0),
    ("randn(10**7, float64)", lambda lib: lib.randn(10**7, dtype=lib.float64), None),
    ("randint(0, 10, (10**7,))", lambda lib: lib.randint(0, 10, (10**7,)), None),
    ("bernoulli_(0.5), 10**7", lambda lib: lib.empty(10**7).bernoulli_(0.5), None),
    ("normal_(2, 0.5), 10**7", lambda lib: lib.empty(10**7).normal_(2.0, 0.5), None),
    ("exponential_(), 10**6 float64", lambda lib: lib.empty(10**6, dtype=lib.float64).exponential_(), None),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = parser.parse_args()
    clock = time.perf_counter if args.wall else time.process_time
    torch.set_num_threads(1)
    print("| draw | gradwalk ms | PyTorch ms | ratio | target |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, draw, target in CASES:
        gradwalk.manual_seed(0)
        torch.manual_seed(0)
        assert np.array_equal(draw(gradwalk).numpy(), draw(torch).numpy()), name
        ours = best(lambda: draw(gradwalk), args.repeat, clock, warm_up=False, collect=False)
        theirs = best(lambda: draw(torch), args.repeat, clock, warm_up=False, collect=False)
        ratio = ours / theirs
        verdict = "" if target is None else (f"{target:g}x: {'met' if ratio <= target else 'NOT met'}")
        print(f"| `{name}` | {ours * 1e3:,.1f} | {theirs * 1e3:,.1f} | {ratio:.2f}x | {verdict} |")


if __name__ == "__main__":
    main()
