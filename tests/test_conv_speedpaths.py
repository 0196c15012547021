"""Convolution and max pooling on their array paths (one batched matrix product per layer, one
strided copy or add per kernel tap, max pooling by one pass per tap) beside PyTorch: the same
values and gradients over strides, paddings, dilations, groups, ceil_mode, ties and NaNs."""
import numpy as np
import pytest
import torch

import gradwalk as gw



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
def test_conv2d_values_and_gradients_beside_torch(cfg):
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


def test_digits_cnn_first_layer_forward_is_pytorchs_bits():
    # one input channel: each output is a 9-term dot product, summed in PyTorch's order
    rng = np.random.default_rng(2)
    x, tx = both(rng.random((32, 1, 8, 8), dtype=np.float32))
    w, tw = both(rng.standard_normal((16, 1, 3, 3)).astype(np.float32))
    assert same_bits(gw.nn.functional.conv2d(x, w, padding=1).detach().numpy(),
                     torch.nn.functional.conv2d(tx, tw, padding=1).detach().numpy())


def test_cifar_sized_layer_beside_torch():
    rng = np.random.default_rng(3)
    x, tx = both(rng.standard_normal((8, 32, 16, 16)).astype(np.float32))
    w, tw = both((rng.standard_normal((64, 32, 3, 3)) * 0.1).astype(np.float32))
    out, tout = gw.nn.functional.conv2d(x, w, padding=1), torch.nn.functional.conv2d(tx, tw, padding=1)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4, atol=1e-4)
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-3, atol=1e-2)


POOL_CONFIGS = [dict(kernel_size=2), dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=1, padding=1),
                dict(kernel_size=2, stride=2, ceil_mode=True), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)), dict(kernel_size=2, stride=3)]


@pytest.mark.parametrize("cfg", POOL_CONFIGS)
def test_max_pool_values_indices_and_gradients_are_pytorchs(cfg):
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


def test_max_pool_double_backward_beside_torch():
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
