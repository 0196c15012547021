"""float32 results bit for bit beside PyTorch: the fraction of elements equal to torch's, per op.

Where PyTorch's kernel is open source (SLEEF's expf/logf inside sigmoid and the softmax kernels,
ATen's own sums, MKL's sgemm as one FMA chain over k) gradwalk reproduces it and the test asserts
every element equal. Where PyTorch calls MKL's closed VML functions (exp, log, tanh, sin, cos,
...) gradwalk rounds the float64 value once, and the test asserts the fraction reached (printed:
``pytest -s``). Each case runs on several shapes and value ranges, 0-d and 1-element tensors
included.
"""
import numpy as np
import pytest
import torch

import gradwalk
from gradwalk import _fast
from gradwalk.ops import _float32_kernels as K



@pytest.fixture(autouse=True)
def one_torch_thread():
    """PyTorch splits large elementwise work per thread (each share's tail takes the scalar
    loop); on one thread there is one split. Restored after each test: other tests compare sums
    split over the default count."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


SHAPES = [(), (1,), (7,), (31,), (32,), (33,), (5, 27), (64, 100), (3, 4, 65), (100000,)]


def inputs(shape, scale, seed, positive=False):
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    return np.abs(x) + np.float32(1e-3) if positive else x


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
    return (a == b) | (np.isnan(a) & np.isnan(b))


def report(name, equal, total):
    print(f"{name:<28} {equal:>9} of {total:>9} equal to torch ({equal / total:.5f})")
    return equal / total


# op, gradwalk function, torch function, value scale, positive inputs only, fraction asserted
UNARY = [
    ("sigmoid", gradwalk.sigmoid, torch.sigmoid, 6.0, False, 1.0),
    ("silu", gradwalk.nn.functional.silu, torch.nn.functional.silu, 6.0, False, 1.0),
    ("exp", gradwalk.exp, torch.exp, 5.0, False, 0.985),
    ("log", gradwalk.log, torch.log, 5.0, True, 0.999),
    ("tanh", gradwalk.tanh, torch.tanh, 3.0, False, 0.985),
    ("sin", gradwalk.sin, torch.sin, 4.0, False, 0.94),
    ("cos", gradwalk.cos, torch.cos, 4.0, False, 0.94),
    ("tan", gradwalk.tan, torch.tan, 1.0, False, 0.98),
    ("log1p", gradwalk.log1p, torch.log1p, 3.0, True, 0.99),
    ("expm1", gradwalk.expm1, torch.expm1, 3.0, False, 0.99),
]


@pytest.mark.parametrize("name, fn, tfn, scale, positive, level", UNARY, ids=[u[0] for u in UNARY])
def test_unary_float32_bits(name, fn, tfn, scale, positive, level):
    equal = total = 0
    for seed, shape in enumerate(SHAPES):
        x = inputs(shape, scale, seed, positive)
        ok = same_bits(fn(gradwalk.tensor(x)).numpy(), tfn(torch.tensor(x)).numpy())
        equal, total = equal + int(ok.sum()), total + ok.size
    assert report(name, equal, total) >= level


def test_sigmoid_of_a_transposed_and_a_strided_input_splits_as_torch():
    x = inputs((40, 70), 6.0, 1)
    for view in (lambda a: a.T, lambda a: a[:, ::2], lambda a: a[3:, 1:]):
        ok = same_bits(gradwalk.sigmoid(view(gradwalk.tensor(x))).numpy(),
                       torch.sigmoid(view(torch.tensor(x))).numpy())
        assert ok.all()


def test_glibc_expf_is_the_c_librarys():
    """sigmoid's and silu's scalar loop call std::exp(float): glibc's expf, reproduced."""
    import ctypes

    libm = ctypes.CDLL("libm.so.6")
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
    x = np.concatenate([inputs((20000,), 30.0, 7), np.array([0, -0.0, 88.7, 88.8, -103.9, -104, np.inf,
                                                              -np.inf, np.nan], np.float32)])
    with np.errstate(over="ignore"):
        expected = np.array([libm.expf(float(v)) for v in x], np.float32)
    assert same_bits(K.glibc_expf(x), expected).all()


