"""Forward cost per recorded node as the live graph grows to a million nodes, beside PyTorch, and
what Python's cyclic garbage collector does meanwhile.

    .venv/bin/python benchmarks/bench_graph_size.py [--sizes 10000,100000,1000000] [--repeat 3]

Each size builds a chain of ``n`` ops on a 1-element float32 tensor (``y = y * 1.0001`` and
``y = y + 0.5`` in turn: n nodes, all alive until the chain is dropped), in a fresh process per
size and library (the GC's cost depends on everything alive in the process). Prints the forward's
CPU microseconds per node (best of ``repeat``), the ratio to the smallest size, the backward's per node,
and, for gradwalk, the collections the cyclic GC ran during the forward by generation and the time
they took. PyTorch on one thread.
"""
import argparse
import gc
import json
import subprocess
import sys
import time


def run_one(lib_name, n, repeat):
    if lib_name == "torch":
        import torch as lib
        lib.set_num_threads(1)
    else:
        import gradwalk as lib
    import numpy as np

    collections = {0: 0, 1: 0, 2: 0}
    gc_time = [0.0]
    started = [0.0]

    def watch(phase, info):
        if phase == "start":
            started[0] = time.process_time()
        else:
            collections[info["generation"]] += 1
            gc_time[0] += time.process_time() - started[0]

    best_fwd = best_bwd = float("inf")
    stats = None
    for _ in range(repeat):
        x = lib.tensor(np.float32(0.25), requires_grad=True)
        gc.collect()
        for k in collections:
            collections[k] = 0
        gc_time[0] = 0.0
        gc.callbacks.append(watch)
        t0 = time.process_time()
        y = x
        for i in range(n // 2):
            y = y * 1.0001
            y = y + 0.5
        t1 = time.process_time()
        gc.callbacks.remove(watch)
        fwd_stats = (dict(collections), gc_time[0])
        t2 = time.process_time()
        y.backward()
        t3 = time.process_time()
        del y, x
        if t1 - t0 < best_fwd:
            best_fwd, stats = t1 - t0, fwd_stats
        best_bwd = min(best_bwd, t3 - t2)
    return {"fwd_us": best_fwd / n * 1e6, "bwd_us": best_bwd / n * 1e6,
            "collections": stats[0], "gc_ms": stats[1] * 1e3,
            "gc_threshold": gc.get_threshold(), "gc_enabled": gc.isenabled()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], int(args.child[1]), args.repeat)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    for lib_name in ("torch", "gradwalk"):
        for n in sizes:
            out = subprocess.run([sys.executable, __file__, "--repeat", str(args.repeat), "--child", lib_name, str(n)],
                                 capture_output=True, text=True, check=True)
            results[lib_name, n] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{'nodes':>9} | {'PyTorch fwd':>11} {'vs ' + str(sizes[0]):>9} {'bwd':>7} | {'gradwalk fwd':>12} "
          f"{'vs ' + str(sizes[0]):>9} {'bwd':>7} | gradwalk/PyTorch fwd | GC during gradwalk's forward")
    for n in sizes:
        t, g = results["torch", n], results["gradwalk", n]
        t0, g0 = results["torch", sizes[0]], results["gradwalk", sizes[0]]
        c = g["collections"]
        print(f"{n:>9} | {t['fwd_us']:9.2f}us {t['fwd_us'] / t0['fwd_us']:8.2f}x "
              f"{t['bwd_us']:5.2f}us | {g['fwd_us']:10.2f}us {g['fwd_us'] / g0['fwd_us']:8.2f}x "
              f"{g['bwd_us']:5.2f}us | {g['fwd_us'] / t['fwd_us']:19.2f}x | gen0 {c['0']} gen1 {c['1']} gen2 {c['2']}, "
              f"{g['gc_ms']:.0f} ms")
    print("user's GC settings after the runs:", {k: (v["gc_threshold"], v["gc_enabled"]) for k, v in results.items()
                                                   if k[0] == "gradwalk"})


if __name__ == "__main__":
    main()
