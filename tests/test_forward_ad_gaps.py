"""Forward-mode AD through the ops that had no ``jvp`` formula: normalization, transposed
convolution, the double-backward ops of conv / pooling / embedding (so ``jacfwd(jacrev(f))`` and
``hessian`` run through a CNN), the smooth-L1 and Huber losses, ``take``/``put`` and ``slogdet``.

Each op's tangent is checked beside PyTorch's, through ``func.jvp`` and through the dual-number
API of ``autograd.forward_ad``, in float64 (to 1e-10).
"""
import numpy as np
import pytest
import torch  # real PyTorch: these tests compare against it and must fail without it

import gradwalk
import gradwalk.autograd.forward_ad as fwAD

rng = np.random.default_rng(0)


def R(*shape):
    return rng.standard_normal(shape)


# name -> (f(lib, *tensors), the primal arrays)
CASES = {
    "layer_norm_affine": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (3,), w, b),
                          [R(2, 4, 3), R(3), R(3)]),
    "layer_norm_two_dims": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4, 3), w, b),
                            [R(2, 4, 3), R(4, 3), R(4, 3)]),
    "layer_norm_plain": (lambda lib, x: lib.nn.functional.layer_norm(x, (5,)), [R(3, 5)]),
    "batch_norm_training": (
        lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
        [R(4, 3, 2), R(3), R(3)]),
    "batch_norm_training_4d": (
        lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True), [R(2, 3, 2, 2)]),
    "batch_norm_eval": (
        lambda lib, x, w, b: lib.nn.functional.batch_norm(
            x, lib.tensor([0.1, -0.2, 0.3], dtype=lib.float64),
            lib.tensor([1.5, 0.5, 2.0], dtype=lib.float64), w, b, training=False),
        [R(4, 3, 2), R(3), R(3)]),
    "instance_norm": (lambda lib, x: lib.nn.functional.instance_norm(x), [R(2, 4, 3)]),
    "conv_transpose2d": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
                         [R(1, 2, 4, 4), R(2, 3, 3, 3)]),
    "conv_transpose2d_bias": (
        lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(x, w, b, padding=1),
        [R(2, 2, 3, 3), R(2, 3, 3, 3), R(3)]),
    "smooth_l1_loss": (lambda lib, x, t: lib.nn.functional.smooth_l1_loss(x, t), [R(3, 4), R(3, 4)]),
    "smooth_l1_loss_beta": (
        lambda lib, x, t: lib.nn.functional.smooth_l1_loss(x, t, beta=2.0, reduction="sum"),
        [R(3, 4), R(3, 4)]),
    "smooth_l1_loss_beta0": (
        lambda lib, x, t: lib.nn.functional.smooth_l1_loss(x, t, beta=0.0, reduction="none"),
        [R(3, 4), R(3, 4)]),
    "huber_loss": (lambda lib, x, t: lib.nn.functional.huber_loss(x, t), [R(3, 4), R(3, 4)]),
    "huber_loss_delta": (
        lambda lib, x, t: lib.nn.functional.huber_loss(x, t, delta=0.5, reduction="none"),
        [R(3, 4), R(3, 4)]),
    "take": (lambda lib, x: lib.take(x, lib.tensor([0, 5, 3, 5])), [R(3, 4)]),
    "put": (lambda lib, x, s: x.put(lib.tensor([0, 5, 3]), s), [R(3, 4), R(3)]),
    "put_accumulate": (lambda lib, x, s: x.put(lib.tensor([0, 5, 5]), s, accumulate=True),
                       [R(3, 4), R(3)]),
    "slogdet": (lambda lib, a: lib.slogdet(a)[1], [R(3, 3)]),
    "linalg_slogdet_batched": (lambda lib, a: lib.linalg.slogdet(a)[1], [R(2, 3, 3)]),
}


def _both(name):
    f, arrays = CASES[name]
    tangents = [R(*a.shape) for a in arrays]
    return f, arrays, tangents