def test_tanh_backward_float32_bits():
    equal = total = 0
    for seed, shape in enumerate(SHAPES):
        x = inputs(shape, 2.0, seed)
        g = inputs(shape, 1.0, seed + 100)
        a, ta = gradwalk.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ta_y = torch.tanh(ta)
        gradwalk.tanh(a).backward(gradwalk.tensor(g))
        ta_y.backward(torch.tensor(g))
        # the gradient from torch's own tanh result: the backward formula alone
        mine = gradwalk.ops.pointwise.tanh_backward(gradwalk.tensor(g), gradwalk.tensor(ta_y.detach().numpy()))
        ok = same_bits(mine.numpy(), ta.grad.numpy())
        equal, total = equal + int(ok.sum()), total + ok.size
    assert report("tanh_backward", equal, total) == 1.0


ROWS = [(1, 1), (3, 5), (4, 15), (4, 16), (4, 17), (32, 27), (6, 31), (5, 32), (5, 33), (7, 100),
        (3, 1000), (2, 3, 27), (10, 1), (20000, 27)]


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax_last_dim_bits(kind):
    equal = total = 0
    for seed, shape in enumerate(ROWS):
        x = inputs(shape, 3.0, seed)
        g = inputs(shape, 1.0, seed + 50)
        a, ta = gradwalk.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = getattr(gradwalk, kind)(a, -1), getattr(torch, kind)(ta, -1)
        y.backward(gradwalk.tensor(g))
        ty.backward(torch.tensor(g))
        for mine, theirs in ((y.detach(), ty.detach()), (a.grad, ta.grad)):
            ok = same_bits(mine.numpy(), theirs.numpy())
            equal, total = equal + int(ok.sum()), total + ok.size
    assert report(kind + " (fwd, bwd)", equal, total) == 1.0


@pytest.mark.parametrize("rows", [1, 3, 16, 17, 32, 255, 256, 257, 4097, 70000])
def test_cross_entropy_loss_and_gradient_bits(rows):
    logits = inputs((rows, 27), 3.0, rows)
    target = np.random.default_rng(rows).integers(0, 27, rows)
    for reduction in ("mean", "sum"):
        a, ta = gradwalk.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        loss = gradwalk.nn.functional.cross_entropy(a, gradwalk.tensor(target), reduction=reduction)
        tloss = torch.nn.functional.cross_entropy(ta, torch.tensor(target), reduction=reduction)
        assert loss.item() == tloss.item()
        loss.backward()
        tloss.backward()
        assert same_bits(a.grad.numpy(), ta.grad.numpy()).all()


# up to 2**18 multiply-adds: MKL's FMA chain, reproduced; larger: NumPy's BLAS, mostly the same
MM_CHAIN = [(32, 30, 200), (32, 200, 27), (200, 32, 27), (32, 27, 200), (30, 32, 200), (16, 16, 16),
            (8, 64, 8), (12, 256, 64), (2, 32, 16)]
MM_BLAS = [(100, 100, 100), (1000, 300, 100), (64, 512, 64), (10, 384, 64), (10, 256, 64)]


def matmul_cases(shapes, seed):
    rng = np.random.default_rng(seed)
    for m, k, n in shapes:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        yield gradwalk.tensor(a) @ gradwalk.tensor(b), torch.tensor(a) @ torch.tensor(b)
        yield (gradwalk.tensor(a) @ gradwalk.tensor(b.T.copy()).T,
               torch.tensor(a) @ torch.tensor(b.T.copy()).T)
        yield (gradwalk.nn.functional.linear(gradwalk.tensor(a), gradwalk.tensor(b.T.copy()), gradwalk.tensor(bias)),
               torch.nn.functional.linear(torch.tensor(a), torch.tensor(b.T.copy()), torch.tensor(bias)))


