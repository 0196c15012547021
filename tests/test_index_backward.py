"""The backward of indexing and embedding sums rows into the rows an index picked, in PyTorch's
order: bit for bit beside PyTorch on the sizes where gradwalk takes its fast path
(ops/_scatter.py), and the fast path equal to the reference loop (np.add.at)."""
import numpy as np
import pytest
import torch

import gradwalk as gw
from gradwalk.ops._scatter import index_add_rows, index_add_rows_reference



@pytest.fixture(autouse=True)
def one_thread():
    """PyTorch's sequential kernel: on more threads, big float index_put_ sums add atomically, in
    any order. (Restored after each test: other tests compare sums split over the default count.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def both(array, requires_grad=False):
    return (gw.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def test_char_mlp_lookup_gradient_is_pytorchs():
    # makemore's C[X]: X is 3 characters of context per row; '.' (index 0) is far more common
    rng = np.random.default_rng(0)
    X = np.where(rng.random((20000, 3)) < 0.3, 0, rng.integers(1, 27, (20000, 3)))
    C = rng.standard_normal((27, 10)).astype(np.float32)
    g = rng.standard_normal((20000, 3, 10)).astype(np.float32)
    (Cg, Ct), (Xg, Xt) = both(C, True), both(X)
    emb_g, emb_t = Cg[Xg], Ct[Xt]
    assert same_bits(emb_g.detach().numpy(), emb_t.detach().numpy())
    assert emb_g.grad_fn.name() == emb_t.grad_fn.name() == "IndexBackward0"
    emb_g.backward(gw.tensor(g))
    emb_t.backward(torch.tensor(g))
    assert same_bits(Cg.grad.numpy(), Ct.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_gradient_is_pytorchs(dtype):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 300, (50, 100))
    W = rng.standard_normal((300, 8)).astype(dtype)
    g = rng.standard_normal((50, 100, 8)).astype(dtype) * 100
    for padding_idx in (None, 7):
        (Wg, Wt), (ig, it) = both(W, True), both(idx)
        gw.nn.functional.embedding(ig, Wg, padding_idx=padding_idx).backward(gw.tensor(g))
        torch.nn.functional.embedding(it, Wt, padding_idx=padding_idx).backward(torch.tensor(g))
        assert same_bits(Wg.grad.numpy(), Wt.grad.numpy())


def test_gather_with_negative_and_repeated_indices():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(5000).astype(np.float32)
    idx = rng.integers(-5000, 5000, 30000)
    g = rng.standard_normal(30000).astype(np.float32)
    (xg, xt), (ig, it) = both(x, True), both(idx)
    out_g, out_t = xg[ig], xt[it]
    assert same_bits(out_g.detach().numpy(), out_t.detach().numpy())
    out_g.backward(gw.tensor(g))
    out_t.backward(torch.tensor(g))
    assert same_bits(xg.grad.numpy(), xt.grad.numpy())


def test_rows_of_a_matrix_and_index_select():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 6, 5)).astype(np.float32)
    idx = rng.integers(0, 40, (3000,))
    g = rng.standard_normal((3000, 6, 5)).astype(np.float32)
    for pick in (lambda t, i: t[i], lambda t, i: t.index_select(0, i)):
        (xg, xt), (ig, it) = both(x, True), both(idx)
        pick(xg, ig).backward(gw.tensor(g))
        pick(xt, it).backward(torch.tensor(g))
        assert same_bits(xg.grad.numpy(), xt.grad.numpy())


def test_boolean_mask_gradient_keeps_pytorchs_zeros():
    # every picked element gets 0.0 + g: a -0.0 gradient arrives as 0.0, as in PyTorch
    rng = np.random.default_rng(4)
    x = rng.standard_normal((100, 50)).astype(np.float32)
    (xg, xt) = both(x, True)
    out_g, out_t = xg[xg > 0], xt[xt > 0]
    g = rng.standard_normal(out_t.shape).astype(np.float32)
    g[::3] = -0.0
    out_g.backward(gw.tensor(g))
    out_t.backward(torch.tensor(g))
    assert same_bits(xg.grad.numpy(), xt.grad.numpy())


def test_out_of_range_index_is_refused():
    x = gw.zeros(4, requires_grad=True)
    with pytest.raises(IndexError, match="out of bounds"):
        x[gw.tensor([0, 4])]
    with pytest.raises(IndexError, match="index out of range in self"):
        gw.nn.functional.embedding(gw.tensor([0, 4]), gw.zeros(4, 2))


@pytest.mark.parametrize("seed", range(40))
def test_fast_path_equals_the_reference_loop(seed):
    rng = np.random.default_rng(100 + seed)
    rows_count = int(rng.choice([1, 2, 3, 27, 100, 1000, 65536]))
    m = int(rng.choice([2048, 5000, 30000]))
    width = int(rng.choice([1, 2, 3, 10]))
    shape = rng.integers(3)
    if shape == 0:
        flat = rng.integers(0, rows_count, m)
    elif shape == 1:  # Zipf: a few destinations take most rows
        flat = np.minimum(rng.zipf(1.3, m) - 1, rows_count - 1)
    else:
        flat = np.where(rng.random(m) < 0.3, 0, rng.integers(0, rows_count, m))
    rows = (rng.standard_normal((m, width)) * rng.choice([1.0, 1e4])).astype(rng.choice([np.float32, np.float64]))
    rows[rng.random(rows.shape) < 0.2] = -0.0
    assert same_bits(index_add_rows(rows_count, flat, rows),
                     index_add_rows_reference(rows_count, flat, rows))


def test_the_compiled_small_path_equals_the_reference_loop():
    """Below the sorted path, from FAST_MIN_ELEMENTS elements, the loop runs compiled (numba on):
    the same additions in the same order; a minibatch's embedding gradient is PyTorch's."""
    from gradwalk import _fast

    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    from gradwalk.ops import _scatter_fast

    rng = np.random.default_rng(7)
    for _ in range(300):
        rows_count = int(rng.choice([1, 2, 27, 100, 1000]))
        m, width = int(rng.integers(1, 2048)), int(rng.choice([1, 2, 3, 10, 64]))
        flat = np.where(rng.random(m) < 0.3, 0, rng.integers(0, rows_count, m))
        rows = (rng.standard_normal((m, width)) * rng.choice([1.0, 1e30])).astype(rng.choice([np.float32, np.float64]))
        rows[rng.random(rows.shape) < 0.2] = -0.0
        expected = index_add_rows_reference(rows_count, flat, rows)
        assert same_bits(_scatter_fast.index_add_rows(rows_count, flat, rows), expected), (m, width)
        assert same_bits(index_add_rows(rows_count, flat, rows), expected), (m, width)
    X = rng.integers(0, 27, (32, 3))
    (Cg, Ct), (Xg, Xt) = both(rng.standard_normal((27, 10)).astype(np.float32), True), both(X)
    g = rng.standard_normal((32, 3, 10)).astype(np.float32)
    Cg[Xg].backward(gw.tensor(g))
    Ct[Xt].backward(torch.tensor(g))
    assert same_bits(Cg.grad.numpy(), Ct.grad.numpy())
