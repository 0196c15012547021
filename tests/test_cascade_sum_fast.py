"""The cascade sum's fast path (a NumPy reduce per cascade level) adds the same numbers in the same
order as its slice-by-slice reference, and both give PyTorch's bits; so does the compiled outer
sum (numba) used for a bias's gradient."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from gradwalk.ops.cascade_sum import _threads, cascade_sum

SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 1000, 4097]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def random_arrays(rng, count):
    """Random shapes of 1-3 dims, both dtypes, with runs of -0.0, all -0.0, or infinities."""
    for _ in range(count):
        shape = tuple(int(n) for n in rng.choice(SIZES, rng.integers(1, 4)))
        if np.prod(shape) > 200_000:
            continue
        dtype = rng.choice([np.float32, np.float64])
        x = rng.standard_normal(shape).astype(dtype)
        kind = rng.integers(0, 4)
        if kind == 1:
            x[rng.random(shape) < 0.7] = -0.0
        elif kind == 2:
            x[...] = -0.0
        elif kind == 3:  # infinities, and inf - inf
            x = (x * np.asarray(1e300 if dtype == np.float64 else 1e30, dtype)).astype(dtype)
        yield x


def test_the_fast_path_gives_the_references_bits():
    rng = np.random.default_rng(0)
    checked = 0
    for x in random_arrays(rng, 600):
        views = [x, x.T] if x.ndim == 2 else [x]
        for v in views:
            axes = [None, *range(v.ndim)] + ([(0, 1), (1, 2)] if v.ndim == 3 else [])
            for axis in axes:
                for keepdims in (False, True):
                    fast = cascade_sum(v, axis, keepdims)
                    reference = cascade_sum(v, axis, keepdims, reference=True)
                    assert same_bits(fast, reference), (v.shape, v.dtype, axis, keepdims)
                    checked += 1
    assert checked > 4000


def test_a_bias_gradients_sum_is_pytorchs_on_both_paths():
    rng = np.random.default_rng(1)
    for batch in (1, 3, 16, 32, 33, 100, 256, 300):
        for width in (1, 7, 10, 27, 31, 32, 33, 128, 200):
            g = rng.standard_normal((batch, width)).astype(np.float32)
            expected = torch.from_numpy(g).sum(0).numpy()
            assert same_bits(cascade_sum(g, 0), expected), (batch, width)
            assert same_bits(cascade_sum(g, 0, reference=True), expected), (batch, width)


def test_full_sums_and_row_sums_are_pytorchs_on_both_paths():
    rng = np.random.default_rng(2)
    threads = torch.get_num_threads()
    # a sum of 32768 elements or more is split between PyTorch's threads, as many as this process
    # may use (what cascade_sum assumes); another test module may have set torch to one thread
    torch.set_num_threads(_threads())
    try:
        for n in (1, 7, 8, 9, 31, 32, 33, 255, 864, 4097, 40000):
            for dtype in (np.float32, np.float64):
                x = rng.standard_normal(n).astype(dtype)
                expected = torch.from_numpy(x).sum().numpy()
                assert same_bits(cascade_sum(x), expected), (n, dtype)
                assert same_bits(cascade_sum(x, reference=True), expected), (n, dtype)
    finally:
        torch.set_num_threads(threads)
    x = rng.standard_normal((32, 27)).astype(np.float32)
    for axis in (0, 1):
        expected = torch.from_numpy(x).sum(axis).numpy()
        assert same_bits(cascade_sum(x, axis), expected)
        assert same_bits(cascade_sum(x.T, 1 - axis), torch.from_numpy(x.T).sum(1 - axis).numpy())


def test_an_all_negative_zero_sum_is_positive_zero_as_in_pytorch():
    x = np.full((32, 27), -0.0, dtype=np.float32)
    for axis in (None, 0, 1):
        ours = cascade_sum(x, axis)
        theirs = torch.from_numpy(x).sum(axis).numpy() if axis is not None else torch.from_numpy(x).sum().numpy()
        assert same_bits(ours, theirs)
        assert not np.signbit(ours).any()


# ---------------------------------------------------------------- the compiled outer sum (numba)

def test_the_compiled_outer_sum_gives_the_references_bits():
    """``_cascade_sum_fast.outer_sum`` (SumKernel.cpp's loops compiled; cascade_sum runs it for
    sums down the columns of at least FAST_MIN elements) against the reference, at every size."""
    from gradwalk import _fast
    from gradwalk.ops.cascade_sum import ILP, _outer_sum

    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    from gradwalk.ops import _cascade_sum_fast

    rng = np.random.default_rng(3)
    checked = 0
    for x in random_arrays(rng, 1500):
        x = x.reshape((1,) * (3 - x.ndim) + x.shape) if x.ndim < 3 else x
        lanes = 32 // x.dtype.itemsize
        block = ILP * lanes if x.shape[2] >= lanes else ILP
        compiled = _cascade_sum_fast.outer_sum(np.ascontiguousarray(x), (x.shape[2] // block) * block)
        assert same_bits(compiled, _outer_sum(x, lanes, reference=True)), (x.shape, x.dtype)
        checked += 1
    for rows in (1, 15, 16, 17, 255, 256, 257, 4096, 4097, 70000):  # every cascade level used
        g = rng.standard_normal((rows, 33)).astype(np.float32)
        assert same_bits(cascade_sum(g, 0), torch.from_numpy(g).sum(0).numpy()), rows
        assert same_bits(cascade_sum(g, 0), cascade_sum(g, 0, reference=True)), rows
    assert checked > 1000


def test_numba_stays_out_of_small_sums_and_GRADWALK_NO_NUMBA_keeps_it_out():
    def run(code, **env):
        result = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    code = ("import sys, numpy as np; from gradwalk.ops.cascade_sum import cascade_sum; "
            "cascade_sum(np.ones({}, np.float32), 0); "
            "print('numba' in sys.modules, 'gradwalk.ops._cascade_sum_fast' in sys.modules)")
    assert run(code.format("(16, 10)"), GRADWALK_NO_NUMBA="") == "False False"
    assert run(code.format("(32, 200)"), GRADWALK_NO_NUMBA="1") == "False False"
    from gradwalk import _fast

    if _fast.numba_njit() is not None:
        assert run(code.format("(32, 200)"), GRADWALK_NO_NUMBA="") == "True True"


# ---------------------------------------------------------------- nll_loss's 8-level sum

def test_nll_losss_compiled_sum_gives_the_references_bits():
    from gradwalk import _fast
    from gradwalk.ops._float32_kernels import nll_cascade_sum

    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    rng = np.random.default_rng(4)
    for _ in range(1500):
        n = int(rng.choice([1, 2, 15, 16, 17, 32, 33, 255, 256, 257, 4097, 65536, 65537, 70000]))
        dtype = rng.choice([np.float32, np.float64])
        values = rng.standard_normal(n).astype(dtype)
        kind = rng.integers(0, 4)
        if kind == 1:
            values[rng.random(n) < 0.7] = -0.0
        elif kind == 2:
            values[...] = rng.choice([0.0, -0.0])
        elif kind == 3:  # infinities, and inf - inf
            values = (values * np.asarray(1e300 if dtype == np.float64 else 1e30, dtype)).astype(dtype)
        compiled, reference = nll_cascade_sum(values, compiled=True), nll_cascade_sum(values)
        assert same_bits(compiled, reference) and type(compiled) is type(reference), (values.size, values.dtype)


@pytest.mark.parametrize("rows", [4, 32])  # a (4, 3) loss runs the NumPy sum, (32, 27) the compiled one
def test_nll_loss_of_zero_log_probabilities_is_plus_zero_as_in_pytorch(rows):
    import gradwalk

    x = np.zeros((rows, 27 if rows > 4 else 3), np.float32)
    target = np.arange(rows) % x.shape[1]
    for reduction in ("mean", "sum"):
        mine = gradwalk.nn.functional.nll_loss(gradwalk.tensor(x), gradwalk.tensor(target), reduction=reduction)
        theirs = torch.nn.functional.nll_loss(torch.tensor(x), torch.tensor(target), reduction=reduction)
        assert same_bits(mine.numpy(), theirs.numpy()) and not np.signbit(mine.numpy())


def test_nll_losss_compiled_pick_and_sum_gives_the_references_bits():
    from gradwalk import _fast
    from gradwalk.ops._float32_kernels import nll_picked_sum

    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    rng = np.random.default_rng(5)
    for _ in range(500):
        n, c = int(rng.choice([1, 2, 16, 17, 32, 257, 4097, 70000])), int(rng.choice([1, 3, 27, 100]))
        x = rng.standard_normal((n, c)).astype(rng.choice([np.float32, np.float64]))
        if rng.random() < 0.3:
            x[rng.random(x.shape) < 0.5] = rng.choice([0.0, -0.0, -np.inf])
        target = rng.integers(0, c, n)
        compiled, reference = nll_picked_sum(x, target, compiled=True), nll_picked_sum(x, target)
        assert same_bits(compiled, reference) and type(compiled) is type(reference), (n, c, x.dtype)


def test_a_bias_gradient_through_backward_is_pytorchs():
    """The engine sums a broadcast gradient (batch, n) -> (n) with cascade_sum's rows sum."""
    import gradwalk

    rng = np.random.default_rng(6)
    for batch, width, dtype in [(32, 200, np.float32), (32, 27, np.float32), (3, 5, np.float32),
                                (300, 33, np.float64), (32, 1, np.float32), (1, 10, np.float32)]:
        x = rng.standard_normal((batch, width)).astype(dtype)
        b = rng.standard_normal(width).astype(dtype)
        g = rng.standard_normal((batch, width)).astype(dtype)
        grads = []
        for lib in (gradwalk, torch):
            bias = lib.tensor(b, requires_grad=True)
            (lib.tensor(x) + bias).backward(lib.tensor(g))
            grads.append(bias.grad.numpy())
        assert same_bits(*grads), (batch, width, dtype)