@pytest.mark.parametrize("name", sorted(CASES))
def test_func_jvp_matches_torch(name):
    f, arrays, tangents = _both(name)
    expected_out, expected = torch.func.jvp(
        lambda *a: f(torch, *a), tuple(torch.tensor(a) for a in arrays),
        tuple(torch.tensor(t) for t in tangents))
    out, tangent = gradwalk.func.jvp(
        lambda *a: f(gradwalk, *a), tuple(gradwalk.tensor(a) for a in arrays),
        tuple(gradwalk.tensor(t) for t in tangents))
    assert tangent.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.numpy(), expected_out.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_dual_tensors_match_torch(name):
    f, arrays, tangents = _both(name)
    results = []
    for lib, ad in ((gradwalk, fwAD), (torch, torch.autograd.forward_ad)):
        with ad.dual_level():
            duals = [ad.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
            tangent = ad.unpack_dual(f(lib, *duals)).tangent
            results.append(tangent.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=1e-10)


def test_slogdet_sign_has_a_zero_tangent():
    a, t = R(3, 3), R(3, 3)
    with fwAD.dual_level():
        sign, logabsdet = gradwalk.linalg.slogdet(fwAD.make_dual(gradwalk.tensor(a), gradwalk.tensor(t)))
        assert fwAD.unpack_dual(sign).tangent.tolist() == 0.0
        # d log|det A| = trace(A^-1 dA)
        assert abs(fwAD.unpack_dual(logabsdet).tangent.item() - np.trace(np.linalg.inv(a) @ t)) < 1e-12


def test_layer_norm_float32_tangent_beside_torch():
    x, w, b = R(4, 6).astype(np.float32), R(6).astype(np.float32), R(6).astype(np.float32)
    t = R(4, 6).astype(np.float32)
    expected = torch.func.jvp(lambda x: torch.nn.functional.layer_norm(x, (6,), torch.tensor(w),
                                                                       torch.tensor(b)),
                              (torch.tensor(x),), (torch.tensor(t),))[1]
    tangent = gradwalk.func.jvp(lambda x: gradwalk.nn.functional.layer_norm(
        x, (6,), gradwalk.tensor(w), gradwalk.tensor(b)), (gradwalk.tensor(x),), (gradwalk.tensor(t),))[1]
    assert tangent.dtype is gradwalk.float32
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- second order

IMAGE, HEAD = R(1, 1, 6, 6), R(3, 8)


def tiny_cnn(lib, w):
    """conv2d (2 filters, 3x3) -> tanh -> max_pool2d(2) -> linear(8 -> 3) -> squared sum."""
    F = lib.nn.functional
    h = F.conv2d(lib.tensor(IMAGE), w.reshape(2, 1, 3, 3))
    h = F.max_pool2d(lib.tanh(h), 2)
    return F.linear(h.reshape(1, -1), lib.tensor(HEAD)).pow(2).sum()


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_hessian_of_a_tiny_cnn_matches_torch():
    w = R(18)
    expected = torch.func.hessian(lambda w: tiny_cnn(torch, w))(torch.tensor(w))
    hessian = gradwalk.func.hessian(lambda w: tiny_cnn(gradwalk, w))(gradwalk.tensor(w))
    np.testing.assert_allclose(hessian.numpy(), expected.numpy(), rtol=0, atol=1e-10)
    # forward over reverse, spelled out, and reverse over reverse give the same matrix
    fwd_rev = gradwalk.func.jacfwd(gradwalk.func.jacrev(lambda w: tiny_cnn(gradwalk, w)))(gradwalk.tensor(w))
    rev_rev = gradwalk.func.jacrev(gradwalk.func.jacrev(lambda w: tiny_cnn(gradwalk, w)))(gradwalk.tensor(w))
    np.testing.assert_allclose(fwd_rev.numpy(), expected.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(rev_rev.numpy(), expected.numpy(), rtol=0, atol=1e-10)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_hessian_through_avg_pool_conv_transpose_and_embedding():
    rows = R(5, 3)

    def f(lib, w):
        F = lib.nn.functional
        emb = F.embedding(lib.tensor([[0, 2, 4, 1]]), w[:15].reshape(5, 3))  # (1, 4, 3)
        h = F.conv_transpose2d(emb.reshape(1, 1, 4, 3), w[15:19].reshape(1, 1, 2, 2))
        h = F.avg_pool2d(lib.tanh(h), 2)
        return (F.adaptive_avg_pool2d(h, (1, 2)) ** 2).sum() + (lib.tensor(rows) * w[:15].reshape(5, 3)).sum()

    w = R(19)
    expected = torch.func.hessian(lambda w: f(torch, w))(torch.tensor(w))
    hessian = gradwalk.func.hessian(lambda w: f(gradwalk, w))(gradwalk.tensor(w))
    np.testing.assert_allclose(hessian.numpy(), expected.numpy(), rtol=0, atol=1e-10)


X, BETA, HEAD2 = R(3, 5), R(4), R(2, 4)


def layer_norm_mlp(lib, x, W, gamma):
    """linear(5 -> 4) -> layer_norm(4) -> tanh -> linear(4 -> 2) -> squared sum."""
    F = lib.nn.functional
    h = F.layer_norm(F.linear(x, W), (4,), gamma, lib.tensor(BETA))
    return F.linear(lib.tanh(h), lib.tensor(HEAD2)).pow(2).sum()


@pytest.mark.parametrize("argnums", [0, 1, 2])
def test_hessian_of_a_layer_norm_mlp_matches_torch(argnums):
    args = (X, R(4, 5), R(4))
    expected = torch.func.hessian(lambda *a: layer_norm_mlp(torch, *a), argnums=argnums)(
        *(torch.tensor(a) for a in args))
    hessian = gradwalk.func.hessian(lambda *a: layer_norm_mlp(gradwalk, *a), argnums=argnums)(
        *(gradwalk.tensor(a) for a in args))
    np.testing.assert_allclose(hessian.numpy(), expected.numpy(), rtol=0, atol=1e-10)


def test_layer_norm_cross_terms_match_torch_autograd_not_torch_func():
    """The mixed (input, weight) second derivatives of layer_norm. PyTorch 2.13's torch.func
    gets these wrong (pytorch/pytorch#196700 and #196699: layer_norm/batch_norm second-order
    jvp), while its torch.autograd double backward and finite differences agree with each other
    and with gradwalk. So the reference here is torch.autograd.grad(create_graph=True)."""
    x, W, gamma = X, R(4, 5), R(4)
    params = np.concatenate([W.ravel(), gamma])

    def f(lib, p):
        return layer_norm_mlp(lib, lib.tensor(x), p[:20].reshape(4, 5), p[20:])

    p = torch.tensor(params, requires_grad=True)
    (grad,) = torch.autograd.grad(f(torch, p), (p,), create_graph=True)
    expected = np.stack([torch.autograd.grad(grad[i], (p,), retain_graph=True)[0].numpy()
                         for i in range(params.size)])
    hessian = gradwalk.func.hessian(lambda p: f(gradwalk, p))(gradwalk.tensor(params))
    np.testing.assert_allclose(hessian.numpy(), expected, rtol=0, atol=1e-10)
    # central differences of PyTorch's gradient, as a third opinion
    eps = 1e-5
    grad_at = lambda q: torch.func.grad(lambda p: f(torch, p))(torch.tensor(q)).numpy()
    numeric = np.stack([(grad_at(params + eps * e) - grad_at(params - eps * e)) / (2 * eps)
                        for e in np.eye(params.size)])
    np.testing.assert_allclose(hessian.numpy(), numeric, rtol=0, atol=1e-6)


def test_nested_jvp_of_layer_norm_is_the_true_second_derivative():
    # pytorch/pytorch#196700's example: f(t) simplifies to -t / sqrt(1 + t**2), whose second
    # derivative at 0.7 is 0.7749142079590942 (PyTorch 2.13's nested func.jvp gives -0.3849)
    def f(t):
        x = gradwalk.stack((t, gradwalk.zeros((), dtype=t.dtype))).reshape(1, 2)
        w = gradwalk.tensor([1.0, 2.0], dtype=t.dtype)
        return gradwalk.nn.functional.layer_norm(x, [2], w, gradwalk.zeros(2, dtype=t.dtype), eps=0.25).sum()

    def first(t):
        return gradwalk.func.jvp(f, (t,), (gradwalk.ones_like(t),))[1]

    t = gradwalk.tensor(0.7, dtype=gradwalk.float64)
    second = gradwalk.func.jvp(first, (t,), (gradwalk.ones_like(t),))[1]
    assert abs(second.item() - 0.7749142079590942) < 1e-12