@pytest.mark.parametrize("shapes, level", [(MM_CHAIN, 1.0), (MM_BLAS, 0.5)], ids=["chain", "blas"])
def test_matmul_and_linear_bits(shapes, level):
    equal = total = 0
    for mine, theirs in matmul_cases(shapes, 0):
        ok = same_bits(mine.numpy(), theirs.numpy())
        equal, total = equal + int(ok.sum()), total + ok.size
    assert report(f"mm, mm(., B.T), linear ({'exact' if level == 1 else 'BLAS'})", equal, total) >= level


def test_matmul_gradients_bits():
    rng = np.random.default_rng(1)
    for m, k, n in [(32, 30, 200), (32, 200, 27)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        g = rng.standard_normal((m, n)).astype(np.float32)
        grads = []
        for lib in (gradwalk, torch):
            x, W = lib.tensor(a, requires_grad=True), lib.tensor(w, requires_grad=True)
            (x @ W.t()).backward(lib.tensor(g))
            grads.append((x.grad.numpy(), W.grad.numpy()))
        for mine, theirs in zip(*grads):
            assert same_bits(mine, theirs).all()


# ---------------------------------------------------------------- the two paths of each kernel

needs_numba = pytest.mark.skipif(_fast.numba_njit() is None, reason="numba off: the NumPy path only")


@needs_numba
def test_compiled_and_numpy_kernels_agree(monkeypatch):
    rng = np.random.default_rng(2)
    x = np.concatenate([(rng.standard_normal(20000) * 40).astype(np.float32),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72, 88.73, -87.4, -103.97,
                                  -104.01, 99.9, 100.01], np.float32)])
    rows = (rng.standard_normal((500, 27)) * 3).astype(np.float32)
    g = rng.standard_normal((500, 27)).astype(np.float32)
    a = rng.standard_normal((40, 120)).astype(np.float32)
    b = rng.standard_normal((120, 50)).astype(np.float32)

    def run():
        return [K.sleef_expf(x), K.softmax_lastdim(rows), K.log_softmax_lastdim(rows),
                K.softmax_backward_lastdim(g, rows), K.log_softmax_backward_lastdim(g, rows), K.matmul(a, b),
                K.sleef_logf(np.abs(x)), K.tanh_backward(g, np.tanh(rows))]

    monkeypatch.setattr(K, "FAST_MIN", 1 << 40)
    monkeypatch.setattr(K, "CHAIN_MAX_WORK_NUMPY", 1 << 40)
    monkeypatch.setattr(_fast, "_njit", None)  # numba off: the NumPy reference
    reference = run()
    monkeypatch.undo()
    monkeypatch.setattr(K, "FAST_MIN", 1)
    monkeypatch.setattr(K, "FAST_ELEMENTWISE_MIN", 1)
    compiled = run()
    for ref, fast in zip(reference, compiled):
        assert same_bits(ref, fast).all()


def test_the_chain_through_blas_is_the_chain():
    """Where NumPy's BLAS is checked to run MKL's FMA chain, ``matmul`` takes one BLAS call
    (``b`` padded to a last block of 9 columns): the same bits as the chain written out, for
    every layout of the operands."""
    rng = np.random.default_rng(11)
    tried = 0
    for _ in range(120):
        m, k, n = int(rng.integers(2, 70)), int(rng.integers(1, 257)), int(rng.integers(9, 300))
        if m * k * n > K.CHAIN_MAX_WORK:
            continue
        for a_order, b_order in (("C", "C"), ("C", "F"), ("F", "C"), ("F", "F")):
            a = np.asarray(rng.standard_normal((m, k)), np.float32, order=a_order)
            b = np.asarray(rng.standard_normal((k, n)), np.float32, order=b_order)
            if K._other_kernel(a, b):
                continue
            tried += 1
            assert np.array_equal(K.matmul(a, b), K.matmul_chain(a, b)), (m, k, n, a_order, b_order)
    assert tried > 100
