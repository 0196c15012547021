"""The last digits of float results, as training scripts print them (``loss.item()`` shows 17):
sums added in PyTorch's order, ``linspace``'s values, ``x ** 3`` as a product. Each snippet runs
under gradwalk and under PyTorch and must print the same text."""

import numpy as np
import torch

from parity import assert_same_output
from gradwalk.ops.cascade_sum import cascade_sum


def test_a_sum_prints_pytorchs_seventeen_digits():
    # 100 terms of 0.7: NumPy's pairwise sum gives 69.9999771118164, PyTorch's cascade 70.0
    assert_same_output("""
        x = torch.full((100,), 0.7)
        print(x.sum().item(), x.mean().item())
        w = torch.linspace(-1, 1, 1000)
        print(w.sum().item(), (w * w).sum().item(), w.mean().item())
    """)


def test_sums_over_a_dim_as_in_the_backprop_lecture():
    assert_same_output("""
        g = torch.Generator().manual_seed(2147483647)
        logits = torch.randn(32, 27, generator=g)
        counts = logits * logits  # (exp's float32 last bits are NumPy's, not Sleef's)
        print(counts.sum(1, keepdim=True)[:3].tolist())
        print(logits.sum(0)[:5].tolist())
        print(logits.mean(0)[:3].tolist(), logits.T.sum(1)[:3].tolist())
        h = torch.randn(200, 64, generator=g)
        print(h.sum().item(), h.sum(0)[60:].tolist(), h.sum(1)[:2].tolist())
        print(torch.randn(100000, generator=g).sum().item())
        print(torch.randn(10, 20, 30, generator=g).sum((1, 2))[:3].tolist())
    """)


def test_a_bias_gradient_is_summed_as_pytorch_sums_it():
    assert_same_output("""
        torch.manual_seed(0)
        lin = torch.nn.Linear(30, 27)
        x = torch.randn(32, 30)
        (lin(x) * 3).sum().backward()
        print(lin.bias.grad[:4].tolist())
        b = torch.randn(27, requires_grad=True)
        (x[:, :27] * b).square().sum().backward()
        print(b.grad[:4].tolist())
    """)


def test_linspace_values_and_the_polynomial_tutorials_inputs():
    assert_same_output("""
        import math
        x = torch.linspace(-math.pi, math.pi, 2000)
        print(x[995:1005].tolist(), x[1234].item())
        print(torch.linspace(-3, 0, 1000)[::97].tolist())
        print(torch.linspace(0, 1, 7, dtype=torch.float64).tolist())
        print(torch.linspace(-2, 7.3, 12345, dtype=torch.float64)[::1234].tolist())
        print(torch.linspace(0, 1, 1).tolist(), torch.linspace(0, 1, 0).tolist())
        print((x ** 3)[::250].tolist(), (x.abs() + 1).pow(-2)[:3].tolist(), (x.abs() + 1).pow(-0.5)[:3].tolist())
    """)


def test_cascade_sum_agrees_with_torch_on_many_shapes():
    rng = np.random.RandomState(0)
    for n in [1, 7, 8, 9, 31, 32, 33, 255, 4097, 40000]:
        for dtype in (np.float32, np.float64):
            x = rng.randn(n).astype(dtype)
            assert float(cascade_sum(x)) == torch.from_numpy(x).sum().item()
    for shape in [(32, 27), (7, 16), (16, 7), (1000, 37), (37, 1000), (10, 20, 30), (64, 129)]:
        x = rng.randn(*shape).astype(np.float32)
        for axis in range(len(shape)):
            assert np.array_equal(cascade_sum(x, axis), torch.from_numpy(x).sum(axis).numpy())
        if x.ndim == 2:  # a transposed matrix is summed in memory order, as TensorIterator does
            assert np.array_equal(cascade_sum(x.T, 0), torch.from_numpy(x.T).sum(0).numpy())
