"""Convolution and max pooling on their array paths (one batched matrix product per layer, one
strided copy or add per kernel tap, max pooling by one pass per tap) beside PyTorch: the same
values and gradients over strides, paddings, dilations, groups, ceil_mode, ties and NaNs.
Convolution's compiled im2col/col2im (ops/_conv_fast.py, numba, for large layers) runs here on
every layer, with the size threshold lowered, and must give the NumPy reference's bits."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import gradwalk as gw
from gradwalk import _fast
from gradwalk.ops import nn_ops

PATHS = {"compiled": 0, "reference": 1 << 62}  # nn_ops.CONV_FAST_MIN for each path


@pytest.fixture(params=sorted(PATHS))
def conv_path(request, monkeypatch):
    """Each conv test once on the compiled im2col/col2im (every size), once on the NumPy path."""
    if request.param == "compiled" and _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    monkeypatch.setattr(nn_ops, "CONV_FAST_MIN", PATHS[request.param])
    return request.param


def both(array, requires_grad=True):
    return gw.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def conv_configs():
    rng = np.random.default_rng(0)
    for _ in range(30):
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        yield dict(n=int(rng.integers(1, 4)), groups=int(rng.choice([1, 2])), cg=int(rng.integers(1, 4)),
                   og=int(rng.integers(1, 4)), kernel=(kh, kw),
                   stride=(int(rng.integers(1, 3)), int(rng.integers(1, 3))),
                   padding=(int(rng.integers(0, 2)), int(rng.integers(0, 2))), dilation=(dh, dw),
                   size=(int(rng.integers(dh * (kh - 1) + 1, 9)), int(rng.integers(dw * (kw - 1) + 1, 9))))


@pytest.mark.parametrize("cfg", list(conv_configs()))
def test_conv2d_values_and_gradients_beside_torch(cfg, conv_path):
    rng = np.random.default_rng(1)
    c = cfg["cg"] * cfg["groups"]
    x, tx = both(rng.standard_normal((cfg["n"], c) + cfg["size"]).astype(np.float32))
    w, tw = both(rng.standard_normal((cfg["og"] * cfg["groups"], cfg["cg"]) + cfg["kernel"]).astype(np.float32))
    b, tb = both(rng.standard_normal(cfg["og"] * cfg["groups"]).astype(np.float32))
    kw = dict(stride=cfg["stride"], padding=cfg["padding"], dilation=cfg["dilation"], groups=cfg["groups"])
    out, tout = gw.nn.functional.conv2d(x, w, b, **kw), torch.nn.functional.conv2d(tx, tw, tb, **kw)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    out.backward(gw.tensor(g))
    tout.backward(torch.tensor(g))
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_digits_cnn_first_layer_forward_is_pytorchs_bits(conv_path):
    # one input channel: each output is a 9-term dot product, summed in PyTorch's order
    rng = np.random.default_rng(2)
    x, tx = both(rng.random((32, 1, 8, 8), dtype=np.float32))
    w, tw = both(rng.standard_normal((16, 1, 3, 3)).astype(np.float32))
    assert same_bits(gw.nn.functional.conv2d(x, w, padding=1).detach().numpy(),
                     torch.nn.functional.conv2d(tx, tw, padding=1).detach().numpy())


def test_cifar_sized_layer_beside_torch(conv_path):
    rng = np.random.default_rng(3)
    x, tx = both(rng.standard_normal((8, 32, 16, 16)).astype(np.float32))
    w, tw = both((rng.standard_normal((64, 32, 3, 3)) * 0.1).astype(np.float32))
    out, tout = gw.nn.functional.conv2d(x, w, padding=1), torch.nn.functional.conv2d(tx, tw, padding=1)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4, atol=1e-4)
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-3, atol=1e-2)


def conv_run(cfg, seed, x_layout="contiguous", dtype=np.float32):
    """conv2d forward and backward on the current path: (out, grad input, grad weight, grad bias)."""
    rng = np.random.default_rng(seed)
    c = cfg["cg"] * cfg["groups"]
    x = rng.standard_normal((cfg["n"], c) + tuple(cfg["size"])).astype(dtype)
    if x_layout == "transposed":  # the same values, H and W strides swapped
        x = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    w = rng.standard_normal((cfg["og"] * cfg["groups"], cfg["cg"]) + tuple(cfg["kernel"])).astype(dtype)
    b = rng.standard_normal(cfg["og"] * cfg["groups"]).astype(dtype)
    kw = dict(stride=cfg["stride"], padding=cfg["padding"], dilation=cfg["dilation"], groups=cfg["groups"])
    results = []
    for lib in (gw, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        out = lib.nn.functional.conv2d(xs, ws, bs, **kw)
        g = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape)).astype(dtype)
        out.backward(lib.tensor(g))
        results.append([np.ascontiguousarray(t.detach().numpy()) for t in (out, xs.grad, ws.grad, bs.grad)])
    return results


BIG_CONFIGS = [  # every size path: digits and CIFAR layers, strides, dilation, groups, no padding
    dict(n=32, groups=1, cg=16, og=32, kernel=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), size=(8, 8)),
    dict(n=8, groups=1, cg=32, og=64, kernel=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), size=(16, 16)),
    dict(n=5, groups=1, cg=3, og=32, kernel=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), size=(32, 32)),
    dict(n=4, groups=2, cg=8, og=6, kernel=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), size=(17, 13)),
    dict(n=3, groups=1, cg=12, og=10, kernel=(5, 5), stride=(2, 3), padding=(2, 1), dilation=(1, 1), size=(21, 20)),
    dict(n=6, groups=3, cg=4, og=5, kernel=(3, 3), stride=(1, 2), padding=(0, 0), dilation=(2, 2), size=(15, 19)),
    dict(n=2, groups=1, cg=9, og=7, kernel=(1, 1), stride=(1, 1), padding=(0, 0), dilation=(1, 1), size=(30, 31)),
]


@pytest.mark.parametrize("x_layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("cfg", list(conv_configs())[:12] + BIG_CONFIGS)
def test_conv2d_compiled_path_gives_the_reference_bits(cfg, x_layout, monkeypatch):
    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    monkeypatch.setattr(nn_ops, "CONV_FAST_MIN", PATHS["reference"])
    reference, theirs = conv_run(cfg, 11, x_layout)
    monkeypatch.setattr(nn_ops, "CONV_FAST_MIN", PATHS["compiled"])
    compiled, _ = conv_run(cfg, 11, x_layout)
    for name, a, r, t in zip(("output", "grad input", "grad weight", "grad bias"), compiled, reference, theirs):
        assert same_bits(a, r), f"{name}: compiled != reference"
        np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(t).max())), err_msg=name)


def test_conv2d_compiled_path_in_float64(monkeypatch):
    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    cfg = BIG_CONFIGS[3]
    monkeypatch.setattr(nn_ops, "CONV_FAST_MIN", PATHS["reference"])
    reference, theirs = conv_run(cfg, 12, dtype=np.float64)
    monkeypatch.setattr(nn_ops, "CONV_FAST_MIN", PATHS["compiled"])
    compiled, _ = conv_run(cfg, 12, dtype=np.float64)
    for a, r, t in zip(compiled, reference, theirs):
        assert same_bits(a, r)
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-10)


# layers where gradwalk's output and input and weight gradients are PyTorch's own bits (found over
# 125 random layers, and true of these on the code before the compiled path): both paths keep them
TORCH_BITS_CONFIGS = [
    dict(n=1, groups=1, cg=4, og=2, kernel=(2, 3), stride=(1, 1), padding=(1, 0), dilation=(1, 2), size=(8, 6)),
    dict(n=1, groups=1, cg=16, og=14, kernel=(1, 1), stride=(1, 2), padding=(1, 1), dilation=(2, 1), size=(19, 7)),
    dict(n=1, groups=1, cg=3, og=4, kernel=(2, 2), stride=(2, 1), padding=(0, 0), dilation=(2, 1), size=(6, 5)),
    dict(n=1, groups=1, cg=3, og=4, kernel=(2, 2), stride=(1, 2), padding=(1, 1), dilation=(1, 2), size=(7, 8)),
    dict(n=1, groups=1, cg=3, og=3, kernel=(2, 2), stride=(2, 2), padding=(0, 1), dilation=(2, 2), size=(3, 5)),
    dict(n=3, groups=2, cg=3, og=2, kernel=(2, 1), stride=(1, 2), padding=(1, 1), dilation=(1, 2), size=(5, 1)),
]


@pytest.mark.parametrize("cfg", TORCH_BITS_CONFIGS)
def test_conv2d_keeps_pytorchs_bits_where_it_has_them(cfg, conv_path):
    seed = 100 + TORCH_BITS_CONFIGS.index(cfg)
    mine, theirs = conv_run(cfg, seed)
    for name, a, t in zip(("output", "grad input", "grad weight"), mine[:3], theirs[:3]):
        assert same_bits(a, t), name


def test_numba_stays_out_of_import_and_small_convs_and_GRADWALK_NO_NUMBA_keeps_it_out():
    def run(code, **env):
        result = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    layer = ("import sys, gradwalk as gw; x = gw.randn({}, requires_grad=True); "
             "gw.nn.functional.conv2d(x, gw.randn(8, {}, 3, 3), padding=1).sum().backward(); "
             "print('numba' in sys.modules, 'gradwalk.ops._conv_fast' in sys.modules)")
    assert run(layer.format("2, 3, 8, 8", 3), GRADWALK_NO_NUMBA="") == "False False"
    assert run(layer.format("32, 16, 8, 8", 16), GRADWALK_NO_NUMBA="1") == "False False"
    if _fast.numba_njit() is not None:
        assert run(layer.format("32, 16, 8, 8", 16), GRADWALK_NO_NUMBA="") == "True True"


POOL_CONFIGS = [dict(kernel_size=2), dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=1, padding=1),
                dict(kernel_size=2, stride=2, ceil_mode=True), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)), dict(kernel_size=2, stride=3)]


@pytest.fixture(params=sorted(PATHS))
def pool_path(request, monkeypatch):
    """Each max-pool test once on the compiled backward scatter (every size), once on NumPy's."""
    if request.param == "compiled" and _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    monkeypatch.setattr(nn_ops, "POOL_FAST_MIN", PATHS[request.param])
    return request.param


