"""PyTorch's bits through Intel MKL, beside PyTorch: the vector math functions and the products.

PyTorch's CPU build computes ``exp``, ``log``, ``tanh``, ``sin``, ... with MKL's VML functions
and matrix products with MKL's gemm; with the ``mkl`` extra installed gradwalk calls the same
functions of the same MKL release, so every element below must equal PyTorch's, float32 and
float64, ordinary and special values, forward and backward. Without MKL (``GRADWALK_NO_MKL=1``)
the NumPy reference paths run: the last test checks they stay within their old tolerance.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import gradwalk
from gradwalk import _mkl

pytestmark = pytest.mark.skipif(os.environ.get("GRADWALK_NO_MKL", "") not in ("", "0"),
                                reason="GRADWALK_NO_MKL=1: the NumPy paths run (tested elsewhere)")


def test_mkl_is_installed_and_loaded():
    assert _mkl.library() is not None, "the mkl extra (mkl==2024.2.0) is not installed"


SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40, -1e-40, 1e-45, 1e-310, 3e38, -3e38, 1e300, -1e300,
           1.0, -1.0, 0.5, -0.5, 88.7, 89.0, -104.0, 710.0, -745.0, 1e30, 1e-30, 2.0 ** -126]

# name, value scale, domain transform
VML = [("exp", 10, None), ("log", 10, np.abs), ("tanh", 3, None), ("sin", 10, None), ("cos", 10, None),
       ("tan", 3, None), ("atan", 3, None), ("asin", 1, np.tanh), ("acos", 1, np.tanh), ("erf", 2, None),
       ("erfc", 3, None), ("erfinv", 1, np.tanh), ("log10", 3, np.abs), ("log2", 3, np.abs),
       ("sqrt", 10, np.abs)]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    return bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,scale,domain", VML, ids=[v[0] for v in VML])
def test_vml_function_equals_torch(name, scale, domain, dtype):
    x = np.random.default_rng(len(name)).standard_normal(50000) * scale
    if domain is not None:
        x = domain(x)
    with np.errstate(all="ignore"):
        x = np.concatenate([x, SPECIAL]).astype(dtype)
    for shape, values in [((50025,), x), ((), x[7]), ((1,), x[:1]), ((5, 27), x[:135]), ((25,), x[-25:])]:
        values = np.array(values).reshape(shape)
        ours = getattr(gradwalk, name)(gradwalk.tensor(values)).numpy()
        theirs = getattr(torch, name)(torch.tensor(values)).numpy()
        assert same_bits(ours, theirs), (name, shape)
    strided = x[:2000].reshape(40, 50)[:, ::3]  # a non-contiguous input
    ours = getattr(gradwalk, name)(gradwalk.tensor(x[:2000]).reshape(40, 50)[:, ::3]).numpy()
    assert same_bits(ours, getattr(torch, name)(torch.from_numpy(x[:2000]).reshape(40, 50)[:, ::3]).numpy())
    assert strided.shape == ours.shape


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vml_gradients_equal_torch(dtype):
    """Backward formulas built from the same functions (sin's backward is cos, ...) get the bits too."""
    x = np.random.default_rng(3).standard_normal((32, 200)).astype(dtype)
    for name in ("exp", "tanh", "sin", "cos", "tan", "atan", "erf", "sqrt", "log"):
        data = np.abs(x) + 0.1 if name in ("sqrt", "log") else x
        a = gradwalk.tensor(data, requires_grad=True)
        b = torch.tensor(data, requires_grad=True)
        getattr(gradwalk, name)(a).sum().backward()
        getattr(torch, name)(b).sum().backward()
        assert same_bits(a.grad.numpy(), b.grad.numpy()), name


def _layouts(rng, rows, cols, dtype):
    """The same matrix as a row-major array, a transposed view and a column slice."""
    x = rng.standard_normal((rows, cols)).astype(dtype)
    return {"rows": x, "transposed": np.ascontiguousarray(x.T).T,
            "sliced": np.ascontiguousarray(np.concatenate([x, x], axis=1))[:, ::2]}


def _tensors(array):
    """gradwalk and torch tensors with the same strides as ``array``."""
    if array.flags.c_contiguous:
        return gradwalk.tensor(array), torch.tensor(array)
    if array.flags.f_contiguous:
        c = np.ascontiguousarray(array.T)
        return gradwalk.tensor(c).t(), torch.tensor(c).t()
    base = np.ascontiguousarray(np.concatenate([array, array], axis=1))
    base[:, ::2] = array
    return gradwalk.tensor(base)[:, ::2], torch.tensor(base)[:, ::2]


SHAPES = [(2, 3, 4), (1, 200, 27), (32, 30, 200), (5, 3000, 7), (64, 257, 33), (128, 1024, 256), (3, 1, 5),
          (7, 16, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_mm_forward_and_backward_equal_torch(m, k, n, dtype):
    rng = np.random.default_rng(m * k + n)
    for la, a in _layouts(rng, m, k, dtype).items():
        for lb, b in _layouts(rng, k, n, dtype).items():
            ga, ta = _tensors(a)
            gb, tb = _tensors(b)
            ga.requires_grad_(), ta.requires_grad_(), gb.requires_grad_(), tb.requires_grad_()
            ours, theirs = ga.mm(gb), ta.mm(tb)
            assert same_bits(ours.detach().numpy(), theirs.detach().numpy()), (la, lb)
            g = rng.standard_normal((m, n)).astype(dtype)
            ours.backward(gradwalk.tensor(g))
            theirs.backward(torch.tensor(g))
            assert same_bits(ga.grad.numpy(), ta.grad.numpy()), ("grad a", la, lb)
            assert same_bits(gb.grad.numpy(), tb.grad.numpy()), ("grad b", la, lb)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_addmm_and_matmul_equal_torch(dtype):
    rng = np.random.default_rng(5)
    for batch, features, out in [(32, 200, 10), (64, 1024, 64), (8, 5000, 8), (3, 2, 4)]:
        x = rng.standard_normal((batch, features)).astype(dtype)
        w = rng.standard_normal((out, features)).astype(dtype)
        bias = rng.standard_normal(out).astype(dtype)
        gx, gw, gbias = (gradwalk.tensor(v, requires_grad=True) for v in (x, w, bias))
        tx, tw, tbias = (torch.tensor(v, requires_grad=True) for v in (x, w, bias))
        ours = gradwalk.nn.functional.linear(gx, gw, gbias)
        theirs = torch.nn.functional.linear(tx, tw, tbias)
        assert same_bits(ours.detach().numpy(), theirs.detach().numpy())
        ours.tanh().sum().backward()
        theirs.tanh().sum().backward()
        for a, b in ((gx, tx), (gw, tw), (gbias, tbias)):
            assert same_bits(a.grad.numpy(), b.grad.numpy())
        scaled = gradwalk.addmm(gbias, gx, gw.t(), beta=2.0, alpha=0.5).detach().numpy()
        assert same_bits(scaled, torch.addmm(tbias, tx, tw.t(), beta=2.0, alpha=0.5).detach().numpy())
        x3 = rng.standard_normal((4, batch, features)).astype(dtype)  # folded into one mm, as PyTorch
        assert same_bits((gradwalk.tensor(x3) @ gw.t()).detach().numpy(),
                         (torch.tensor(x3) @ tw.t()).detach().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bmm_mv_and_dot_equal_torch(dtype):
    rng = np.random.default_rng(9)
    batches = [(4, 2, 3, 4), (5, 7, 7, 8), (3, 7, 8, 9), (2, 16, 1000, 16), (8, 64, 512, 64), (1, 16, 2000, 16)]
    for bs, m, k, n in batches:
        a = rng.standard_normal((bs, m, k)).astype(dtype)
        b = rng.standard_normal((bs, k, n)).astype(dtype)
        ga, gb = gradwalk.tensor(a, requires_grad=True), gradwalk.tensor(b, requires_grad=True)
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        ours, theirs = ga.bmm(gb), ta.bmm(tb)
        assert same_bits(ours.detach().numpy(), theirs.detach().numpy()), (bs, m, k, n)
        ours.sin().sum().backward()
        theirs.sin().sum().backward()
        assert same_bits(ga.grad.numpy(), ta.grad.numpy()) and same_bits(gb.grad.numpy(), tb.grad.numpy())
        assert same_bits((gradwalk.tensor(a) @ gradwalk.tensor(b)).numpy(), (torch.tensor(a) @ torch.tensor(b)).numpy())
    for m, k in [(3, 4), (30, 200), (1000, 1000), (1, 50), (50, 1)]:
        a = rng.standard_normal((m, k)).astype(dtype)
        v = rng.standard_normal(k).astype(dtype)
        assert same_bits(gradwalk.tensor(a).mv(gradwalk.tensor(v)).numpy(), torch.tensor(a).mv(torch.tensor(v)).numpy())
        assert same_bits(gradwalk.tensor(a).t().mv(gradwalk.tensor(a[:, 0])).numpy(),
                         torch.tensor(a).t().mv(torch.tensor(a[:, 0])).numpy())
    for n in (3, 17, 1000, 100000):
        x, y = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        assert same_bits(gradwalk.dot(gradwalk.tensor(x), gradwalk.tensor(y)).numpy(),
                         torch.dot(torch.tensor(x), torch.tensor(y)).numpy())


def test_thread_count_follows_set_num_threads():
    """MKL splits a long k between threads, and the bits change with the count: gradwalk runs
    PyTorch's count and follows ``set_num_threads`` as PyTorch does."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 256)).astype(np.float32)
    threads = torch.get_num_threads()
    assert gradwalk.get_num_threads() == threads
    try:
        for count in (1, 2):
            torch.set_num_threads(count)
            gradwalk.set_num_threads(count)
            assert same_bits((gradwalk.tensor(a) @ gradwalk.tensor(b)).numpy(),
                             (torch.tensor(a) @ torch.tensor(b)).numpy()), count
    finally:
        torch.set_num_threads(threads)
        gradwalk.set_num_threads(threads)
    with pytest.raises(RuntimeError, match="expects an int"):
        gradwalk.set_num_threads(1.5)


_NUMPY_PATH = r"""
import json, sys
import numpy as np
import gradwalk
from gradwalk import _mkl
assert _mkl.library() is None
rng = np.random.default_rng(0)
out = {}
for dtype in ("float32", "float64"):
    x = rng.standard_normal(4000).astype(dtype)
    for name in ("exp", "tanh", "sin", "cos", "tan", "atan", "erf", "log2"):
        out[name + dtype] = getattr(gradwalk, name)(gradwalk.tensor(x)).tolist()
    a, b = rng.standard_normal((32, 300)).astype(dtype), rng.standard_normal((300, 20)).astype(dtype)
    out["mm" + dtype] = (gradwalk.tensor(a) @ gradwalk.tensor(b)).tolist()
json.dump({"x": out}, sys.stdout)
"""


def test_numpy_path_without_mkl_stays_close():
    """``GRADWALK_NO_MKL=1``: the NumPy reference paths, within their tolerance of MKL's bits."""
    env = dict(os.environ, GRADWALK_NO_MKL="1")
    done = subprocess.run([sys.executable, "-c", _NUMPY_PATH], env=env, capture_output=True, text=True, check=True)
    reference = json.loads(done.stdout)["x"]
    rng = np.random.default_rng(0)
    for dtype, rtol in (("float32", 2e-6), ("float64", 1e-14)):
        x = rng.standard_normal(4000).astype(dtype)
        for name in ("exp", "tanh", "sin", "cos", "tan", "atan", "erf", "log2"):
            ours = getattr(gradwalk, name)(gradwalk.tensor(x)).numpy()
            np.testing.assert_allclose(np.array(reference[name + dtype], dtype), ours, rtol=rtol, atol=1e-30)
        a, b = rng.standard_normal((32, 300)).astype(dtype), rng.standard_normal((300, 20)).astype(dtype)
        ours = (gradwalk.tensor(a) @ gradwalk.tensor(b)).numpy()
        np.testing.assert_allclose(np.array(reference["mm" + dtype], dtype), ours, rtol=1e-4 if dtype == "float32"
                                   else 1e-12, atol=1e-4 if dtype == "float32" else 1e-12)


def test_pow_and_mse_loss_equal_torch():
    """``x ** 0.5`` is sqrt's (VML) kernel in PyTorch, other float32 exponents SLEEF's powf (glibc's
    for each run's last ``n % 32``); ``mse_loss`` sums its squares as ``sum()``."""
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):
        x = np.abs(rng.standard_normal(5000)).astype(dtype)
        assert same_bits((gradwalk.tensor(x) ** 0.5).numpy(), (torch.tensor(x) ** 0.5).numpy())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # (on more threads each thread's share has a scalar tail of its own)
    try:
        with np.errstate(all="ignore"):
            special = np.array(SPECIAL, np.float32)
        for shape in [(), (1,), (31,), (2000,), (64, 100), (3, 4, 65)]:
            x = (rng.standard_normal(shape) * 3).astype(np.float32)
            for exponent in (4, 5, 1.5, -1.5, 0.3, 7, 1 / 3):
                assert same_bits((gradwalk.tensor(x) ** exponent).numpy(), (torch.tensor(x) ** exponent).numpy())
        for exponent in (4, 5, 1.5, -1.5, -3, 0.3, float("inf"), float("-inf"), float("nan")):
            x = np.tile(special, 4)
            assert same_bits((gradwalk.tensor(x) ** exponent).numpy(), (torch.tensor(x) ** exponent).numpy())
    finally:
        torch.set_num_threads(threads)
        a, b = rng.standard_normal(2000).astype(dtype), rng.standard_normal(2000).astype(dtype)
        for reduction in ("sum", "mean"):
            ours = gradwalk.nn.functional.mse_loss(gradwalk.tensor(a), gradwalk.tensor(b), reduction=reduction)
            theirs = torch.nn.functional.mse_loss(torch.tensor(a), torch.tensor(b), reduction=reduction)
            assert same_bits(ours.numpy(), theirs.numpy()), reduction


def test_add_with_alpha_and_sgd_steps_are_fused_as_in_torch():
    """ATen's ``add(x, y, alpha=a)`` is one fused multiply-add, ``x + a*y``, and SGD's updates
    (``param.add_(d_p, alpha=-lr)``, weight decay, Nesterov) are built from it."""
    rng = np.random.default_rng(6)
    for shape in [(), (100,), (7, 33)]:
        a = rng.standard_normal(shape).astype(np.float32)
        b = (rng.standard_normal(shape) * 1e4).astype(np.float32)
        for alpha in (-1e-8, 0.37):
            for op in ("add", "sub"):
                ours = getattr(gradwalk, op)(gradwalk.tensor(a), gradwalk.tensor(b), alpha=alpha)
                theirs = getattr(torch, op)(torch.tensor(a), torch.tensor(b), alpha=alpha)
                assert same_bits(ours.numpy(), theirs.numpy())

    def steps(lib, p0, g0, **options):
        p = lib.tensor(p0, requires_grad=True)
        optimizer = lib.optim.SGD([p], **options)
        for k in range(3):
            p.grad = lib.tensor(g0 * np.float32(1 + k))
            optimizer.step()
        return p.detach().numpy()

    for options in (dict(lr=1e-3), dict(lr=1e-8, momentum=0.9),
                    dict(lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.01),
                    dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)):
        p0 = rng.standard_normal((7, 33)).astype(np.float32)
        g0 = (rng.standard_normal((7, 33)) * 10).astype(np.float32)
        assert same_bits(steps(gradwalk, p0, g0, **options), steps(torch, p0, g0, **options)), options


def test_small_products_take_numpys_blas_only_where_it_gives_mkls_bits():
    # a minibatch's products (32x30 @ 30x200, ...) run one NumPy BLAS call where that call gives
    # MKL's bits (_float32_kernels.chain_is_mkl); checked here beside MKL and PyTorch
    from gradwalk.ops import _float32_kernels as k32
    from gradwalk.ops.linalg import _mm

    rng = np.random.default_rng(7)
    taken = 0
    for trial in range(400):
        m, k, n = (int(v) for v in rng.integers((16, 1, 16), (200, 257, 200)))
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        if trial % 3 == 1:
            a = np.asfortranarray(a)
        elif trial % 3 == 2:
            b = np.asfortranarray(b)
        if not k32.chain_is_mkl(a, b):
            continue
        taken += 1
        ours = _mm(a, b)
        assert same_bits(ours, _mkl.gemm(a, b)), (m, k, n, trial % 3)
        assert same_bits(ours, torch.from_numpy(a).mm(torch.from_numpy(b)).numpy()), (m, k, n, trial % 3)
    assert taken > 50
    strided = rng.standard_normal((64, 60)).astype(np.float32)[:, ::2]
    assert not k32.chain_is_mkl(strided, rng.standard_normal((30, 40)).astype(np.float32))


def test_small_linear_layers_add_the_bias_as_mkl_does():
    # nn.Linear's addmm on a minibatch: for k >= 2 MKL adds the bias after its k loop, so the
    # product's bits plus the bias are MKL's (and PyTorch's); k == 1 goes to MKL itself
    rng = np.random.default_rng(11)
    for batch, features, out in [(32, 64, 32), (32, 30, 200), (32, 200, 27), (16, 2, 16), (32, 1, 40), (20, 7, 90)]:
        x = rng.standard_normal((batch, features)).astype(np.float32)
        w = rng.standard_normal((out, features)).astype(np.float32)
        bias = rng.standard_normal(out).astype(np.float32)
        ours = gradwalk.nn.functional.linear(gradwalk.tensor(x), gradwalk.tensor(w), gradwalk.tensor(bias))
        theirs = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(bias))
        assert same_bits(ours.numpy(), theirs.numpy()), (batch, features, out)
        ours = gradwalk.addmm(gradwalk.tensor(bias), gradwalk.tensor(x), gradwalk.tensor(w).t())
        assert same_bits(ours.numpy(), theirs.numpy()), (batch, features, out)


def test_set_num_threads_wins_over_a_finished_threadpoolctl_limit():
    # threadpoolctl (gradwalk train, scikit-learn) limits MKL with a thread-local count and
    # leaves one behind; torch.set_num_threads(1) afterwards must still give one thread's bits
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 256)).astype(np.float32)
    threads = torch.get_num_threads()
    with threadpool_limits(limits=1, user_api="blas"):
        pass
    try:
        torch.set_num_threads(1)
        gradwalk.set_num_threads(1)
        assert same_bits((gradwalk.tensor(a) @ gradwalk.tensor(b)).numpy(), (torch.tensor(a) @ torch.tensor(b)).numpy())
    finally:
        torch.set_num_threads(threads)
        gradwalk.set_num_threads(threads)
