"""Checkpointing: saved-tensor bytes with and without it, on an 8-layer MLP, gradwalk beside PyTorch.

    .venv/bin/python benchmarks/bench_checkpoint.py          # prints a Markdown table

The bytes are counted the way the issue asks: a ``saved_tensors_hooks`` pack hook adds up
``numel * element_size`` of every tensor a node saves for backward during the forward pass (inside
a non-reentrant checkpoint the checkpoint's own hooks take over, so only what it keeps is counted).
Every variant must give the same gradients as the plain run; the script checks that.
"""
import time

import numpy as np

WIDTH, BATCH, LAYERS = 256, 64, 8


def build(lib, seed=0):
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(LAYERS):
        linear = lib.nn.Linear(WIDTH, WIDTH)
        with lib.no_grad():
            linear.weight.copy_(lib.tensor(rng.normal(0, WIDTH ** -0.5, (WIDTH, WIDTH)), dtype=lib.float32))
            linear.bias.copy_(lib.tensor(rng.normal(0, 0.1, WIDTH), dtype=lib.float32))
        layers += [linear, lib.nn.Tanh()]
    return lib.nn.Sequential(*layers)


def run(lib, variant):
    """One forward and backward; returns (saved bytes, seconds, gradient of the first weight)."""
    import importlib

    cp = importlib.import_module(lib.__name__ + ".utils.checkpoint")
    model = build(lib)
    x = lib.tensor(np.random.default_rng(1).normal(size=(BATCH, WIDTH)), dtype=lib.float32)
    saved = [0]

    def pack(t):
        saved[0] += t.numel() * t.element_size()
        return t

    blocks = list(model.children())
    start = time.perf_counter()
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if variant == "none":
            y = model(x)
        elif variant == "each layer (non-reentrant)":
            y = x
            for i in range(0, len(blocks), 2):
                y = cp.checkpoint(lib.nn.Sequential(*blocks[i:i + 2]), y, use_reentrant=False)
        elif variant == "checkpoint_sequential, 4 segments (non-reentrant)":
            y = cp.checkpoint_sequential(model, 4, x, use_reentrant=False)
        elif variant == "checkpoint_sequential, 4 segments (reentrant)":
            x.requires_grad_(True)  # the reentrant variant needs an input that requires grad
            y = cp.checkpoint_sequential(model, 4, x, use_reentrant=True)
        else:
            raise ValueError(variant)
    y.pow(2).mean().backward()
    seconds = time.perf_counter() - start
    return saved[0], seconds, model[0].weight.grad.detach().numpy().copy()


VARIANTS = ["none", "each layer (non-reentrant)", "checkpoint_sequential, 4 segments (non-reentrant)",
            "checkpoint_sequential, 4 segments (reentrant)"]


def main():
    import torch

    import gradwalk

    rows = []
    reference = None
    for variant in VARIANTS:
        row = [variant]
        for lib in (gradwalk, torch):
            saved, seconds, grad = run(lib, variant)
            if reference is None:
                reference = grad
            np.testing.assert_allclose(grad, reference, rtol=1e-4, atol=1e-6)
            row += [saved, seconds]
        rows.append(row)
    base = rows[0][1]
    print(f"8-layer MLP (Linear {WIDTH}x{WIDTH} + Tanh), batch {BATCH}, float32; bytes saved for backward "
          "(saved_tensors_hooks), one forward+backward\n")
    print("| variant | gradwalk saved bytes | vs none | PyTorch saved bytes | gradwalk s | PyTorch s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for variant, gw_bytes, gw_s, pt_bytes, pt_s in rows:
        print(f"| {variant} | {gw_bytes:,} | {gw_bytes / base:.2f}x | {pt_bytes:,} "
              f"| {gw_s:.4f} | {pt_s:.4f} |")


if __name__ == "__main__":
    main()
