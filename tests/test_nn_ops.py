"""nn.functional's ops beside PyTorch: the same values, gradients and node names, plus central
differences in float64 for the ops with formulas of their own."""
import numpy as np
import pytest
import torch

import gradwalk
from gradwalk.nn import functional as GF
from conftest import assert_same, central_difference

TF = torch.nn.functional
rng = np.random.default_rng(0)


def both(array, requires_grad=True):
    """The same values as a gradwalk tensor and a torch tensor."""
    return (gradwalk.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def check_same(fn_gw, fn_pt, arrays, node, rtol=1e-5, atol=1e-6, weights=None):
    """Run both, compare outputs, node names and the gradients of ``(out * weights).sum()``."""
    gw_in = [gradwalk.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    pt_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out_gw, out_pt = fn_gw(*gw_in), fn_pt(*pt_in)
    assert type(out_gw.grad_fn).__name__ == type(out_pt.grad_fn).__name__ == node
    assert_same(out_gw, out_pt, rtol, atol)
    w = rng.standard_normal(tuple(out_pt.shape)).astype(arrays[0].dtype) if weights is None else weights
    (out_gw * gradwalk.tensor(w)).sum().backward()
    (out_pt * torch.tensor(w)).sum().backward()
    for a, b in zip(gw_in, pt_in):
        if b.requires_grad:
            assert_same(a.grad, b.grad, rtol, atol)


ACTIVATIONS = [
    ("leaky_relu", lambda F: (lambda x: F.leaky_relu(x, 0.2)), "LeakyReluBackward0"),
    ("gelu", lambda F: F.gelu, "GeluBackward0"),
    ("gelu_tanh", lambda F: (lambda x: F.gelu(x, approximate="tanh")), "GeluBackward0"),
    ("silu", lambda F: F.silu, "SiluBackward0"),
    ("softplus", lambda F: (lambda x: F.softplus(x, beta=2.0, threshold=3.0)), "SoftplusBackward0"),
    ("elu", lambda F: (lambda x: F.elu(x, alpha=0.7)), "EluBackward0"),
    ("hardtanh", lambda F: (lambda x: F.hardtanh(x, -0.5, 0.8)), "HardtanhBackward0"),
    ("logsigmoid", lambda F: F.logsigmoid, "LogSigmoidBackward0"),
]


@pytest.mark.parametrize("name,make,node", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_torch(name, make, node):
    x = (rng.standard_normal((4, 5)) * 3).astype(np.float32)
    check_same(make(GF), make(TF), [x], node)


@pytest.mark.parametrize("name,make,node", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradient_matches_central_differences(name, make, node):
    x = rng.standard_normal((3, 4)) * 2
    x[np.abs(x) < 0.05] += 0.3  # keep away from kinks
    fn = make(GF)
    xt = gradwalk.tensor(x, requires_grad=True)
    fn(xt).sum().backward()
    (numeric,) = central_difference(lambda a: fn(gradwalk.tensor(a))._data, [x])
    np.testing.assert_allclose(xt.grad._data, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,make,node", ACTIVATIONS[:5], ids=[a[0] for a in ACTIVATIONS[:5]])
def test_activation_second_derivative_matches_torch(name, make, node):
    x = (rng.standard_normal(6) * 2)
    gx, px = both(x)
    (g1,) = gradwalk.autograd.grad(make(GF)(gx).sum(), gx, create_graph=True)
    (p1,) = torch.autograd.grad(make(TF)(px).sum(), px, create_graph=True)
    g1.sum().backward()
    p1.sum().backward()
    assert_same(gx.grad, px.grad, 1e-5, 1e-7)


CONVS = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
    dict(padding=1, groups=2),
]


@pytest.mark.parametrize("kwargs", CONVS, ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(kwargs, bias):
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = rng.standard_normal((6, 4 // kwargs.get("groups", 1), 3, 2)).astype(np.float32)
    arrays = [x, w] + ([rng.standard_normal(6).astype(np.float32)] if bias else [])
    check_same(lambda *t: GF.conv2d(*t, **kwargs), lambda *t: TF.conv2d(*t, **kwargs), arrays,
               "ConvolutionBackward0", rtol=1e-4, atol=1e-5)


def test_conv2d_next_functions_are_input_weight_bias():
    x = gradwalk.randn(1, 2, 5, 5, requires_grad=True)
    w = gradwalk.randn(3, 2, 3, 3, requires_grad=True)
    b = gradwalk.randn(3, requires_grad=True)
    node = GF.conv2d(x, w, b).grad_fn
    assert [fn.variable for fn, _ in node.next_functions] == [x, w, b]


def test_conv2d_gradient_matches_central_differences():
    x = rng.standard_normal((1, 2, 5, 4))
    w = rng.standard_normal((3, 2, 2, 3))
    b = rng.standard_normal(3)
    f = lambda x, w, b: GF.conv2d(x, w, b, stride=(2, 1), padding=1)
    tensors = [gradwalk.tensor(a, requires_grad=True) for a in (x, w, b)]
    f(*tensors).sum().backward()
    numeric = central_difference(lambda *a: f(*(gradwalk.tensor(v) for v in a))._data, [x, w, b])
    for t, n in zip(tensors, numeric):
        np.testing.assert_allclose(t.grad._data, n, rtol=1e-5, atol=1e-6)


def test_conv2d_double_backward_matches_torch():
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    (gx, px), (gw, pw) = both(x), both(w)
    g_out = GF.conv2d(gx, gw, padding=1)
    p_out = TF.conv2d(px, pw, padding=1)
    g_grads = gradwalk.autograd.grad((g_out ** 2).sum(), (gx, gw), create_graph=True)
    p_grads = torch.autograd.grad((p_out ** 2).sum(), (px, pw), create_graph=True)
    (g_grads[0].sum() + (g_grads[1] ** 2).sum()).backward()
    (p_grads[0].sum() + (p_grads[1] ** 2).sum()).backward()
    assert_same(gx.grad, px.grad, 1e-6, 1e-6)
    assert_same(gw.grad, pw.grad, 1e-6, 1e-6)


POOLS = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
         dict(kernel_size=2, stride=2, ceil_mode=True), dict(kernel_size=(2, 3), stride=1, dilation=(2, 1))]


@pytest.mark.parametrize("kwargs", POOLS, ids=str)
def test_max_pool2d_matches_torch(kwargs):
    x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    check_same(lambda t: GF.max_pool2d(t, **kwargs), lambda t: TF.max_pool2d(t, **kwargs), [x],
               "MaxPool2DWithIndicesBackward0")
    _, gi = GF.max_pool2d(gradwalk.tensor(x), return_indices=True, **kwargs)
    _, pi = TF.max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
    np.testing.assert_array_equal(gi._data, pi.numpy())


def test_max_pool2d_overlapping_windows_sum_gradients():
    x = np.array([[[[0., 9., 0.], [0., 0., 0.], [0., 0., 0.]]]], dtype=np.float32)
    check_same(lambda t: GF.max_pool2d(t, 2, 1), lambda t: TF.max_pool2d(t, 2, 1), [x],
               "MaxPool2DWithIndicesBackward0")


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_matches_torch(affine):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    arrays = [x] + ([rng.standard_normal((4, 5)).astype(np.float32),
                     rng.standard_normal((4, 5)).astype(np.float32)] if affine else [])
    check_same(lambda x, *wb: GF.layer_norm(x, (4, 5), *wb), lambda x, *wb: TF.layer_norm(x, (4, 5), *wb),
               arrays, "NativeLayerNormBackward0", rtol=1e-4, atol=1e-5)


def test_layer_norm_gradient_matches_central_differences():
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    tensors = [gradwalk.tensor(a, requires_grad=True) for a in (x, w, b)]
    weights = gradwalk.tensor(rng.standard_normal((3, 4)))
    f = lambda x, w, b: GF.layer_norm(x, (4,), w, b) * weights
    f(*tensors).sum().backward()
    numeric = central_difference(lambda *a: f(*(gradwalk.tensor(v) for v in a))._data, [x, w, b])
    for t, n in zip(tensors, numeric):
        np.testing.assert_allclose(t.grad._data, n, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch_including_running_stats(shape, training):
    x = rng.standard_normal(shape).astype(np.float32) * 2 + 1
    rm_a, rv_a = rng.standard_normal(3).astype(np.float32), rng.random(3).astype(np.float32) + 0.5
    rm_g, rv_g = gradwalk.tensor(rm_a), gradwalk.tensor(rv_a)
    rm_p, rv_p = torch.tensor(rm_a), torch.tensor(rv_a)
    check_same(lambda x, w, b: GF.batch_norm(x, rm_g, rv_g, w, b, training, 0.3),
               lambda x, w, b: TF.batch_norm(x, rm_p, rv_p, w, b, training, 0.3),
               [x, rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)],
               "NativeBatchNormBackward0", rtol=1e-4, atol=1e-5)
    assert_same(rm_g, rm_p, 1e-5, 1e-6)
    assert_same(rv_g, rv_p, 1e-5, 1e-6)


def test_batch_norm_gradient_matches_central_differences():
    x, w, b = rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal(3)
    weights = gradwalk.tensor(rng.standard_normal((5, 3)))
    tensors = [gradwalk.tensor(a, requires_grad=True) for a in (x, w, b)]
    f = lambda x, w, b: GF.batch_norm(x, None, None, w, b, training=True) * weights
    f(*tensors).sum().backward()
    numeric = central_difference(lambda *a: f(*(gradwalk.tensor(v) for v in a))._data, [x, w, b])
    for t, n in zip(tensors, numeric):
        np.testing.assert_allclose(t.grad._data, n, rtol=1e-5, atol=1e-6)


def test_batch_norm_one_value_per_channel_error():
    with pytest.raises(ValueError) as theirs:
        TF.batch_norm(torch.ones(1, 3), None, None, training=True)
    with pytest.raises(ValueError) as ours:
        GF.batch_norm(gradwalk.ones(1, 3), None, None, training=True)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_matches_torch(padding_idx):
    w = rng.standard_normal((6, 3)).astype(np.float32)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    gw_w, pt_w = both(w)
    out_g = GF.embedding(gradwalk.tensor(idx), gw_w, padding_idx)
    out_p = TF.embedding(torch.tensor(idx), pt_w, padding_idx)
    assert type(out_g.grad_fn).__name__ == "EmbeddingBackward0"
    assert_same(out_g, out_p)
    g = rng.standard_normal((2, 3, 3)).astype(np.float32)
    (out_g * gradwalk.tensor(g)).sum().backward()
    (out_p * torch.tensor(g)).sum().backward()
    assert_same(gw_w.grad, pt_w.grad)


@pytest.mark.parametrize("training,p", [(True, 0.0), (False, 0.5)])
def test_dropout_that_drops_nothing_is_the_identity(training, p):
    gx, px = both(rng.standard_normal(5).astype(np.float32))
    assert GF.dropout(gx, p, training) is gx
    assert TF.dropout(px, p, training) is px


def test_dropout_scales_kept_values_and_records_mul():
    gradwalk.manual_seed(0)
    x = gradwalk.ones(1000, requires_grad=True)
    y = GF.dropout(x, 0.25)
    assert type(y.grad_fn).__name__ == "MulBackward0"
    kept = y._data != 0
    np.testing.assert_allclose(y._data[kept], 1 / 0.75, rtol=1e-6)
    assert 0.68 < kept.mean() < 0.82
    y.sum().backward()
    np.testing.assert_allclose(x.grad._data, y._data)


def test_dropout_bad_probability_message():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        GF.dropout(gradwalk.ones(2), 1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        TF.dropout(torch.ones(2), 1.5)


def test_functional_exposes_the_core_losses_and_activations():
    for name in ("relu sigmoid tanh softmax log_softmax mse_loss cross_entropy nll_loss binary_cross_entropy "
                 "binary_cross_entropy_with_logits linear l1_loss dropout conv2d max_pool2d layer_norm "
                 "batch_norm embedding gelu leaky_relu silu softplus elu hardtanh logsigmoid").split():
        assert callable(getattr(GF, name)), name