@pytest.mark.parametrize("cfg", POOL_CONFIGS)
def test_max_pool_values_indices_and_gradients_are_pytorchs(cfg, pool_path):
    rng = np.random.default_rng(4)
    data = rng.integers(-3, 4, (2, 3, 7, 9)).astype(np.float32)  # small integers: many ties
    x, tx = both(data)
    out, idx = gw.nn.functional.max_pool2d(x, return_indices=True, **cfg)
    tout, tidx = torch.nn.functional.max_pool2d(tx, return_indices=True, **cfg)
    assert same_bits(out.detach().numpy(), tout.detach().numpy())
    assert same_bits(idx.numpy(), tidx.numpy())
    g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    g[..., ::2] = -0.0
    out.backward(gw.tensor(g))
    tout.backward(torch.tensor(g))
    assert same_bits(x.grad.numpy(), tx.grad.numpy())


def test_max_pool_picks_a_nan_as_pytorch():
    data = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    data[0, 0, 1, 1] = np.nan
    x, tx = both(data)
    out, idx = gw.nn.functional.max_pool2d(x, 2, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    assert same_bits(out.detach().numpy(), tout.detach().numpy())
    assert same_bits(idx.numpy(), tidx.numpy())


def test_max_pool_double_backward_beside_torch(pool_path):
    rng = np.random.default_rng(5)
    x, tx = both(rng.standard_normal((2, 2, 6, 6)).astype(np.float32))
    (gx,) = gw.autograd.grad(gw.nn.functional.max_pool2d(x, 2).pow(2).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad(torch.nn.functional.max_pool2d(tx, 2).pow(2).sum(), tx, create_graph=True)
    assert same_bits(gx.detach().numpy(), tgx.detach().numpy())
    gx.sum().backward()
    tgx.sum().backward()
    assert same_bits(x.grad.numpy(), tx.grad.numpy())


def test_max_pool_keeps_the_sign_of_the_first_zero():
    data = np.array([[[[-0.0, 0.0, 0.0, -0.0], [0.0, -0.0, -0.0, -1.0]]]], dtype=np.float32)
    x, tx = both(data)
    out, idx = gw.nn.functional.max_pool2d(x, 2, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    assert same_bits(out.detach().numpy(), tout.detach().numpy())
    assert same_bits(idx.numpy(), tidx.numpy())


def test_max_pool_compiled_scatter_gives_the_reference_bits(monkeypatch):
    if _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed")
    rng = np.random.default_rng(6)
    values = np.array([0.0, -0.0, 1.0, -1.0, np.nan, -np.inf, 2.0, 0.5])
    for trial in range(120):
        kernel = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dilation = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
        size = (int(rng.integers(dilation[0] * (kernel[0] - 1) + 1, 11)),
                int(rng.integers(dilation[1] * (kernel[1] - 1) + 1, 11)))
        data = rng.choice(values, size=(2, 3) + size).astype(np.float32 if trial % 3 else np.float64)
        grads = []
        for fast_min in (0, 1 << 62):
            monkeypatch.setattr(nn_ops, "POOL_FAST_MIN", fast_min)
            x = gw.tensor(data, requires_grad=True)
            out = gw.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=bool(trial % 2))
            g = np.random.default_rng(trial).standard_normal(tuple(out.shape)).astype(data.dtype)
            g[..., ::3] = -0.0
            out.backward(gw.tensor(g))
            grads.append(x.grad.numpy())
        assert same_bits(grads[0], grads[1]), (kernel, stride, dilation, padding, size)
